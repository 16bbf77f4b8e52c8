"""The fitted hand (``--hand-shape fitted``, docs/hand.md): GRAB s1's bones measured from the raw
landmarks, manosim's zerohand scaled to them, compiled by MuJoCo and imported by Newton with the
intended joint centres, and the landmark IK's residual on it."""

from __future__ import annotations

import warnings

import mujoco
import newton
import numpy as np
import pytest
import warp as wp

import importer_patches as ip
from replay.config import ReplayConfig
from replay.data.safe_pickle import load_pickle
from replay.errors import DataError
from replay.kinematics.fitted_hand import fitted_hand_dir, is_fitted_hand, recording_hand_dir, template_dir
from replay.kinematics.hand_layout import MANOSIM_HAND, HandLayout
from replay.kinematics.model import HandKinematics
from replay.kinematics.subject_hand import measure_hand

pytestmark = pytest.mark.needs_data

#: manosim body -> (its joint landmark, the next landmark), manopth order (0 wrist; 1-4 thumb CMC, MCP, IP,
#: tip; 5-8 index MCP, PIP, DIP, tip; 9-12 middle; 13-16 ring; 17-20 pinky), MANO bone order of the bodies
BONES = {
    1: (5, 6),
    2: (6, 7),
    3: (7, 8),
    4: (9, 10),
    5: (10, 11),
    6: (11, 12),
    7: (17, 18),
    8: (18, 19),
    9: (19, 20),
    10: (13, 14),
    11: (14, 15),
    12: (15, 16),
    13: (1, 2),
    14: (2, 3),
    15: (3, 4),
}
TIPS = (3, 6, 9, 12, 15)
BASES = {13: 1, 1: 5, 4: 9, 10: 13, 7: 17}  # finger base body -> its landmark
#: the fit rounds lengths and palm points to 0.01 mm (SubjectHand.rounded); a distance of two rounded points
#: is off by at most ~0.01 mm
ROUND_TOL_M = 1.2e-5


def _raw(mirror, name: str) -> np.ndarray:
    return np.asarray(load_pickle(mirror / "grab" / "recordings" / f"{name}.pkl")["hand"]["joints_target"], float)


@pytest.fixture(scope="module")
def stapler(mirror):
    from replay.checks import load_recording

    return load_recording("grab", "stapler_lift", mirror)


@pytest.fixture(scope="module")
def fitted(stapler, manosim_dir):
    return recording_hand_dir(stapler, manosim_dir)


def test_bone_lengths_are_the_raw_landmarks(mirror, stapler):
    """Each bone's length is the median over frames of its landmark distance in the raw pickle; the 10
    joint-to-joint bones and the palm are rigid (GRAB: one MANO fit, fixed betas), the tips slide."""
    raw = _raw(mirror, "stapler_lift")
    hand = measure_hand(stapler.landmarks, stapler.valid, "right", source=stapler.source)
    for b, (j, k) in BONES.items():
        d = np.linalg.norm(raw[:, k] - raw[:, j], axis=1)
        assert hand.bone_length[b] == pytest.approx(np.median(d), abs=1e-9)
        if b not in TIPS:
            assert np.ptp(d) < 1e-6  # measured: 3 nm (float32 landmarks)
    assert hand.bone_spread[9] > 2e-3  # the pinky tip vertex slides by millimetres (docs/hand.md)
    assert np.all(hand.palm_spread < 1e-6)
    other = measure_hand(_raw(mirror, "mug_lift"), None, "right")  # the same subject, another take
    rigid = [b for b in BONES if b not in TIPS]
    np.testing.assert_allclose(other.bone_length[rigid], hand.bone_length[rigid], atol=1e-7)
    np.testing.assert_allclose(other.palm, hand.palm, atol=1e-7)


def test_fitted_joint_centres_are_the_subjects(mirror, fitted, manosim_dir):
    """MuJoCo's compile of the fitted hand at qpos0: every joint-to-joint distance, wrist-to-base distance,
    base-to-base distance and fingertip distance is the subject's (raw landmark medians); joint limits,
    body count and total mass are zerohand's."""
    raw = _raw(mirror, "stapler_lift")
    med = lambda a, b: np.median(np.linalg.norm(raw[:, a] - raw[:, b], axis=1))  # noqa: E731
    ref = mujoco.MjModel.from_xml_path(str(template_dir(manosim_dir, "right") / "capsule_hand.xml"))
    for name in ("capsule_hand.xml", "mesh_hand.xml"):
        m = mujoco.MjModel.from_xml_path(str(fitted / name))
        d = mujoco.MjData(m)
        mujoco.mj_kinematics(m, d)
        anchor = {b: d.xanchor[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"mano_joint_{b}")] for b in BONES}
        anchor[0] = d.xanchor[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "wrist_rot")]
        for b, (j, k) in BONES.items():
            if b not in TIPS:
                assert np.linalg.norm(anchor[b + 1] - anchor[b]) == pytest.approx(med(j, k), abs=ROUND_TOL_M)
        for b, lm in BASES.items():
            assert np.linalg.norm(anchor[b] - anchor[0]) == pytest.approx(med(lm, 0), abs=ROUND_TOL_M)
        assert np.linalg.norm(anchor[1] - anchor[7]) == pytest.approx(med(5, 17), abs=2 * ROUND_TOL_M)
        assert np.linalg.norm(anchor[13] - anchor[4]) == pytest.approx(med(1, 9), abs=2 * ROUND_TOL_M)
        assert (m.nbody, m.njnt, m.nq, m.nv) == (ref.nbody, ref.njnt, ref.nq, ref.nv)
        np.testing.assert_array_equal(m.jnt_limited, ref.jnt_limited)
        np.testing.assert_array_equal(m.jnt_range, ref.jnt_range)
        assert m.body_mass.sum() == pytest.approx(ref.body_mass.sum(), rel=1e-6)
    kin = HandKinematics.from_mjcf(fitted / "capsule_hand.xml", side="right")
    lm = kin.fk_landmarks(np.zeros((1, 3)), np.array([[0, 0, 0, 1.0]]), np.tile([0, 0, 0, 1.0], (1, 15, 1)))[0]
    for b in TIPS:
        j, k = BONES[b]
        assert np.linalg.norm(lm[k] - lm[j]) == pytest.approx(med(j, k), abs=ROUND_TOL_M)


def test_newton_imports_the_fitted_joint_centres(fitted, manosim_dir):
    """Newton's import (importer_patches) of both fitted hands: manosim's layout, and every joint centre
    at the reference pose within 1e-6 m of MuJoCo's compile; finger joint limits as zerohand's import."""

    def imported(path):
        b = newton.ModelBuilder()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ip.FreeJointActuatorWarning)
            report = ip.add_mjcf(b, path)
        return report, b

    _, ref = imported(template_dir(manosim_dir, "right") / "capsule_hand.xml")
    for name in ("capsule_hand.xml", "mesh_hand.xml"):
        report, b = imported(fitted / name)
        lay = HandLayout.from_import(
            str(fitted / name), report.joint_types, report.body_names,
            coord_count=report.coord_count, dof_count=report.dof_count,
        )
        assert lay == MANOSIM_HAND
        np.testing.assert_array_equal(b.joint_limit_lower, ref.joint_limit_lower)
        np.testing.assert_array_equal(b.joint_limit_upper, ref.joint_limit_upper)
        model = b.finalize(device="cpu")
        state = model.state()
        newton.eval_fk(model, model.joint_q, model.joint_qd, state)
        body_q = state.body_q.numpy()
        m = mujoco.MjModel.from_xml_path(str(fitted / name))
        d = mujoco.MjData(m)
        mujoco.mj_kinematics(m, d)
        X_c = model.joint_X_c.numpy()
        child = model.joint_child.numpy()
        for j in range(1, MANOSIM_HAND.bodies):
            jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"mano_joint_{j}")
            pose = wp.transform(*[wp.vec3(*body_q[child[j], :3]), wp.quat(*body_q[child[j], 3:])])
            world = np.array(wp.transform_point(pose, wp.vec3(*X_c[j, :3])))
            assert np.linalg.norm(world - d.xanchor[jid]) < 1e-6, f"{name} mano_joint_{j}"


def test_ik_residual_on_the_fitted_hand(mirror, stapler, fitted, manosim_dir):
    """Landmark IK over ``validate_pose_mapping.py --window grasp``'s frames (the start to 3 s after the lift
    onset): every MCP, PIP, DIP and the thumb CMC within 1.0 mm (median), each fingertip no farther than on
    zerohand (GRAB's tips slide: docs/hand.md)."""
    from replay.kinematics.validate import sequence_errors

    window = (0, min(stapler.num_frames, stapler.grasp_frame + int(round(3.0 * stapler.fps)) + 1))
    fit = sequence_errors(stapler, fitted / "capsule_hand.xml", window=window, cache=False).errors
    zero = sequence_errors(
        stapler, template_dir(manosim_dir, "right") / "capsule_hand.xml", window=window, cache=False
    ).errors
    joints = [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19]
    assert np.all(np.median(fit[:, joints], axis=0) <= 1.0), np.median(fit, axis=0).round(2)
    tips = [4, 8, 12, 16, 20]
    assert np.all(np.median(fit[:, tips], axis=0) <= np.median(zero[:, tips], axis=0)), (
        np.median(fit[:, tips], axis=0),
        np.median(zero[:, tips], axis=0),
    )
    assert np.median(zero[:, joints]) > 1.5  # zerohand's inner joints are millimetres off (docs/hand.md)


def test_a_subject_hand_is_built_once(mirror, stapler, fitted, manosim_dir, monkeypatch):
    """The same subject values give the same cached folder, never rebuilt; another take of the subject
    (mug) gets every joint-to-joint bone and palm point of the first, only its fingertips its own."""
    import replay.kinematics.fitted_hand as fh

    assert is_fitted_hand(fitted / "capsule_hand.xml") and not is_fitted_hand(template_dir(manosim_dir, "right") / "x")
    monkeypatch.setattr(fh, "_build", lambda *a: pytest.fail("rebuilt a cached hand"))
    assert recording_hand_dir(stapler, manosim_dir) == fitted
    hand = measure_hand(stapler.landmarks, stapler.valid, "right")
    assert fitted_hand_dir(hand, template_dir(manosim_dir, "right")) == fitted
    monkeypatch.undo()
    mug = fitted_hand_dir(measure_hand(_raw(mirror, "mug_lift"), None, "right"), template_dir(manosim_dir, "right"))
    assert mug != fitted
    a, b = (mujoco.MjModel.from_xml_path(str(p / "capsule_hand.xml")) for p in (fitted, mug))
    da, db = mujoco.MjData(a), mujoco.MjData(b)
    mujoco.mj_kinematics(a, da)
    mujoco.mj_kinematics(b, db)
    np.testing.assert_allclose(da.xanchor, db.xanchor, atol=1e-9)  # joints: the subject's, whichever take


def test_hostile_landmarks_are_one_line_errors(cases_dir, mirror):
    """Landmarks in millimetres, NaN everywhere, or a bone that stretches: a one-line DataError naming
    the field, never a hand built from them."""
    mm = np.asarray(
        load_pickle(cases_dir / "landmarks_in_millimetres" / "data" / "grab" / "recordings" / "cubesmall_lift.pkl")[
            "hand"
        ]["joints_target"],
        float,
    )
    with pytest.raises(DataError, match=r"\[landmarks\]: .* mm long, outside 5-80 mm \(landmarks in millimetres\?\)"):
        measure_hand(mm, None, "right", source="x.pkl")
    raw = _raw(mirror, "cubesmall_lift")
    with pytest.raises(DataError, match=r"0 valid finite frames"):
        measure_hand(np.full_like(raw, np.nan), None, "right", source="x.pkl")
    nan = raw.copy()
    nan[:5] = np.nan  # as the nan_landmarks case: frames lost, the rest used
    assert measure_hand(nan, None, "right").frames == len(raw) - 5
    stretch = raw.copy()
    stretch[:, 6:9] += (stretch[:, 6:9] - stretch[:, 5:6]) * np.linspace(0, 0.2, len(raw))[:, None, None]
    with pytest.raises(DataError, match=r"changes length .* not one hand") as exc:
        measure_hand(stretch, None, "right", source="x.pkl")
    assert "\n" not in str(exc.value)
    mirrored = raw * np.array([-1.0, 1.0, 1.0])  # a left hand read as a right one
    with pytest.raises(DataError, match=r"the other hand side"):
        fitted_hand_dir(measure_hand(mirrored, None, "right", source="x.pkl"),
                        template_dir(mirror / "manosim", "right"))


def test_hostile_case_through_the_command(cases_dir, mirror, tmp_path, capsys):
    """validate_pose_mapping --hand-shape fitted on the millimetre case: exit 1, one line naming the unit."""
    from replay.commands.validate_pose_mapping import main

    rc = main(
        [
            "--dataset",
            "grab",
            "--data",
            str(cases_dir / "landmarks_in_millimetres" / "data"),
            "--hand-shape",
            "fitted",
            "--out",
            str(tmp_path / "v.json"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and any("millimetres" in line for line in err)


def test_fitted_is_a_declared_departure(stapler, manosim_dir):
    """hand_shape=fitted: the rollout's physics record says so with its declared source; the MJCF of a GRAB
    recording is the cached fitted hand, TACO and HUG-Bench get their authored shapes."""
    from replay.commands.run_study import build_parser
    from replay.sim import physics
    from replay.sim.hand_assets import FittedShape, hand_mjcf_path

    a = build_parser().parse_args(["--dataset", "grab", "--hand-shape", "fitted"])
    assert a.hand_shape == "fitted"
    cfg = ReplayConfig(physics_overrides={"hand_shape": "fitted"})
    rec = {r["name"]: r for r in physics.physics_record(cfg)}["hand_shape"]
    assert rec["value"] == "fitted" and "zerohand with every bone scaled to the subject" in rec["source"]
    path = hand_mjcf_path(manosim_dir, cfg, "right", recording=stapler)
    assert is_fitted_hand(path) and path.name == "capsule_hand.xml"
    mesh = hand_mjcf_path(
        manosim_dir, ReplayConfig(hand="mesh", physics_overrides={"hand_shape": "fitted"}), "right", recording=stapler
    )
    assert mesh == path.with_name("mesh_hand.xml")

    class Rec:
        dataset = "taco"

    assert FittedShape("fitted").folder(manosim_dir, "left", Rec()) == manosim_dir / "assets/zerohand/mano_lhand"
    Rec.dataset = "hug-bench"
    assert FittedShape("fitted").folder(manosim_dir, "left", Rec()) == manosim_dir / "assets/myhand/mano_lhand"
    with pytest.raises(DataError, match="give the recording"):
        hand_mjcf_path(manosim_dir, cfg, "right")


def test_ik_cache_key_depends_on_the_fitted_geometry(fitted, manosim_dir):
    """The IK cache key holds the hand's kinematics (the fitted MJCF's content), so zerohand's entries are
    never read for a fitted hand, nor one subject's for another's."""
    from replay.kinematics.ik import IKOptions, _cache_key, ik_options_for

    L = np.zeros((4, 21, 3))
    frames = np.arange(4)
    keys = {
        _cache_key(HandKinematics.from_mjcf(p, side="right"), L, frames, IKOptions())
        for p in (fitted / "capsule_hand.xml", template_dir(manosim_dir, "right") / "capsule_hand.xml")
    }
    assert len(keys) == 2
    assert ik_options_for(fitted / "capsule_hand.xml").landmark_weights[4] == 1.5
    assert ik_options_for(template_dir(manosim_dir, "right") / "capsule_hand.xml").landmark_weights[4] == 3.0


def test_scene_cache_key_differs_per_fitted_hand(mirror, stapler, fitted, manosim_dir):
    """A kept scene (replay.sim.scene_cache) is never reused for another hand: its key holds the MJCF's bytes."""
    from replay.kinematics.hand_layout import MANOSIM_HAND
    from replay.sim.scene_cache import scene_key
    from replay.sim.scene_spec import SceneSpec

    mug = fitted_hand_dir(measure_hand(_raw(mirror, "mug_lift"), None, "right"), template_dir(manosim_dir, "right"))
    q0 = np.zeros(MANOSIM_HAND.coords)
    cfg = ReplayConfig(physics_overrides={"hand_shape": "fitted"})
    keys = {
        scene_key(SceneSpec(p, stapler.target_object.asset, np.zeros(3), np.array([0, 0, 0, 1.0]), 0.0, q0), cfg)
        for p in (
            fitted / "capsule_hand.xml",
            mug / "capsule_hand.xml",
            template_dir(manosim_dir, "right") / "capsule_hand.xml",
        )
    }
    assert len(keys) == 3
