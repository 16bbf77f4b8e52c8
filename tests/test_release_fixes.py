"""The release opens the hand fully and physics trouble during it is not a stuck object.

Three defects of the release phase (issue 27, item 2), each with a test that fails on the code
before the fix:

* an extra finger closure (refine's, replay.protocol.finger_closure) was held at weight 1 through
  the release, so a refined hand opened only to its pre-grasp pose *plus* the closure;
* pad compression blended into the hand coords could reach the first replayed frame (a window
  shorter than ``pad_blend_s``), and the release opened to that compressed pose;
* physics trouble during the release cut the trace, the fall came up short of the need, and a
  lifted object became ``stuck`` against the rule that trouble after the hand opened leaves the
  verdicts before it (measures.measure_world).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.kinematics.hand_layout import finger_quats
from replay.protocol import finger_closure, measures
from replay.protocol.lift_plan import plan_rollout
from replay.protocol.plan import PHASE_APPROACH, PHASE_HOLD, PHASE_LIFT, PHASE_RELEASE, PHASE_SETTLE
from replay.protocol.rollout import build_replay_scene
from replay.sim.engine.variants import Variant
from replay.sim.engine.mujoco_c.mjc import MjcBatch


def _same_rotation(a: np.ndarray, b: np.ndarray, tol: float = 1e-9) -> bool:
    """(..., 4) xyzw quaternions equal up to sign."""
    return bool(np.all(np.abs(np.abs(np.sum(a * b, axis=-1)) - 1.0) < tol))


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


@pytest.mark.needs_data
def test_extra_closure_ends_with_the_release(window, capsule_rhand):
    """10 deg more per finger (a refine correction): held through lift and hold, gone by the end of
    the opening: the opened targets are the recorded pre-grasp pose (the plan's first frame)."""
    rec, coords = window
    cfg = ReplayConfig(**SHORT).replace(lift={"shake_s": 0.0})
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    batch = MjcBatch(scene, [Variant(), Variant(finger_closure=(np.radians(10.0),) * 5)])
    tg = finger_closure.world_finger_targets(plan, batch, cfg)
    rel = np.flatnonzero(plan.phase == PHASE_RELEASE)
    n_open = int(np.ceil(cfg.lift.release_s / cfg.frame_dt))
    open_pose = finger_quats(plan.coords[0])
    assert not _same_rotation(tg[1, rel[0] - 1], tg[0, rel[0] - 1], 1e-6)  # closed further before the release
    for k in rel[n_open - 1:]:  # from the end of the opening on: exactly the pre-grasp pose, as without closure
        assert _same_rotation(tg[1, k], open_pose) and _same_rotation(tg[0, k], open_pose)


@pytest.mark.needs_data
def test_pad_compression_ends_with_the_release(window, capsule_rhand):
    """A 0.2 s window (shorter than the 0.25 s blend): the first replayed frame already carries part
    of the compression; the release opens to the recorded (uncompressed) first frame. 6 mm: the index
    sits 4.2 mm inside the cube at the grasp frame on this window (closed further), the thumb 10 mm."""
    rec, coords = window
    cfg = ReplayConfig(**dict(SHORT, approach_window_s=0.2), physics_overrides={"pad_compression": 6.0}).replace(lift={"shake_s": 0.0})
    plan, _, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    assert plan.pad["fingers_closed"] == ["index"]  # the compression closed a finger ...
    raw0 = finger_quats(plan_rollout(rec, coords, cfg).coords[0])
    assert not _same_rotation(finger_quats(plan.coords[0]), raw0, 1e-8)  # ... and reaches the first frame
    assert _same_rotation(finger_quats(plan.coords[-1]), raw0)


def _synthetic(trouble_at: int | None):
    """A lifted 4 cm cube (origin 2 cm above the support at rest) traced by hand: settle 5, approach 5,
    lift 10 frames (6 cm), hold 5, release 30 frames; once the hand opens the object falls
    0.25 k^2 cm by the release's k-th frame (1 cm by the 2nd) to the support; ``trouble_at``: the release frame a physics fault stopped the world at (None: it ran on and
    the cube fell to the support)."""
    ph = np.array([PHASE_SETTLE] * 5 + [PHASE_APPROACH] * 5 + [PHASE_LIFT] * 10 + [PHASE_HOLD] * 5
                  + [PHASE_RELEASE] * 30)
    F, s = len(ph), 25
    z = np.full(F, 0.02)
    z[10:20] = 0.02 + np.linspace(0.006, 0.06, 10)
    z[20:s] = 0.08
    z[s:] = np.maximum(0.08 - 0.0025 * np.arange(1, F - s + 1) ** 2, 0.02)  # falls once the hand opens
    bp = np.zeros((F, 17, 3), np.float32)
    bp[:, 0, 2] = np.where(np.arange(F) < s, z + 0.05, 0.13)  # the wrist carries it, then holds
    bp[:, -1, 2] = z
    bq = np.tile(np.array([0, 0, 0, 1], np.float32), (F, 17, 1))
    done = F if trouble_at is None else s + trouble_at
    bp[done:], bq[done:] = np.nan, np.nan
    tr = measures.Trace(body_pos=bp, body_quat=bq, ccount=np.full(F, 4), wrist_err=np.full(F, 1e-3),
                        normal_force=np.full(F, 5.0), friction_force=np.full(F, 5.0), done=done,
                        bad_frame=None if trouble_at is None else done, contacts_at_lift=4, contacts_force_at_lift=4)
    cube = np.array([[x, y, w] for x in (-0.02, 0.02) for y in (-0.02, 0.02) for w in (-0.02, 0.02)])
    scene = SimpleNamespace(object_vertices=cube, object_mass=0.05)
    world = SimpleNamespace(reason=None if trouble_at is None else "non-finite qacc", variant=Variant(),
                            peak_contacts=4, act_max=0.3)
    plan = SimpleNamespace(phase=ph, coords=np.zeros((F, 67)))
    cfg = ReplayConfig(lift={"lift_height": 0.06, "lifted_min_rise": 0.03, "shake_s": 0.0})
    return measures.measure_world(SimpleNamespace(support_height=0.0), plan, scene, cfg=cfg, tr=tr, world=world)


def test_trouble_during_the_release_keeps_the_verdicts_before_it():
    ok = _synthetic(None)
    assert ok["lifted"] and ok["stuck_after_release"] is False and ok["release_unstable"] is None
    m = _synthetic(2)  # stopped 2 frames into the opening, the cube 1 cm down of the 3 cm it needs
    assert m["release_fall_m"] == pytest.approx(0.01, abs=1e-6) and m["release_fall_needed_m"] == pytest.approx(0.03)
    assert m["stable"] and m["lifted"] and m["outcome"] == "lifted"  # the lift and hold stand
    assert m["stuck_after_release"] is None  # not judged: the trace ends before it could fall
    assert m["release_ran"] and m["release_unstable"] == "frame 27: non-finite qacc"  # and said
    assert (m["diagnosis"] or {}).get("class") != "stuck_after_release"
    late = _synthetic(7)  # 7 frames in: it fell to the support (6 cm > 3 cm) before the fault: judged
    assert late["stuck_after_release"] is False and late["lifted"] and late["release_unstable"]
