"""The 8 unmodified manosim MJCF variants import into Newton as MuJoCo compiles them.

Reference values come from ``mujoco.MjModel.from_xml_path`` on the same file.
"""

from __future__ import annotations

import warnings

import mujoco
import newton
import numpy as np
import pytest
import warp as wp

import importer_patches as ip
from importer_patches.mass_matrix import reference_mass_matrix
from replay.errors import SceneError
from replay.kinematics.hand_layout import MANOSIM_HAND, HandLayout

pytestmark = pytest.mark.needs_data

VARIANTS = [f"{s}/mano_{h}hand/{k}_hand.xml" for s in ("myhand", "zerohand") for h in ("r", "l") for k in ("capsule", "mesh")]


def mujoco_dof_gains(m: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """Per-DOF (kp, kv) of MuJoCo's compiled position actuators (unit-axis gears)."""
    kp, kv = np.zeros(m.nv), np.zeros(m.nv)
    for i in range(m.nu):
        jnt = m.actuator_trnid[i, 0]
        axis = int(np.flatnonzero(m.actuator_gear[i])[0])
        dof = m.jnt_dofadr[jnt] + axis
        kp[dof] = m.actuator_gainprm[i, 0]
        kv[dof] = -m.actuator_biasprm[i, 2]
    return kp, kv


@pytest.fixture(scope="module")
def imported(manosim_dir):
    """variant -> (report, builder, MjModel); each imported once into a fresh builder."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ip.FreeJointActuatorWarning)
        for v in VARIANTS:
            path = manosim_dir / "assets" / v
            b = newton.ModelBuilder()
            report = ip.add_mjcf(b, path)
            out[v] = (report, b, mujoco.MjModel.from_xml_path(str(path)))
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_counts(imported, variant):
    report, b, m = imported[variant]
    assert (report.body_count, report.joint_count, report.dof_count, report.coord_count) == (16, 16, 51, 67)
    assert report.joint_type_counts == {"FREE": 1, "BALL": 15}
    # MuJoCo agrees on bodies, DOFs and coordinates (its 3 slides + ball are our 1 FREE).
    assert (m.nbody - 1, m.nv, m.nq) == (16, 51, 67)
    assert report.body_names == [f"mano_body_{i}" for i in range(16)]
    assert report.finger_joint_names == [f"mano_joint_{i}" for i in range(1, 16)]
    assert report.finger_dof_starts == {f"mano_joint_{i}": 6 + 3 * (i - 1) for i in range(1, 16)}
    assert b.joint_type[0] == newton.JointType.FREE
    assert report.imported_actuator_count == 45


@pytest.mark.parametrize("variant", VARIANTS)
def test_damping_armature_kd_match_mujoco(imported, variant):
    report, _b, m = imported[variant]
    np.testing.assert_allclose(report.dof_damping, m.dof_damping, rtol=1e-6)
    np.testing.assert_allclose(report.dof_armature, m.dof_armature, rtol=1e-6, atol=1e-12)
    kp, kv = mujoco_dof_gains(m)
    # Fingers: Newton per-DOF drive gains. Wrist: no Newton drive (free joint) ...
    np.testing.assert_allclose(report.dof_target_ke[6:], kp[6:], rtol=1e-7)
    np.testing.assert_allclose(report.dof_target_kd[6:], kv[6:], rtol=0.01)
    assert report.dof_target_ke[:6] == [0.0] * 6 and report.dof_target_kd[:6] == [0.0] * 6
    # ... but the authored wrist gains are kept for the wrench controller.
    np.testing.assert_allclose(report.wrist_gains["kp"], kp[:6], rtol=1e-7)
    np.testing.assert_allclose(report.wrist_gains["kd"], kv[:6], rtol=0.01)
    # Measured: the agreement is far tighter than the 1 % the issue asks for.
    assert np.max(np.abs(np.array(report.dof_target_kd[6:]) / kv[6:] - 1)) < 1e-5


def test_mass_matrix_equals_mujoco(imported):
    """The reference mass matrix (MuJoCo DOF convention) equals MuJoCo's qM at qpos0."""
    report, b, m = imported[VARIANTS[0]]
    M, col = reference_mass_matrix(b, list(range(report.joint_start, report.joint_start + report.joint_count)))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    ref = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, ref)
    assert [col[i] for i in range(51)] == list(range(51))
    # Newton stores inertia in float32: agreement to float32 precision of the largest entry.
    np.testing.assert_allclose(M, ref, rtol=1e-5, atol=1e-7 * np.abs(ref).max())


def test_mass_matrix_finger_block_equals_newton(imported):
    """Cross-check with newton.eval_mass_matrix: identical on the finger (BALL) block.

    The free-joint block differs by design: Newton's free-joint velocity is
    COM-referenced in the world frame, MuJoCo's (and ours) body-origin/local. That
    change of coordinates leaves the finger block of M^-1, hence finger kv, unchanged.
    """
    report, b, _m = imported[VARIANTS[1]]
    M, _ = reference_mass_matrix(b, list(range(report.joint_count)))
    model = b.finalize(device="cpu")
    state = model.state()
    newton.eval_fk(model, model.joint_q, model.joint_qd, state)
    H = newton.eval_mass_matrix(model, state).numpy()[0]
    np.testing.assert_allclose(H[6:, 6:], M[6:, 6:], rtol=1e-4, atol=1e-6 * np.abs(M[6:, 6:]).max())
    np.testing.assert_allclose(np.linalg.inv(H)[6:, 6:], np.linalg.inv(M)[6:, 6:], rtol=1e-3)


def test_dampratio_needs_full_inverse_not_diagonal(imported):
    """Why the dampratio patch uses 1/(g^T M^-1 g): the plain diagonal misses MuJoCo's kv by > 1 %."""
    report, b, m = imported[VARIANTS[0]]
    M, _ = reference_mass_matrix(b, list(range(report.joint_count)))
    _kp, kv = mujoco_dof_gains(m)
    diag_kv_ty = 2 * 1.0 * np.sqrt(300.0 * M[1, 1])
    assert diag_kv_ty / kv[1] - 1 > 0.05  # measured 5.7 %
    assert report.wrist_gains["kd"][1] == pytest.approx(kv[1], rel=1e-6)


def test_report_layout(imported):
    report, _b, _m = imported[VARIANTS[0]]
    w = report.wrist_gains
    assert w["joint"] == "mano_body_0_freejoint" and w["dof_start"] == 0 and w["coord_start"] == 0
    assert len(w["kp"]) == len(w["kd"]) == 6
    np.testing.assert_allclose(w["lin_axes_world"], np.eye(3))
    assert report.mjcf_joint_dofs["wrist_tx"] == [0] and report.mjcf_joint_dofs["wrist_rot"] == [3, 4, 5]
    assert report.actuator_dof_map["mano_motor_1_y"] == [7]
    assert [a["name"] for a in report.free_joint_actuators] == [f"wrist_motor_{s}" for s in ("tx", "ty", "tz", "rx", "ry", "rz")]
    assert "xyzw" in report.joint_q_layout
    report.to_json()  # serializable


def test_into_populated_builder_with_xform(capsule_rhand):
    """Other bodies first (ground, a free box), hand placed by a rotated xform: indices shift, values do not."""
    b = newton.ModelBuilder()
    b.add_ground_plane()
    box = b.add_body(mass=0.5, xform=wp.transform((0.5, 0.0, 0.1), wp.quat_identity()))
    b.add_shape_box(box, hx=0.05, hy=0.05, hz=0.05)
    q = wp.quat_rpy(0.3, -0.2, 1.0)
    with pytest.warns(ip.FreeJointActuatorWarning):
        report = ip.add_mjcf(b, capsule_rhand, xform=wp.transform((0.1, 0.2, 0.9), q), enable_self_collisions=False)
    m = mujoco.MjModel.from_xml_path(str(capsule_rhand))
    kp, kv = mujoco_dof_gains(m)
    assert (report.body_start, report.joint_start, report.dof_start, report.coord_start) == (1, 1, 6, 7)
    assert report.wrist_gains["dof_start"] == 6 and report.wrist_gains["coord_start"] == 7
    np.testing.assert_allclose(report.dof_damping, m.dof_damping, rtol=1e-6)
    np.testing.assert_allclose(report.dof_target_kd[6:], kv[6:], rtol=1e-5)
    np.testing.assert_allclose(report.wrist_gains["kd"], kv[:6], rtol=1e-5)  # kv is frame invariant
    np.testing.assert_allclose(b.joint_q[7:10], (0.1, 0.2, 0.9), atol=1e-6)
    np.testing.assert_allclose(np.abs(np.dot(b.joint_q[10:14], [q[0], q[1], q[2], q[3]])), 1.0, atol=1e-6)
    R = np.array(wp.quat_to_matrix(q)).reshape(3, 3)
    np.testing.assert_allclose(report.wrist_gains["lin_axes_world"], R.T, atol=1e-6)
    model = b.finalize(device="cpu")
    assert model.body_count == 17 and model.joint_dof_count == 57


@pytest.mark.parametrize("variant", VARIANTS)
def test_hand_layout_from_every_manosim_hand(imported, variant):
    """Every manosim hand (both sides, capsule and mesh) imports to the one layout the
    replay drives; its counts agree with MuJoCo's own compile of the MJCF (3 slides +
    a ball on the wrist = Newton's FREE joint: 7 coords, 6 DOFs)."""
    report, b, m = imported[variant]
    lay = HandLayout.from_import(str(report.path), report.joint_types, report.body_names,
                                 coord_count=report.coord_count, dof_count=report.dof_count)
    assert lay == MANOSIM_HAND
    assert (lay.bodies, lay.dofs) == (m.nbody - 1, m.nv)
    assert lay.coords == m.nq  # MuJoCo: 3 slide + 4 ball = Newton's 7 free coords
    assert lay.finger_dofs == sum(1 for a in range(m.nu) if m.actuator_trntype[a] == 0) - 6


def test_hand_layout_refuses_other_hands(imported):
    """A hand that is not a free joint plus ball joints, or whose counts do not add up,
    is refused by name, not replayed with wrong indices."""
    report, _, _ = imported[VARIANTS[0]]
    args = (report.joint_types, report.body_names, report.coord_count, report.dof_count)
    with pytest.raises(SceneError, match="expected 1 free joint then ball joints"):
        HandLayout.from_import("h.xml", ["BALL"] + list(args[0][1:]), args[1],
                               coord_count=args[2], dof_count=args[3])
    with pytest.raises(SceneError, match="hand bodies"):
        HandLayout.from_import("h.xml", args[0], list(reversed(args[1])),
                               coord_count=args[2], dof_count=args[3])
    with pytest.raises(SceneError, match="coords"):
        HandLayout.from_import("h.xml", args[0], args[1], coord_count=args[2] - 4, dof_count=args[3])
