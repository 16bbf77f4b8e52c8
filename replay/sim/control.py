"""Controls written before every solver step (Newton reference and Steel engines): the wrist wrench in
``Control.joint_f`` (MuJoCo ignores actuators on a free joint), finger targets in ``joint_target_q`` (15 ball joints,
xyzw). The hand is never teleported."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import GRAVITY
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.sim.solver_view import SolverView


class HandController:
    """Writes the wrist wrench and finger targets into ``control``; the wrist target is ``(pos (3,) m, quat (4,) xyzw,
    vel (3,) m/s, omega (3,) rad/s)`` of ``mano_body_0``'s frame, world."""

    def __init__(self, scene, control):
        self.scene = scene
        self.control = control
        m = scene.model
        self.root = int(scene.hand_bodies[0])
        self.qd0 = scene.hand_qd_start
        self.q0 = scene.hand_q_start
        self.kp = np.asarray(scene.wrist_kp, float)
        self.kd = np.asarray(scene.wrist_kd, float)
        self.d_passive = m.joint_damping.numpy()[self.qd0 : self.qd0 + 6].astype(float)
        self.mass = m.body_mass.numpy()[scene.hand_bodies].astype(float)
        self.com_local = m.body_com.numpy()[scene.hand_bodies].astype(float)
        self.M = float(self.mass.sum())
        self._joint_f = np.zeros(m.joint_dof_count, dtype=np.float32)
        self._target_q = m.joint_q.numpy().astype(np.float32).copy()
        self.last_wrench = np.zeros(6)

    def set_finger_targets(self, finger_quat: np.ndarray) -> None:
        """Finger targets (15, 4) xyzw -> ``joint_target_q``."""
        lay = MANOSIM_HAND
        self._target_q[self.q0 + lay.finger_coord_start : self.q0 + lay.coords] = np.asarray(
            finger_quat, np.float32
        ).reshape(-1)
        self.control.joint_target_q.assign(self._target_q)

    def wrench(self, state, pos, quat, *, vel, omega, acc=None) -> np.ndarray:
        """(6,) world force N and torque N·m at the root COM for ``state``; ``acc`` (3,) m/s^2 fed forward as ``M
        acc``."""
        bq = state.body_q.numpy()
        bqd = state.body_qd.numpy()
        hb = self.scene.hand_bodies
        p = bq[self.root, :3].astype(float)
        r = Rotation.from_quat(bq[self.root, 3:7].astype(float))
        c_root = p + r.apply(self.com_local[0])
        v_com = bqd[self.root, :3].astype(float)
        w = bqd[self.root, 3:].astype(float)
        v_org = v_com + np.cross(w, p - c_root)
        # PD at the frame origin (the MJCF slide joints act there) + damping feed-forward
        f = self.kp[:3] * (np.asarray(pos) - p) + self.kd[:3] * (np.asarray(vel) - v_org)
        f += self.d_passive[:3] * np.asarray(vel)
        if acc is not None:
            f += self.M * np.asarray(acc)
        err = (Rotation.from_quat(quat) * r.inv()).as_rotvec()
        tau = self.kp[3:] * err + self.kd[3:] * (np.asarray(omega) - w) + self.d_passive[3:] * np.asarray(omega)
        tau = tau + np.cross(p - c_root, f)
        # gravity feed-forward: M g up at the hand COM, moved to the root COM
        coms = np.stack([bq[b, :3] + Rotation.from_quat(bq[b, 3:7]).apply(self.com_local[i]) for i, b in enumerate(hb)])
        c_hand = (self.mass[:, None] * coms).sum(0) / self.M
        fg = np.array([0.0, 0.0, self.M * GRAVITY])
        f = f + fg
        tau = tau + np.cross(c_hand - c_root, fg)
        return np.concatenate([f, tau])

    def apply_wrist(self, state, pos, quat, *, vel, omega, acc=None) -> None:
        """Compute the wrench and write it to ``control.joint_f`` (free joint DOFs)."""
        wr = self.wrench(state, pos, quat, vel=vel, omega=omega, acc=acc)
        self.last_wrench = wr
        self._joint_f[self.qd0 : self.qd0 + 6] = wr
        self.control.joint_f.assign(self._joint_f)

    def clear(self) -> None:
        self._joint_f[:] = 0.0
        self.control.joint_f.assign(self._joint_f)


def finger_actuator_force_max(scene) -> float:
    """Largest |finger actuator force| in the last step, N·m."""
    f = SolverView(scene.solver).data_field("actuator_force")
    return float(np.max(np.abs(f))) if f.size else 0.0


__all__ = ["HandController", "finger_actuator_force_max"]
