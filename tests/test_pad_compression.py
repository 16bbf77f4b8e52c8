"""Finger pad compression (replay.protocol.pad_compression) on the short cubesmall window.

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
from scipy.spatial.transform import Rotation
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.kinematics.hand_layout import finger_quats
from replay.kinematics.model import HandKinematics
from replay.protocol.pad_compression import FINGERS, compress_coords
from replay.protocol.plan import replayed_frames
from replay.protocol.rollout import run_rollouts
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


@pytest.fixture(scope="module")
def compressed(grab_dir, capsule_rhand):
    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT, pad_compression_mm=DEPTH_MM, pad_near_mm=NEAR_MM)
    first = replayed_frames(rec, coords, cfg.approach_window_s, int(rec.grasp_frame) + 1)[2]
    out, summary = compress_coords(rec, coords, capsule_rhand, cfg, first)
    return rec, coords, out, summary, cfg


def _capsule_distances_mm(mjcf, rec, hand_coords) -> dict[int, float]:
    """Signed distance, mm, of each finger body's capsule to the object at the grasp frame."""
    kin = HandKinematics.from_mjcf(mjcf)
    m = mujoco.MjModel.from_xml_path(str(mjcf))
    d = mujoco.MjData(m)
    d.qpos[:] = kin.mujoco_qpos(m, hand_coords[:3], hand_coords[3:7], finger_quats(hand_coords))
    mujoco.mj_kinematics(m, d)
    g = int(rec.grasp_frame)
    obj = rec.target_object
    R = Rotation.from_quat(obj.quat[g])
    hulls = [trimesh.Trimesh(R.apply(v) + obj.pos[g], f).convex_hull for v, f in load_collision_parts(obj.asset)]
    out = {}
    for b in range(1, 16):
        bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"mano_body_{b}")
        gid = [i for i in range(m.ngeom) if m.geom_bodyid[i] == bid and m.geom_type[i] == mujoco.mjtGeom.mjGEOM_CAPSULE][0]
        r, half = m.geom_size[gid][:2]
        axis = d.geom_xmat[gid].reshape(3, 3)[:, 2]
        pts = d.geom_xpos[gid] + np.outer(np.linspace(-half, half, 65), axis)
        sd = min(float(np.min(-trimesh.proximity.signed_distance(h, pts))) for h in hulls)
        out[b] = (sd - r) * 1000.0
    return out


def test_closed_fingers_reach_the_surface_minus_the_depth(compressed, capsule_rhand):
    rec, coords, out, summary, cfg = compressed
    g = int(rec.grasp_frame)
    assert summary["depth_mm"] == DEPTH_MM and summary["fingers_closed"], summary
    after = _capsule_distances_mm(capsule_rhand, rec, out[g])
    before = _capsule_distances_mm(capsule_rhand, rec, coords[g])
    for name in summary["fingers_closed"]:
        pad = min(after[b] for b in FINGERS[name][1:])  # the nearer of its middle and distal capsules
        assert pad == pytest.approx(-DEPTH_MM, abs=TOL_MM), (name, pad)
        assert min(before[b] for b in FINGERS[name][1:]) > pad  # it closed onto the object
        f = summary["fingers"][name]
        assert 0 < f["closure_deg"] <= cfg.pad_max_deg and max(abs(x) for x in f["joint_deg"]) > 0
    for name, f in summary["fingers"].items():
        if f["status"] == "already":  # already at least the depth inside: left as recorded
            assert min(after[b] for b in FINGERS[name][1:]) <= -DEPTH_MM + TOL_MM


def test_far_fingers_and_early_frames_are_unchanged(compressed, capsule_rhand):
    rec, coords, out, summary, cfg = compressed
    before = _capsule_distances_mm(capsule_rhand, rec, coords[int(rec.grasp_frame)])
    qa, qb = finger_quats(coords), finger_quats(out)
    for name, bodies in FINGERS.items():
        # the solver's outside distance is a lower bound (face planes; at a hull corner down to 1/sqrt(3) of
        # the Euclidean one), so a finger truly within pad_near_mm is never "far", one past sqrt(3) x it always is
        near = min(before[b] for b in bodies)
        if near < cfg.pad_near_mm - TOL_MM:
            assert summary["fingers"][name]["status"] != "far", name
        if near > np.sqrt(3) * cfg.pad_near_mm:
            assert summary["fingers"][name]["status"] == "far", name
        if summary["fingers"][name]["status"] != "closed":
            assert np.array_equal(qa[:, [b - 1 for b in bodies]], qb[:, [b - 1 for b in bodies]]), name
    # the wrist is never moved, and frames before the blend window are as recorded
    assert np.array_equal(coords[:, :7], out[:, :7])
    early = rec.time < rec.time[int(rec.grasp_frame)] - cfg.pad_blend_s
    assert np.array_equal(coords[early], out[early])


def test_the_rollout_reports_the_joint_change(grab_dir, capsule_rhand):
    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT, pad_compression_mm=DEPTH_MM, shake_s=0.0)
    m = run_rollouts(rec, coords, capsule_rhand, cfg, [Variant()])[0].metrics
    p = m["pad_compression"]
    assert p["depth_mm"] == DEPTH_MM and set(p["fingers"]) == set(FINGERS)
    assert p["max_joint_change_deg"] == max(abs(x) for f in p["fingers"].values() for x in f["joint_deg"])
    assert m["lifted"]  # the preloaded grasp still lifts the cube
    off = run_rollouts(rec, coords, capsule_rhand, ReplayConfig(**SHORT, shake_s=0.0), [Variant()], frame_limit=3)
    assert "pad_compression" not in off[0].metrics  # off by default: the rollout is as before
