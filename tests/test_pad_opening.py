"""Every near finger at the pad's compression depth, not deeper (the physics choice ``pad_deep_fingers`` ``opened``:
replay.protocol.pad_depth_table through PadPlan) on the short cubesmall window.

The geometry is re-derived independently of the table: the capsules' world poses from MuJoCo's own forward
kinematics of the capsule MJCF (``mj_kinematics``), the object at its recorded pose interpolated at each control
frame's recorded time, and each capsule's signed distance to the object's convex collision parts from trimesh (65
points along the capsule axis; trimesh's sign is positive inside); the hand at the grasp frame also through
:func:`replay.protocol.grasp_penetration.grasp_penetration` (the solver's SDF, all 15 finger capsules).
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest
import trimesh
from hand_qpos import mujoco_qpos
from scipy.spatial.transform import Rotation, Slerp
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.kinematics.hand_layout import finger_quats
from replay.kinematics.model import HandKinematics
from replay.protocol import release
from replay.protocol.finger_closure import closed_targets, flexion_axes, ramp
from replay.protocol.grasp_penetration import grasp_penetration
from replay.protocol.lift_plan import plan_rollout, recorded_times
from replay.protocol.pad_compression import DEEP_FINGERS, FINGERS, PadPlan
from replay.protocol.pad_depth_table import DEPTH_MAX, GRID_STEP, DepthTable
from replay.protocol.plan import PHASE_APPROACH, replayed_frames
from replay.protocol.protocols.base import protocol_named
from replay.results.physics_table import VALUES
from replay.sim import physics
from replay.sim.world_builder import load_collision_parts

#: on this window the index pad sits 4.2 mm inside the cube at the grasp frame and the thumb's 10 mm: at 6 mm the
#: index is closed and the thumb opened
DEPTH_MM = 6.0
#: the solver's face-plane distance is a lower bound at hull edges and samples 9 points per capsule axis; trimesh
#: samples 65 (as tests/test_pad_compression.py)
TOL_MM = 0.5


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    """(recording, coords, config, plan, PadPlan with the opening) on the short window, the plan as the rollout
    builds it (release appended)."""
    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT)
    plan = plan_rollout(rec, coords, cfg)
    plan = release.extend_plan(plan, plan.coords[0], cfg.frame_dt, release_s=cfg.lift.release_s, fall_s=cfg.lift.release_fall_s)
    pad = PadPlan.build(rec, coords, capsule_rhand, cfg=cfg, plan=plan, depth_mm=DEPTH_MM, open_deep=True)
    return rec, coords, cfg, plan, pad


class Geometry:
    """Independent re-derivation: signed distance, mm, of each finger body's capsule (1..15) to the object."""

    def __init__(self, mjcf, rec):
        self.kin = HandKinematics.from_mjcf(mjcf)
        self.m = mujoco.MjModel.from_xml_path(str(mjcf))
        self.d = mujoco.MjData(self.m)
        self.parts = load_collision_parts(rec.target_object.asset)
        obj = rec.target_object
        self.pos = [lambda t, i=i: np.interp(t, rec.time, obj.pos[:, i]) for i in range(3)]
        self.rot = Slerp(rec.time, Rotation.from_quat(obj.quat))

    def distances(self, hand: np.ndarray, t: float) -> dict[int, float]:
        """{body: signed distance mm} of hand coords (67,) against the object at recorded time ``t`` s."""
        m, d = self.m, self.d
        d.qpos[:] = mujoco_qpos(self.kin, m, hand[:3], hand[3:7], finger_quats(hand))
        mujoco.mj_kinematics(m, d)
        R, p = self.rot(t), np.array([f(t) for f in self.pos])
        hulls = [trimesh.Trimesh(R.apply(v) + p, f).convex_hull for v, f in self.parts]
        out = {}
        for b in range(1, 16):
            bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"mano_body_{b}")
            gid = [i for i in range(m.ngeom) if m.geom_bodyid[i] == bid and m.geom_type[i] == 3][0]  # capsule
            r, half = m.geom_size[gid][:2]
            pts = d.geom_xpos[gid] + np.outer(np.linspace(-half, half, 65), d.geom_xmat[gid].reshape(3, 3)[:, 2])
            out[b] = (min(float(np.min(-trimesh.proximity.signed_distance(h, pts))) for h in hulls) - r) * 1000.0
        return out


def _pad(dist: dict, name: str) -> float:
    return min(dist[b] for b in FINGERS[name][1:])  # the deeper of its middle and distal capsules


def _hand(plan, fingers, k) -> np.ndarray:
    return np.concatenate([plan.coords[k, :7], np.asarray(fingers[k]).reshape(-1)])


@pytest.mark.needs_data
def test_opened_and_closed_fingers_end_at_the_depth(window, capsule_rhand):
    """At the grasp frame a near finger deeper than the depth is opened to it, a shallower one closed to it, and the
    hand's deepest finger capsule (grasp_penetration, all 15) is the depth."""
    rec, coords, cfg, plan, pad = window
    out, res = pad.compressed(DEPTH_MM)
    geo, at = Geometry(capsule_rhand, rec), pad.grasp_at
    t = float(rec.time[rec.grasp_frame])
    before, after = geo.distances(_hand(plan, pad.raw, at), t), geo.distances(_hand(plan, out, at), t)
    statuses = {n: f["status"] for n, f in res["fingers"].items()}
    assert statuses["thumb"] == "opened" and statuses["index"] == "closed", statuses
    for name, f in res["fingers"].items():
        if min(before[b] for b in FINGERS[name]) > np.sqrt(3) * cfg.lift.pad_near_mm:
            assert f["status"] == "far", name
        if f["status"] not in ("opened", "closed"):
            continue
        b = _pad(before, name)
        assert (b < -DEPTH_MM) == (f["status"] == "opened") and (f["closure_deg"] < 0) == (f["status"] == "opened")
        assert _pad(after, name) == pytest.approx(-DEPTH_MM, abs=TOL_MM), (name, b, _pad(after, name))
    assert res["fingers_opened"] == ["thumb"] and res["fingers_closed"] == ["index"]
    assert res["max_opening_deg"] >= -res["fingers"]["thumb"]["closure_deg"] > 0
    c = coords.copy()
    c[rec.grasp_frame, 7:] = out[at].reshape(-1)
    assert np.array_equal(c[rec.grasp_frame, :7], plan.coords[at, :7])  # the plan's grasp row is the recorded frame
    pen = grasp_penetration(rec, c, capsule_rhand)
    assert pen["depth_mm"] == pytest.approx(DEPTH_MM, abs=TOL_MM) and pen["deepest_body"] in (
        2,
        3,
        5,
        6,
        8,
        9,
        11,
        12,
        14,
        15,
    )
    assert grasp_penetration(rec, coords, capsule_rhand)["depth_mm"] > DEPTH_MM + 3.0  # the recorded hand: deeper


@pytest.mark.needs_data
def test_no_finger_deeper_than_the_depth_over_the_approach(window, capsule_rhand):
    """Over the approach no pad is deeper than the depth: a pad the recording puts deeper is opened to the depth
    (a little less where a deeper frame follows within the rate limit: never deeper), the opening changes by at most
    the rate per control frame (the blend's largest: pad_max_deg over pad_blend_s recorded), and a finger never
    deeper stays as recorded before the blend's window, bit for bit."""
    rec, coords, cfg, plan, pad = window
    out, res = pad.compressed(DEPTH_MM)
    geo = Geometry(capsule_rhand, rec)
    times = replayed_frames(rec, coords, cfg.approach_window_s, stop=rec.grasp_frame + 1)[0]
    t = recorded_times(plan, times, cfg)
    app = np.flatnonzero(plan.phase == PHASE_APPROACH)
    at_depth = dict.fromkeys(FINGERS, 0)
    for k in app[::2].tolist() + [int(app[-1])]:
        before, after = geo.distances(_hand(plan, pad.raw, k), t[k]), geo.distances(_hand(plan, out, k), t[k])
        for name, bodies in FINGERS.items():
            assert _pad(after, name) >= -DEPTH_MM - TOL_MM, (k, name)
            if _pad(before, name) < -DEPTH_MM - TOL_MM:
                assert _pad(after, name) > _pad(before, name), (k, name)
                at_depth[name] += abs(_pad(after, name) + DEPTH_MM) <= TOL_MM
            elif pad.weight[k] == 0 and _pad(before, name) > -DEPTH_MM + TOL_MM:
                j = [b - 1 for b in bodies]
                assert np.array_equal(out[k, j], pad.raw[k, j]) or _pad(after, name) > _pad(before, name), (k, name)
    assert at_depth["thumb"] >= 3  # the thumb is at the depth over several approach frames, not only at the grasp
    rate_deg = cfg.lift.pad_max_deg * cfg.frame_dt * cfg.replay_speed / cfg.lift.pad_blend_s
    angle = np.degrees((Rotation.from_quat(out[:, 12]) * Rotation.from_quat(pad.raw[:, 12]).inv()).magnitude())
    assert np.max(np.abs(np.diff(angle[: pad.grasp_at + 1]))) <= rate_deg + 1e-6  # the thumb's first joint


@pytest.mark.needs_data
def test_far_fingers_and_the_wrist_are_untouched(window, capsule_rhand):
    """A finger never within pad_near_mm of the object (re-derived at every approach frame; the solver's face-plane
    distance is a lower bound, so past sqrt(3) x pad_near_mm) keeps its recorded targets at every frame, bit for bit."""
    rec, coords, cfg, plan, pad = window
    out, res = pad.compressed(DEPTH_MM)
    geo = Geometry(capsule_rhand, rec)
    times = replayed_frames(rec, coords, cfg.approach_window_s, stop=rec.grasp_frame + 1)[0]
    t = recorded_times(plan, times, cfg)
    app = np.flatnonzero(plan.phase == PHASE_APPROACH)
    nearest = {n: np.inf for n in FINGERS}
    for k in app[::3].tolist() + [int(app[-1])]:
        dist = geo.distances(_hand(plan, pad.raw, k), t[k])
        nearest = {n: min(nearest[n], min(dist[b] for b in FINGERS[n])) for n in FINGERS}
    # 3 frames apart: ~3 mm of motion
    far = [n for n in FINGERS if nearest[n] > np.sqrt(3) * cfg.lift.pad_near_mm + 3.0]
    assert {"middle", "ring", "pinky"} <= set(far)
    for name in far:
        j = [b - 1 for b in FINGERS[name]]
        assert res["fingers"][name]["status"] == "far" and res["fingers"][name]["opening_max_deg"] == 0
        assert np.array_equal(out[:, j], pad.raw[:, j]), name


@pytest.mark.needs_data
def test_a_corrupted_take_is_solved_on_its_own_pose(window, capsule_rhand, grab_dir):
    """The fingers opened 20 deg (the corruption fingers_open_20deg) are solved on their opened pose: its own
    distances (re-derived), its own table; a finger the opening took out of reach stays opened (the corruption
    remains), and each depth is read from one table per pose."""
    rec, coords, cfg, plan, pad = window
    m = mujoco.MjModel.from_xml_path(str(capsule_rhand))
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"mano_body_{b}") for b in range(16)]
    axes = flexion_axes(np.asarray(m.body_pos)[ids])
    opened = closed_targets(
        pad.raw, (-np.radians(20.0),) * 5, axes, weight=ramp(plan, cfg.replay_speed, cfg.frame_dt, release_s=cfg.lift.release_s)
    )
    real, res_real = pad.compressed(DEPTH_MM)
    out, res = pad.compressed(DEPTH_MM, opened)
    pad.compressed(2.0, opened)
    assert len(pad._tables) == 2  # the real pose's and the corrupted pose's, each read at every depth
    geo, at = Geometry(capsule_rhand, rec), pad.grasp_at
    before = geo.distances(_hand(plan, opened, at), float(rec.time[rec.grasp_frame]))
    for name, f in res["fingers"].items():  # its own pose's distance (outside, the face planes' is a lower bound)
        assert _pad(before, name) / np.sqrt(3) - TOL_MM <= f["before_mm"] <= _pad(before, name) + TOL_MM, name
    assert res_real["fingers"]["thumb"]["status"] == "opened" and res["fingers"]["thumb"]["status"] == "far"
    j = [b - 1 for b in FINGERS["thumb"]]
    assert np.array_equal(out[at, j], opened[at, j])  # out of reach: kept opened, not closed back to the real grasp
    assert _pad(before, "thumb") > res_real["fingers"]["thumb"]["after_mm"] + 10.0


def test_the_table_reads_any_depth():
    """DepthTable.angles on a table whose pad depth is linear in the angle (1 mm per grid step, closing deeper):
    the crossing is exact; none within the grid: NaN opening, +inf closing; depth past DEPTH_MAX is refused."""
    n = 30
    grid = np.arange(-n, n + 1) * GRID_STEP
    slope = -0.001 / GRID_STEP  # m per rad: 1 mm deeper per step closed
    pad0 = np.array([[-0.008, -0.002, 0.004, -0.050, 0.020]])  # (K=1, 5) m
    pad = pad0[..., None] + slope * grid
    t = DepthTable(grid=grid, pad=pad, pad0=pad0, near=np.zeros((1, 5)))
    a = t.angles(0.003) / GRID_STEP
    assert a[0, :3] == pytest.approx([-5.0, 1.0, 7.0])  # opened 5 steps, closed 1 and 7
    assert np.isnan(a[0, 3])  # 50 mm inside: 30 steps open do not reach 3 mm
    assert a[0, 4] == pytest.approx(23.0)
    pad[0, 4, n + 1 :] = np.inf  # never tabulated on its closing side: never closed
    assert np.isinf(DepthTable(grid, pad, pad0, np.zeros((1, 5))).angles(0.003)[0, 4])
    with pytest.raises(ValueError, match="pad depth"):
        t.angles(DEPTH_MAX + 0.001)


@pytest.mark.needs_data
def test_the_physics_choice_opens_deep_fingers_only_where_set(window, capsule_rhand):
    """Through the lift protocol's plan as a study builds it: the replay physics (``pad_deep_fingers``
    ``as_recorded``) leaves the thumb, which the recording puts past the depth, bit for bit as recorded at every
    frame and closes the shallow index to the depth; ``--physics-set pad_deep_fingers=opened`` brings the thumb to the
    depth at the grasp frame (re-derived from the geometry, TOL_MM) and says so in the rollout's physics record.
    Fingers never near the object stay as recorded either way."""
    rec, coords, _, _, _ = window
    base = ReplayConfig(**SHORT, physics_overrides={"pad_compression": DEPTH_MM})
    opened = dict([physics.parse_setting("pad_deep_fingers=opened")])
    on_cfg = dataclasses.replace(base, physics_overrides={**base.physics_overrides, **opened})
    lift = protocol_named("lift")
    off, on = lift.plan(rec, coords, capsule_rhand, cfg=base), lift.plan(rec, coords, capsule_rhand, cfg=on_cfg)
    raw = off.pad_plan.raw
    assert np.array_equal(raw, on.pad_plan.raw)  # one recorded pose under both
    geo, at = Geometry(capsule_rhand, rec), off.pad_plan.grasp_at
    t = float(rec.time[rec.grasp_frame])
    q_off, q_on = finger_quats(off.coords), finger_quats(on.coords)
    recorded = geo.distances(_hand(off, raw, at), t)
    d_off, d_on = geo.distances(_hand(off, q_off, at), t), geo.distances(_hand(on, q_on, at), t)
    assert _pad(recorded, "thumb") < -DEPTH_MM - 3.0 and _pad(recorded, "index") > -DEPTH_MM + 1.0
    thumb, index = [b - 1 for b in FINGERS["thumb"]], [b - 1 for b in FINGERS["index"]]
    assert np.array_equal(q_off[:, thumb], raw[:, thumb])  # off: the deep finger as recorded, every frame
    assert off.pad["deep_fingers"] == "as_recorded" and "thumb" not in off.pad["fingers_closed"]
    assert _pad(d_on, "thumb") == pytest.approx(-DEPTH_MM, abs=TOL_MM)  # on: opened to the depth
    assert on.pad["deep_fingers"] == "opened" and on.pad["fingers_opened"] == ["thumb"]
    for d in (d_off, d_on):  # the shallow finger is closed to the depth under both
        assert _pad(d, "index") == pytest.approx(-DEPTH_MM, abs=TOL_MM)
    assert not np.array_equal(q_off[at, index], raw[at, index])
    for name in ("middle", "ring", "pinky"):  # far from the object: as recorded under both
        j = [b - 1 for b in FINGERS[name]]
        assert np.array_equal(q_off[:, j], raw[:, j]) and np.array_equal(q_on[:, j], raw[:, j]), name
    rows_off = {r["name"]: r for r in physics.physics_record(base)}["pad_deep_fingers"]
    rows_on = {r["name"]: r for r in physics.physics_record(on_cfg)}["pad_deep_fingers"]
    assert (
        rows_off["value"] == "as_recorded" and rows_off["source"] == physics.table("replay")["pad_deep_fingers"].source
    )
    assert rows_on["value"] == "opened" and rows_on["source"].startswith("--physics-set (user); 'opened': ")
    assert "departs from 'replay': 'as_recorded'" in rows_on["why"]


def test_every_deep_fingers_value_is_registered():
    """The physics choice's values are the registry's, and only ``opened`` opens a deep finger."""
    assert set(DEEP_FINGERS) == set(VALUES["pad_deep_fingers"])
    assert {n for n, d in DEEP_FINGERS.items() if d.opens} == {"opened"}
