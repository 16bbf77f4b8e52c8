"""The nine-phase grasp-and-lift check (replay.protocol.gripper_phases) on GRAB's cubesmall.

Pinned: every phase's verdict on the principal line (the cube passes all nine), and three failing
cases at the phase the physics predicts: pads of friction 0.05 with the jaw force sized for 1.0
hold 0.1 of the weight (2 x 0.05 x m g) -> ``not_risen`` at lifting; a line 10 cm beside the cube
-> the pads meet (``pads_touched`` at grasping); and the object verdict rule.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from replay.config import ReplayConfig

#: the check's figures were measured on the asset's solid mass; the replay physics' printed cube (24 g) leaves the
#: jaws in the shake (issue #54's report), so the check is pinned to the asset's mass here
SOLID = {"physics_overrides": {"object_mass_model": "asset"}}

@pytest.fixture(scope="module")
def cube(mirror):
    from replay.checks import load_recording

    return load_recording("grab", "cubesmall_lift", mirror)


def _phases(res_line):
    return {p["name"]: p for p in res_line["phases"]}


def test_cubesmall_passes_all_nine_phases(cube):
    from replay.protocol.gripper_object import check_object
    from replay.protocol.gripper_phases import PHASES

    res = check_object(cube.target_object.asset, cube, ReplayConfig(**SOLID), lines=["principal_1"])
    assert res["passed"] and res["verdict"] == "pass" and res["passing_lines"] == ["principal_1"]
    line = res["lines"][0]
    ph = _phases(line)
    assert [p["name"] for p in line["phases"]] == list(PHASES)
    assert all(p["ran"] and p["passed"] for p in line["phases"])
    m = {k: ph[k]["metrics"] for k in PHASES}
    assert m["stability"]["at_rest"]
    assert m["positioning"]["error_mm"] < 5.0
    # the cube is ~57.5 mm across: the pads stop on it (5 mm preload each), far from touching
    assert 50.0 < m["grasping"]["pad_gap_mm"] < 60.0
    assert m["lifting"]["lift_height_m"] == pytest.approx(0.3) and m["lifting"]["rise_m"] > 0.25
    assert m["hold_before_shake"]["drop_m"] < 0.01 and m["hold_after_shake"]["drop_m"] < 0.01
    assert m["shake"]["max_separation_mm"] < 50.0
    assert m["dropping"]["fall_m"] > 0.25
    assert 0.08 < res["mass_kg"] < 0.09 and res["jaw_force_n"] == pytest.approx(2.0 * res["mass_kg"] * 9.81 / 2.0)


def test_low_pad_friction_fails_at_lifting(cube):
    from replay.protocol.gripper_object import check_object
    from replay.sim.gripper import FixtureConfig

    fx = dataclasses.replace(FixtureConfig(), pad_friction=0.05, sizing_friction=1.0)
    res = check_object(cube.target_object.asset, cube, ReplayConfig(**SOLID), fixture=fx, lines=["principal_1"])
    line = res["lines"][0]
    ph = _phases(line)
    assert not res["passed"] and res["verdict"] == "not_risen" and line["failed_phase"] == "lifting"
    assert ph["grasping"]["passed"] and ph["lifting"]["metrics"]["rise_m"] < 0.02
    assert all(not p["ran"] for p in line["phases"][4:])


def test_line_beside_the_object_pads_touch(cube):
    from replay.protocol.gripper_lines import GraspLine, hull_planes
    from replay.protocol.gripper_object import settle_object
    from replay.protocol.gripper_phases import LineRun, PhaseConfig, plan_line, run_phases
    from replay.sim.gripper import FixtureConfig

    fx, pc, cfg = FixtureConfig(), PhaseConfig(), ReplayConfig(**SOLID)
    st = settle_object(cube.target_object.asset, cube.target_object.quat[0], cfg, fixture=fx, pc=pc)
    line = GraspLine("beside", st["com"] + np.array([0.0, 0.1, 0.0]), np.array([1.0, 0.0, 0.0]), "test")
    plan = plan_line(line, hull_planes(st["parts"]), fx.pad_half_width, preload=fx.preload, open_margin=fx.open_margin)
    assert plan["jaw_target"] == 0.0 and not plan["centre_hit"]
    run = LineRun(cube.target_object.asset, st["origin"], plan, config=cfg, fixture=fx, pc=pc, height=0.04, longest_edge=0.044)
    res = run_phases(run)
    assert res["failed_phase"] == "grasping" and res["failure_class"] == "pads_touched"
    assert _phases(res)["grasping"]["metrics"]["pad_gap_mm"] < 1.0


def test_object_verdict_furthest_line():
    from replay.protocol.gripper_phases import object_verdict

    a = dict(line={"name": "a"}, passed=False, failed_phase="lifting", failure_class="not_risen")
    b = dict(line={"name": "b"}, passed=False, failed_phase="shake", failure_class="left_jaws_in_shake")
    v = object_verdict([a, b])
    assert not v["passed"] and v["verdict"] == "left_jaws_in_shake" and v["furthest_line"] == "b"
    assert object_verdict([a, dict(b, passed=True, failed_phase=None)])["verdict"] == "pass"


def test_jaw_force_caps_friction_credit():
    from replay.sim.gripper import FixtureConfig, jaw_force

    fx = FixtureConfig()
    assert jaw_force(1.0, dataclasses.replace(fx, pad_friction=2.0)) == pytest.approx(jaw_force(1.0, fx))
    assert jaw_force(1.0, dataclasses.replace(fx, pad_friction=0.5)) == pytest.approx(2 * jaw_force(1.0, fx))


def test_release_extends_a_lift_plan_and_flags_a_stuck_object():
    from replay.kinematics.hand_layout import MANOSIM_HAND, finger_quats
    from replay.protocol.plan import PHASE_APPROACH, PHASE_HOLD, PHASE_SETTLE, plan_from_rows
    from replay.protocol.release import PHASE_RELEASE, extend_plan, pre_release_end, release_metrics

    rows = np.zeros((4, MANOSIM_HAND.coords))
    rows[:, 6] = 1.0
    rows[:, MANOSIM_HAND.finger_coord_start + 3::4] = 1.0  # identity finger quats (xyzw)
    open_pose = rows[0].copy()
    open_pose[MANOSIM_HAND.finger_coord_start:MANOSIM_HAND.finger_coord_start + 4] = [0.0, 0.0, np.sin(0.3), np.cos(0.3)]
    plan = plan_from_rows(list(rows), [PHASE_SETTLE, PHASE_APPROACH, PHASE_HOLD, PHASE_HOLD], 1 / 30, start_frame=0, grasp_frame=1)
    ext = extend_plan(plan, open_pose, 1 / 30, release_s=0.5, fall_s=0.5)
    assert len(ext.coords) == 4 + 15 + 15 and pre_release_end(ext.phase) == 4
    assert np.all(ext.phase[4:] == PHASE_RELEASE)
    assert np.allclose(finger_quats(ext.coords[-1]), finger_quats(open_pose))
    assert np.allclose(ext.coords[4:, :7], rows[-1, :7])  # the wrist holds its last target
    z = np.r_[np.zeros(2), [0.2, 0.2], np.full(30, 0.2)]
    stuck = release_metrics(ext.phase, z, len(z), lifted=True, height=0.04)
    assert stuck["stuck_after_release"] and not stuck["lifted_after_release"]
    z[10:] = 0.02
    fell = release_metrics(ext.phase, z, len(z), lifted=True, height=0.04)
    assert fell["release_fall_m"] == pytest.approx(0.18) and fell["lifted_after_release"]
    assert release_metrics(ext.phase, z, 4, lifted=False, height=0.04)["stuck_after_release"] is None
