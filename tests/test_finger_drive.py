"""The quaternion finger drive (replay.sim.engine.finger_drive, config.finger_drive="quat").

The static test of the manosim-in-Newton report: the hand alone, no gravity, no contact,
each finger ball joint turned to a pose and driven toward that same pose, after a small
velocity kick (0.01 rad/s per DOF): a drive that restores symmetrically lets the kick die
out; the MJCF's three per-axis position actuators, whose stiffness is not symmetric away
from the identity, flutter unless their damping is large enough.
"""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from replay.sim.engine import finger_drive as fd

KICK = 0.01  # rad/s per DOF, the initial perturbation
EFFORT = 0.4  # N·m, the study's default effort limit


def _fingers(m):
    """(layout-like finger_act/joint/axis, ball joint ids) of a raw MuJoCo compile of a manosim MJCF."""
    balls = [j for j in range(m.njnt) if int(m.jnt_type[j]) == 1
             and (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or "").startswith("mano_joint")]
    acts, joints, axes = [], [], []
    for a in range(m.nu):
        j = int(m.actuator_trnid[a, 0])
        if j in balls:
            acts.append(a)
            joints.append(balls.index(j))
            axes.append(int(np.argmax(np.abs(m.actuator_gear[a, :3]))))
    return SimpleNamespace(finger_act=np.array(acts), finger_joint=np.array(joints), finger_axis=np.array(axes)), balls


def _hold(mjcf, drive: str, theta: float, kd_zero: bool = False, seconds: float = 1.0) -> np.ndarray:
    """Largest finger |qvel| per step, rad/s, holding every finger joint at ``theta`` rad."""
    m = mujoco.MjModel.from_xml_path(str(mjcf))
    m.opt.gravity[:] = 0
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    m.opt.timestep = 1 / 240
    lay, balls = _fingers(m)
    assert len(balls) == 15 and len(lay.finger_act) == 45
    m.actuator_forcelimited[lay.finger_act] = 1
    m.actuator_forcerange[lay.finger_act] = [-EFFORT, EFFORT]
    if kd_zero:
        m.actuator_biasprm[lay.finger_act, 2] = 0.0
    d = mujoco.MjData(m)
    target = np.zeros((15, 4))
    for k, j in enumerate(balls):  # flexion about local z, or about a skew axis for every third joint
        axis = np.array([0.0, 0.0, 1.0]) if k % 3 else np.array([0.0, 1.0, 0.3]) / np.hypot(1.0, 0.3)
        target[k] = Rotation.from_rotvec(axis * theta).as_quat()[[3, 0, 1, 2]]
        d.qpos[m.jnt_qposadr[j]: m.jnt_qposadr[j] + 4] = target[k]
    for a, j, ax in zip(lay.finger_act, lay.finger_joint, lay.finger_axis):  # the MJCF drive's own target
        d.ctrl[a] = Rotation.from_quat(target[j][[1, 2, 3, 0]]).as_rotvec()[ax]
    dofs = (np.array([m.jnt_dofadr[j] for j in balls])[:, None] + np.arange(3)).ravel()
    d.qvel[dofs] = np.random.default_rng(0).normal(0.0, KICK, dofs.size)
    drv = None
    if drive == "quat":
        drv = fd.FingerDrive.from_model(m, lay)
        fd.disable_finger_actuators(m, lay)
    out = np.zeros(int(round(seconds / m.opt.timestep)))
    for s in range(out.size):
        if drv is not None:
            fd.quat_drive(d.qpos, d.qvel, drv.qadr, drv.vadr, target, drv.kp, drv.kd, drv.effort, d.qfrc_applied)
        mujoco.mj_step(m, d)
        out[s] = np.max(np.abs(d.qvel[dofs]))
    return out


def _mjcfs(manosim_dir):
    paths = sorted(manosim_dir.glob("assets/*/mano_*/*_hand.xml"))
    assert len(paths) == 8
    return paths


@pytest.mark.needs_data
@pytest.mark.parametrize("theta", [0.5, 1.6])
def test_quat_drive_is_static_at_its_target_on_every_manosim_hand(manosim_dir, theta):
    for mjcf in _mjcfs(manosim_dir):
        q = _hold(mjcf, "quat", theta)
        assert np.all(np.isfinite(q))
        assert q[120:].max() < 1e-6, (mjcf, q[120:].max())  # the kick is gone within 0.5 s
        # without the drive's damping (passive 0.01 N·m·s/rad alone) it still never grows past the kick
        q0 = _hold(mjcf, "quat", theta, kd_zero=True)
        assert q0.max() < 1.5 * KICK * 3, (mjcf, q0.max())


@pytest.mark.needs_data
def test_mjcf_drive_flutters_without_its_damping(manosim_dir):
    """The reason for the quaternion drive: the same hold with the MJCF's per-axis actuators
    and their kd removed grows from a 0.01 rad/s kick to more than 1 rad/s."""
    for mjcf in _mjcfs(manosim_dir)[:2]:
        assert _hold(mjcf, "mjcf", 1.6, kd_zero=True).max() > 1.0


def test_quat_drive_law_by_hand():
    """One joint: 0.3 rad about x from its target, at rest: tau = kp * 0.3 about +x, clipped."""
    qpos = np.array([np.cos(0.15), -np.sin(0.15), 0.0, 0.0])  # -0.3 rad about x
    qvel = np.array([0.0, 2.0, 0.0])
    out = np.zeros(3)
    one = np.ones((1, 3))
    fd.quat_drive(qpos, qvel, np.array([0]), np.array([0]), np.array([[1.0, 0, 0, 0]]), 2.0 * one, 0.1 * one,
                  10.0 * one, out)
    np.testing.assert_allclose(out, [0.6, -0.2, 0.0], atol=1e-12)
    fd.quat_drive(-qpos, qvel, np.array([0]), np.array([0]), np.array([[1.0, 0, 0, 0]]), 2.0 * one, 0.1 * one,
                  10.0 * one, out)  # -q is the same rotation: the same torque
    np.testing.assert_allclose(out, [0.6, -0.2, 0.0], atol=1e-12)
    fd.quat_drive(qpos, qvel, np.array([0]), np.array([0]), np.array([[1.0, 0, 0, 0]]), 2.0 * one, 0.1 * one,
                  0.25 * one, out)
    np.testing.assert_allclose(out, [0.25, -0.2, 0.0], atol=1e-12)


@pytest.mark.needs_data
def test_quat_drive_rollout_lifts_the_short_window(grab_dir, capsule_rhand):
    from short_window import contact_and_ablation, short_window

    contact, ablation, _ = contact_and_ablation(short_window(grab_dir, capsule_rhand), capsule_rhand,
                                                finger_drive="quat")
    contact, ablation = contact.metrics, ablation.metrics
    assert contact["variant_readback"]["finger_drive"] == "quat"
    assert contact["variant_readback"]["finger_actuators_force_free"] is True
    assert contact["lifted"] and not ablation["lifted"]
    assert contact["finger_actuator_force_max"] <= np.float32(0.4) + 1e-9  # the effort limit (float32 in Newton), N·m
    assert all(r["raised_to"] is None for r in contact["flutter"])  # no damping raised for this drive
