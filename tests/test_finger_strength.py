"""Fingers as strong as people's (replay.sim.finger_strength): each joint's lever to its pad re-derived from
the MJCF text, the per-finger limits of the replay physics from the source's figures, the limits the compiled
model and a world's variant hold, and the mujoco-warp batch holding a per-joint limit per world (Warp's CPU
device)."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.kinematics.joint_levers import finger_levers
from replay.protocol.measures import one_tip_effort
from replay.sim import finger_strength, physics

#: Li 2002, J. Hand Surg. 27A(5):886-896 (abstract): maximal grip 114.9 N shared index 32.2 %, middle 32.6 %,
#: ring 23.5 %, little 11.7 %; the thumb balances the four (MANO order: index, middle, pinky, ring, thumb)
LI_2002_N = 114.9 * np.array([0.322, 0.326, 0.117, 0.235, 1.0])


def _levers_from_xml(path) -> np.ndarray:
    """(15,) joint-to-pad lever, m, read from the MJCF text with plain numpy: every manosim body
    frame is a pure translation at the reference pose (no body quat), so a point's world position
    is the sum of the body ``pos`` down the tree plus its local position; the pad is the end of the
    distal capsule's ``fromto`` farther from the distal joint."""
    root = ET.parse(path).getroot()
    anchors, pads = {}, {}

    def walk(body, origin):
        o = origin + np.array([float(v) for v in body.get("pos", "0 0 0").split()])
        assert body.get("quat") is None
        i = int(body.get("name").rsplit("_", 1)[1])
        j = body.find("joint")
        if i > 0:
            anchors[i] = o + np.array([float(v) for v in j.get("pos").split()])
            caps = [g for g in body.findall("geom") if g.get("type") == "capsule"]
            if caps:
                ft = np.array([float(v) for v in caps[0].get("fromto").split()])
                pads[i] = max((o + ft[:3], o + ft[3:]), key=lambda e: np.linalg.norm(e - anchors[i]))
        for child in body.findall("body"):
            walk(child, o)

    walk(root.find("worldbody").find("body"), np.zeros(3))
    out = np.zeros(15)
    for chain in ((1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11, 12), (13, 14, 15)):
        for b in chain:
            out[b - 1] = np.linalg.norm(pads[chain[-1]] - anchors[b])
    return out


@pytest.mark.needs_data
def test_levers_match_the_mjcf_and_shrink_along_each_finger(capsule_rhand):
    """MuJoCo's compiled levers equal the ones summed from the XML (1e-6 m); along every finger the knuckle's
    lever is the longest and the distal joint's the shortest (distal 1-3.5 cm, MCP / thumb CMC 5-10 cm)."""
    lev = finger_levers(capsule_rhand)
    np.testing.assert_allclose(lev, _levers_from_xml(capsule_rhand), atol=1e-6)
    chains = lev.reshape(5, 3)
    assert np.all(chains[:, 0] > chains[:, 1]) and np.all(chains[:, 1] > chains[:, 2]), chains
    assert np.all((chains[:, 2] > 0.01) & (chains[:, 2] < 0.035)) and np.all(
        (chains[:, 0] > 0.05) & (chains[:, 0] < 0.1)
    )
    mesh = capsule_rhand.with_name("mesh_hand.xml")
    if mesh.is_file():  # the mesh hand's levers come from the capsule hand beside it
        np.testing.assert_array_equal(finger_levers(mesh), lev)


@pytest.mark.needs_data
def test_replay_strength_is_the_sources_per_finger_and_authored_is_uniform(capsule_rhand):
    """replay: each joint = its finger's maximal pad force (Li 2002's figures, typed here) x its lever from the
    XML; ``--effort`` (a finger_effort_limit departure) and ``authored`` give one value at every joint."""
    cfg = ReplayConfig()
    np.testing.assert_allclose(finger_strength.tip_forces(cfg), LI_2002_N, rtol=1e-12)
    want = np.repeat(LI_2002_N, 3) * _levers_from_xml(capsule_rhand)
    np.testing.assert_allclose(finger_strength.joint_limits(cfg, capsule_rhand), want, atol=1e-5)
    assert one_tip_effort(cfg) == pytest.approx(LI_2002_N[0] * cfg.lift.diag_grip_lever_m)  # the diagnosis's one tip
    assert 0.15 < want.min() and want.max() < 12.0  # N·m: myhand's little DIP ~0.2, its thumb CMC ~11
    uni = dataclasses.replace(cfg, physics_overrides={"finger_effort_limit": 0.4})
    np.testing.assert_array_equal(finger_strength.joint_limits(uni, capsule_rhand), np.full(15, 0.4))
    auth = physics.apply_physics(ReplayConfig(), "authored")
    assert finger_strength.tip_forces(auth) is None and finger_strength.profile(auth) == 0.4
    assert one_tip_effort(uni, 0.5) == pytest.approx(0.4 * 0.5)


@pytest.fixture(scope="module")
def scene(grab_dir, capsule_rhand):
    from replay.protocol.rollout import build_replay_scene

    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT)
    plan, sc, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    return plan, sc, cfg


@pytest.mark.needs_data
def test_compiled_forcerange_per_actuator_is_the_fingers(scene, capsule_rhand):
    """The MuJoCo model SolverMuJoCo compiled: every finger actuator (one per DOF) force-limited to +- its
    joint's limit (float32), read through Newton's actuator -> DOF map; the scene's read-back per joint says
    the same; an MjcBatch world scales them by ``effort_scale`` or sets ``effort_limit`` at every one."""
    from replay.sim.engine.mujoco_c.mjc import MjcBatch
    from replay.sim.engine.variants import Variant
    from replay.sim.solver_view import SolverView

    _, sc, _ = scene
    want = np.float32(np.repeat(LI_2002_N, 3) * _levers_from_xml(capsule_rhand))
    view = SolverView(sc.solver)
    m = view.mj_model
    a2n = view.to_newton("mjc_actuator_to_newton_idx")[: m.nu]
    f0, seen = sc.finger_qd_start, 0
    for a, n in enumerate(a2n):
        if f0 <= n < f0 + 45:
            lo, hi = m.actuator_forcerange[a]
            assert m.actuator_forcelimited[a] in (1, 2)
            assert hi == pytest.approx(want[(n - f0) // 3], rel=1e-6) and lo == -hi, (a, n)
            seen += 1
    assert seen == 45
    np.testing.assert_allclose(sc.readback["finger_forcerange_per_joint"], want, rtol=1e-6)
    batch = MjcBatch(sc, [Variant(), Variant(effort_scale=0.5), Variant(effort_limit=0.3)])
    try:
        base, half, flat = batch.worlds
        fa = batch.layout.finger_act
        np.testing.assert_array_equal(base.m.actuator_forcerange, m.actuator_forcerange)
        np.testing.assert_allclose(half.m.actuator_forcerange[fa, 1], 0.5 * m.actuator_forcerange[fa, 1], rtol=1e-6)
        np.testing.assert_allclose(half.readback["finger_forcerange_per_joint"], 0.5 * want, rtol=1e-6)
        np.testing.assert_allclose(flat.m.actuator_forcerange[fa], [[-0.3, 0.3]] * len(fa), rtol=1e-6)
    finally:
        batch.close()


@pytest.mark.needs_data
def test_mujoco_warp_holds_a_per_joint_limit_per_world(scene, capsule_rhand):
    """Warp's CPU device: a batch of the human-strength scene holds, per world, every finger actuator's own limit
    (the scene's per joint, times a world's ``effort_scale``, or its ``effort_limit``), read back from
    mujoco-warp's per-world ``actuator_forcerange`` (a mismatch raises in the batch's constructor)."""
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch
    from replay.sim.engine.variants import Variant

    _, sc, _ = scene
    want = np.float32(np.repeat(LI_2002_N, 3) * _levers_from_xml(capsule_rhand))
    b = WarpBatch(sc, [Variant(), Variant(effort_scale=0.5), Variant(effort_limit=0.3)], device="cpu")
    fr = b.m.actuator_forcerange.numpy()
    assert fr.shape[0] == 3
    rb = [w.readback["finger_forcerange_per_joint"] for w in b.worlds]
    np.testing.assert_allclose(rb[0], want, rtol=1e-6)
    np.testing.assert_allclose(rb[1], np.float32(0.5 * want), rtol=1e-6)
    np.testing.assert_allclose(rb[2], 0.3, rtol=1e-6)
    per_joint = fr[0, b.layout.finger_act, 1]
    np.testing.assert_allclose(per_joint, want[b.layout.finger_joint], rtol=1e-6)
