"""Dynamics sanity of the imported manosim hand in SolverMuJoCo (MuJoCo C backend, CPU).

Gravity off and contacts off: with drives off the hand must be exactly static
(every joint velocity exactly 0.0 for 1 s), and with drives on and targets equal
to the reference (identity) pose it must stay static too: no spurious force may
come from the import (wrong anchors, a mis-mapped ball target, unresolved gains).
"""

from __future__ import annotations

import warnings

import newton
import numpy as np
import pytest
from newton.solvers import SolverMuJoCo

import importer_patches as ip

pytestmark = pytest.mark.needs_data

DT = 1.0 / 500.0  # s
STEPS = 500  # 1 s


@pytest.fixture(scope="module")
def hand_model(capsule_rhand):
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ip.FreeJointActuatorWarning)
        report = ip.add_mjcf(b, capsule_rhand)
    return b.finalize(device="cpu"), report


def max_qd_over(model, steps=STEPS):
    solver = SolverMuJoCo(model, use_mujoco_cpu=True, disable_contacts=True)
    s0, s1, control = model.state(), model.state(), model.control()
    # Targets = reference pose (identity ball quaternions, wrist where it is).
    control.joint_target_q.assign(model.joint_q)
    peak = 0.0
    for _ in range(steps):
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
        peak = max(peak, float(np.abs(s0.joint_qd.numpy()).max()))
    return solver, peak


def test_solver_sees_authored_values(hand_model, capsule_rhand):
    """The MuJoCo model SolverMuJoCo builds carries MuJoCo's own damping, armature and kv."""
    import mujoco

    model, _report = hand_model
    solver, _ = max_qd_over(model, steps=1)
    ref = mujoco.MjModel.from_xml_path(str(capsule_rhand))
    mm = solver.mj_model
    assert (mm.nq, mm.nv, mm.nu) == (ref.nq, ref.nv, 45)
    np.testing.assert_allclose(mm.dof_damping, ref.dof_damping, rtol=1e-6)
    np.testing.assert_allclose(mm.dof_armature, ref.dof_armature, rtol=1e-6)
    np.testing.assert_allclose(mm.actuator_biasprm[:, 2], ref.actuator_biasprm[6:, 2], rtol=1e-5)
    np.testing.assert_allclose(mm.actuator_gainprm[:, 0], ref.actuator_gainprm[6:, 0])
    np.testing.assert_array_equal(mm.actuator_gear[:, :3], ref.actuator_gear[6:, :3])


def test_static_with_drives_off(hand_model):
    model, _ = hand_model
    model.joint_target_ke.zero_()
    model.joint_target_kd.zero_()
    _, peak = max_qd_over(model)
    assert peak == 0.0


def test_static_with_drives_on_at_identity(hand_model, capsule_rhand):
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ip.FreeJointActuatorWarning)
        ip.add_mjcf(b, capsule_rhand)
    model = b.finalize(device="cpu")
    assert float(model.joint_target_ke.numpy().max()) == 30.0
    _, peak = max_qd_over(model)
    assert peak == 0.0
