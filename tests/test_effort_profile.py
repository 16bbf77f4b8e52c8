"""The per-joint finger effort of ``effort_profile = "human"`` (replay.kinematics.joint_levers):
each joint's lever to its pad re-derived from the MJCF text, the compiled MuJoCo model's force
range per actuator equal to the profile, the engines that refuse it, and preset human-replay@2."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.errors import DataError, EngineError
from replay.kinematics.joint_levers import (
    JOINT_NAMES,
    finger_effort_limits,
    finger_levers,
)
from replay.study.presets import PRESETS, apply_preset


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
        name = body.get("name")
        i = int(name.rsplit("_", 1)[1])
        j = body.find("joint")
        if i > 0:
            anchors[i] = o + np.array([float(v) for v in j.get("pos").split()])
            caps = [g for g in body.findall("geom") if g.get("type") == "capsule"]
            if caps:
                ft = np.array([float(v) for v in caps[0].get("fromto").split()])
                ends = (o + ft[:3], o + ft[3:])
                pads[i] = max(ends, key=lambda e: np.linalg.norm(e - anchors[i]))
        for child in body.findall("body"):
            walk(child, o)

    walk(root.find("worldbody").find("body"), np.zeros(3))
    out = np.zeros(15)
    for chain in ((1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11, 12), (13, 14, 15)):
        for b in chain:
            out[b - 1] = np.linalg.norm(pads[chain[-1]] - anchors[b])
    return out


def test_levers_match_the_mjcf_and_shrink_along_each_finger(capsule_rhand):
    """MuJoCo's compiled levers equal the ones summed from the XML (1e-6 m); along every finger
    the knuckle's lever is the longest and the distal joint's the shortest; the distal ones sit
    1-3.5 cm from the pad, the MCP / thumb CMC ones 5-10 cm (a human index finger is ~9 cm from
    knuckle to tip)."""
    lev = finger_levers(capsule_rhand)
    np.testing.assert_allclose(lev, _levers_from_xml(capsule_rhand), atol=1e-6)
    chains = lev.reshape(5, 3)
    assert np.all(chains[:, 0] > chains[:, 1]) and np.all(chains[:, 1] > chains[:, 2]), chains
    assert np.all((chains[:, 2] > 0.01) & (chains[:, 2] < 0.035)), chains[:, 2]
    assert np.all((chains[:, 0] > 0.05) & (chains[:, 0] < 0.10)), chains[:, 0]
    assert JOINT_NAMES[2] == "index_dip" and JOINT_NAMES[12] == "thumb_cmc"
    mesh = capsule_rhand.with_name("mesh_hand.xml")
    if mesh.is_file():  # the mesh hand's levers come from the capsule hand beside it
        np.testing.assert_array_equal(finger_levers(mesh), lev)


def test_profiles_and_bad_profile(capsule_rhand):
    """uniform: effort_limit everywhere; human: tip force x lever (10 N at a 2 cm DIP lever is
    0.2 N·m, not the 1 N·m of human-replay@1); an unknown profile names its field."""
    np.testing.assert_array_equal(finger_effort_limits(capsule_rhand, "uniform", 0.4, 10.0), np.full(15, 0.4))
    np.testing.assert_allclose(finger_effort_limits(capsule_rhand, "human", 0.4, 10.0),
                               10.0 * _levers_from_xml(capsule_rhand), atol=1e-5)
    with pytest.raises(DataError, match="config.effort_profile"):
        finger_effort_limits(capsule_rhand, "strong", 0.4, 10.0)
    with pytest.raises(DataError, match="config.effort_profile"):
        ReplayConfig(effort_profile="human", engine="mujoco-warp", device="cuda").validate()


@pytest.fixture(scope="module")
def human_scene(grab_dir, capsule_rhand):
    from replay.protocol.rollout import build_replay_scene

    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT, effort_profile="human", effort_tip_force=10.0)
    return build_replay_scene(rec, coords, capsule_rhand, cfg)[1], cfg


def test_compiled_forcerange_per_actuator_equals_the_profile(human_scene, capsule_rhand):
    """The MuJoCo model SolverMuJoCo compiled: every finger actuator (one per DOF) force-limited
    to +- its joint's profile value (float32), read through Newton's actuator -> DOF map; an
    MjcBatch world's copy holds the same; a scalar effort variant is refused."""
    from replay.sim.engine.mujoco_c.mjc import MjcBatch
    from replay.sim.engine.variants import Variant
    from replay.sim.solver_view import SolverView

    scene, cfg = human_scene
    want = np.float32(10.0 * _levers_from_xml(capsule_rhand))
    view = SolverView(scene.solver)
    m = view.mj_model
    a2n = view.to_newton("mjc_actuator_to_newton_idx")[: m.nu]
    f0 = scene.finger_qd_start
    seen = 0
    for a, n in enumerate(a2n):
        if f0 <= n < f0 + 45:
            lo, hi = m.actuator_forcerange[a]
            assert m.actuator_forcelimited[a] in (1, 2)
            assert hi == pytest.approx(want[(n - f0) // 3], rel=1e-6) and lo == -hi, (a, n)
            seen += 1
    assert seen == 45
    batch = MjcBatch(scene, [Variant()])
    try:
        np.testing.assert_array_equal(batch.worlds[0].m.actuator_forcerange, m.actuator_forcerange)
    finally:
        batch.close()
    with pytest.raises(EngineError, match="effort_profile"):
        MjcBatch(scene, [Variant(effort_limit=1.0)])


def test_preset_v2_and_v1():
    """--preset human-replay is v2 (the human profile, 10 N at the pad); human-replay@1 is kept
    (1 N·m at every joint); an unknown version names the field; every setting has a source."""
    v2 = apply_preset(ReplayConfig(), "human-replay")
    assert v2.preset == "human-replay@2" and v2.effort_profile == "human" and v2.effort_tip_force == 10.0
    assert v2.object_density_scale == 0.4 and v2.hand_object_friction == 1.5
    v1 = apply_preset(ReplayConfig(), "human-replay@1")
    assert v1.preset == "human-replay@1" and v1.effort_profile == "uniform" and v1.effort_limit == 1.0
    assert set(PRESETS["human-replay"]["settings"]) == set(PRESETS["human-replay"]["sources"])
    with pytest.raises(DataError, match="config.preset"):
        apply_preset(ReplayConfig(), "human-replay@9")
