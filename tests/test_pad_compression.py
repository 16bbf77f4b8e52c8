"""Finger pad compression (replay.protocol.pad_compression) on the short cubesmall window, close only (the physics
choice ``pad_deep_fingers`` ``as_recorded``, both tables' value): the plan's, and each
world's own (a sampled depth; a corrupted take's fingers). The opening: tests/test_pad_opening.py.

The geometry is re-derived independently of the solver: the capsules' world poses from
MuJoCo's own forward kinematics of the capsule MJCF (``mj_kinematics``), and the signed
distance of each capsule to the object's convex collision parts from trimesh (points along
the capsule axis, 65 per capsule; trimesh's sign is positive inside), not the solver's
face planes.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import trimesh
from hand_qpos import mujoco_qpos
from scipy.spatial.transform import Rotation
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.kinematics.hand_layout import finger_quats
from replay.kinematics.model import HandKinematics
from replay.protocol.pad_compression import FINGERS
from replay.protocol.plan import PHASE_APPROACH
from replay.protocol.rollout import build_replay_scene, run_rollouts
from replay.sim.engine.variants import Variant
from replay.sim.world_builder import load_collision_parts

pytestmark = pytest.mark.needs_data

#: on this window the index and thumb already sit 3.6-10 mm inside the cube (the capsules of the
#: recorded hand overlap the object: most GRAB fingers do), so the test asks for 6 mm, and
#: looks 40 mm out so that the middle finger (33 mm off) is tried too
DEPTH_MM = 6.0
NEAR_MM = 40.0
#: the solver's face-plane distance is a lower bound at hull edges and samples 9 points per
#: capsule axis, so a closed finger may stop short of, or a little past, the depth (measured
#: on this window: within 0.3 mm)
TOL_MM = 0.5
#: close only: fingers deeper than the depth left as recorded
CLOSE_ONLY = {"pad_deep_fingers": "as_recorded"}


@pytest.fixture(scope="module")
def compressed(grab_dir, capsule_rhand):
    """(recording, plan coords without and with the compression (F, 67), its summary, config, plan)."""
    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT, physics_overrides={"pad_compression": DEPTH_MM, **CLOSE_ONLY}).replace(
        lift={"pad_near_mm": NEAR_MM}
    )
    plan = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)[0]
    raw = plan.coords.copy()
    raw[:, 7:] = plan.pad_plan.raw.reshape(len(raw), -1)
    return rec, raw, plan.coords, plan.pad, cfg, plan


def _capsule_distances_mm(mjcf, rec, hand_coords) -> dict[int, float]:
    """Signed distance, mm, of each finger body's capsule to the object at the grasp frame."""
    kin = HandKinematics.from_mjcf(mjcf)
    m = mujoco.MjModel.from_xml_path(str(mjcf))
    d = mujoco.MjData(m)
    d.qpos[:] = mujoco_qpos(kin, m, hand_coords[:3], hand_coords[3:7], finger_quats(hand_coords))
    mujoco.mj_kinematics(m, d)
    g = int(rec.grasp_frame)
    obj = rec.target_object
    R = Rotation.from_quat(obj.quat[g])
    hulls = [trimesh.Trimesh(R.apply(v) + obj.pos[g], f).convex_hull for v, f in load_collision_parts(obj.asset)]
    out = {}
    for b in range(1, 16):
        bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"mano_body_{b}")
        gid = [
            i for i in range(m.ngeom) if m.geom_bodyid[i] == bid and m.geom_type[i] == mujoco.mjtGeom.mjGEOM_CAPSULE
        ][0]
        r, half = m.geom_size[gid][:2]
        axis = d.geom_xmat[gid].reshape(3, 3)[:, 2]
        pts = d.geom_xpos[gid] + np.outer(np.linspace(-half, half, 65), axis)
        sd = min(float(np.min(-trimesh.proximity.signed_distance(h, pts))) for h in hulls)
        out[b] = (sd - r) * 1000.0
    return out


def test_closed_fingers_reach_the_surface_minus_the_depth(compressed, capsule_rhand):
    rec, raw, out, summary, cfg, plan = compressed
    g = plan.pad_plan.grasp_at
    assert g == np.flatnonzero(plan.phase == PHASE_APPROACH)[-1]
    assert summary["depth_mm"] == DEPTH_MM and summary["fingers_closed"], summary
    after = _capsule_distances_mm(capsule_rhand, rec, out[g])
    before = _capsule_distances_mm(capsule_rhand, rec, raw[g])
    for name in summary["fingers_closed"]:
        pad = min(after[b] for b in FINGERS[name][1:])  # the nearer of its middle and distal capsules
        assert pad == pytest.approx(-DEPTH_MM, abs=TOL_MM), (name, pad)
        assert min(before[b] for b in FINGERS[name][1:]) > pad  # it closed onto the object
        f = summary["fingers"][name]
        assert 0 < f["closure_deg"] <= cfg.lift.pad_max_deg and max(abs(x) for x in f["joint_deg"]) > 0
    for name, f in summary["fingers"].items():
        if f["status"] == "already":  # already at least the depth inside: left as recorded
            assert min(after[b] for b in FINGERS[name][1:]) <= -DEPTH_MM + TOL_MM


def test_far_fingers_and_early_frames_are_unchanged(compressed, capsule_rhand):
    rec, raw, out, summary, cfg, plan = compressed
    before = _capsule_distances_mm(capsule_rhand, rec, raw[plan.pad_plan.grasp_at])
    qa, qb = finger_quats(raw), finger_quats(out)
    for name, bodies in FINGERS.items():
        # the solver's outside distance is a lower bound (face planes; at a hull corner down to 1/sqrt(3) of
        # the Euclidean one), so a finger truly within pad_near_mm is never "far", one past sqrt(3) x it always is
        near = min(before[b] for b in bodies)
        if near < cfg.lift.pad_near_mm - TOL_MM:
            assert summary["fingers"][name]["status"] != "far", name
        if near > np.sqrt(3) * cfg.lift.pad_near_mm:
            assert summary["fingers"][name]["status"] == "far", name
        if summary["fingers"][name]["status"] != "closed":
            assert np.array_equal(qa[:, [b - 1 for b in bodies]], qb[:, [b - 1 for b in bodies]]), name
    # the wrist is never moved; frames before the blend window are as recorded, and the release's end too
    assert np.array_equal(raw[:, :7], out[:, :7])
    w = plan.pad_plan.weight
    assert np.array_equal(raw[w == 0], out[w == 0]) and w[0] == 0 and w[-1] == 0 and w.max() == 1.0


def test_each_world_closes_at_its_own_depth_and_pose(compressed, grab_dir, capsule_rhand):
    """A world's sampled depth (``Variant.pad_depth_mm``) moves only the fingers near the object (those its depth
    closes, never a far one) and reaches that depth; a world whose fingers a corruption opened 20 deg
    (``finger_closure``) is solved on its opened pose: a finger now farther than ``pad_near_mm`` is not closed."""
    from types import SimpleNamespace

    from replay.protocol.finger_closure import world_finger_targets
    from replay.sim.engine.layout import MjLayout

    rec, raw, out, summary, cfg, plan = compressed
    scene = build_replay_scene(rec, short_window(grab_dir, capsule_rhand)[1], capsule_rhand, cfg=cfg)[1]
    variants = (Variant(), Variant(pad_depth_mm=2.0), Variant(finger_closure=(-np.radians(20),) * 5))
    batch = SimpleNamespace(
        worlds=[SimpleNamespace(variant=v) for v in variants], scene=scene, layout=MjLayout.from_scene(scene)
    )
    t = world_finger_targets(plan, batch, cfg)
    assert np.array_equal(t[0], finger_quats(plan.coords))  # the plan's own world: its targets
    two, res2 = plan.pad_plan.compressed(2.0)
    assert np.array_equal(t[1], two)
    moved = [
        n
        for n, b in FINGERS.items()
        if not np.array_equal(t[1][:, [i - 1 for i in b]], plan.pad_plan.raw[:, [i - 1 for i in b]])
    ]
    near = [n for n, f in summary["fingers"].items() if f["status"] != "far"]
    assert set(moved) <= set(near) and set(moved) == set(res2["fingers_closed"])
    g = plan.pad_plan.grasp_at
    after = _capsule_distances_mm(capsule_rhand, rec, np.concatenate([raw[g, :7], t[1][g].reshape(-1)]))
    for name in res2["fingers_closed"]:
        assert min(after[b] for b in FINGERS[name][1:]) == pytest.approx(-2.0, abs=TOL_MM)
    opened = plan.pad_plan.solve(DEPTH_MM, t[2])[0]
    before = _capsule_distances_mm(capsule_rhand, rec, np.concatenate([raw[g, :7], t[2][g].reshape(-1)]))
    for name, bodies in FINGERS.items():
        if min(before[b] for b in bodies) > np.sqrt(3) * cfg.lift.pad_near_mm:
            assert opened["fingers"][name]["status"] == "far", name


def test_the_rollout_reports_the_joint_change(grab_dir, capsule_rhand):
    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT, physics_overrides={"pad_compression": DEPTH_MM, **CLOSE_ONLY}).replace(
        lift={"shake_s": 0.0}
    )
    m = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=[Variant()])[0].metrics
    p = m["pad_compression"]
    assert p["depth_mm"] == DEPTH_MM and set(p["fingers"]) == set(FINGERS) and p["deep_fingers"] == "as_recorded"
    assert p["max_joint_change_deg"] == max(abs(x) for f in p["fingers"].values() for x in f["joint_deg"])
    assert m["lifted"]  # the preloaded grasp still lifts the cube
    off = run_rollouts(
        rec,
        coords,
        capsule_rhand,
        cfg=ReplayConfig(**SHORT, physics_overrides={"pad_compression": 0.0}).replace(lift={"shake_s": 0.0}),
        variants=[Variant()],
        frame_limit=3,
    )
    assert "pad_compression" not in off[0].metrics  # depth 0: the recorded fingers
    on = run_rollouts(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT).replace(lift={"shake_s": 0.0}), variants=[Variant()], frame_limit=3)
    assert on[0].metrics["pad_compression"]["depth_mm"] == 3.0  # the replay physics' default (physics table)
    assert on[0].metrics["pad_compression"]["deep_fingers"] == "as_recorded"  # the replay physics' pad_deep_fingers
    rows = {r["name"]: r for r in on[0].metrics["physics"]}
    assert rows["pad_deep_fingers"]["value"] == "as_recorded"
    opened = ReplayConfig(**SHORT, physics_overrides={"pad_deep_fingers": "opened"}).replace(lift={"shake_s": 0.0})
    op = run_rollouts(rec, coords, capsule_rhand, cfg=opened, variants=[Variant()], frame_limit=3)[0].metrics
    assert op["pad_compression"]["deep_fingers"] == "opened"  # the departure runs and says so in its record
    rows = {r["name"]: r for r in op["physics"]}
    assert rows["pad_deep_fingers"]["value"] == "opened" and "--physics-set" in rows["pad_deep_fingers"]["source"]


def test_close_only_is_the_grasp_frame_closure_blended(compressed):
    """Close only (``pad_deep_fingers=as_recorded``): each closed finger's targets are the recorded ones turned by the
    grasp frame's closure (:meth:`PadPlan.solve`, post-multiplied) times the blend weight, at
    every frame, bit for bit with scipy's rotation product; no finger is opened and the summary says so."""
    rec, raw, out, summary, cfg, plan = compressed
    pad = plan.pad_plan
    assert pad.seat is None and summary["deep_fingers"] == "as_recorded"
    assert all(f["closure_deg"] >= 0 and f["status"] != "opened" for f in summary["fingers"].values())
    _, rv = pad.solve(DEPTH_MM)
    q = finger_quats(out)
    for name in summary["fingers_closed"]:
        j = [b - 1 for b in FINGERS[name]]
        for k in np.flatnonzero(pad.weight > 0):
            want = (Rotation.from_quat(pad.raw[k, j]) * Rotation.from_rotvec(rv[j] * pad.weight[k])).as_quat()
            assert np.array_equal(q[k, j], want), (name, k)
