"""The quaternion finger drive on ``SolverSteel`` as ball-joint torque in ``Control.joint_f``, parent-anchor frame
(docs/engine.md, "SolverSteel"): ``tau_c = clip(kp log(q^-1 q_target) - kd omega_c, +-effort)`` N·m in the child
frame, ``joint_f = q tau_c``. Quaternions xyzw."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from replay.kinematics.hand_layout import BALL_DOFS, MANOSIM_HAND

#: a rotation vector shorter than this, rad, is taken as zero (as replay.sim.engine.finger_drive)
_TINY = 1e-12


@wp.kernel
def quat_drive_kernel(
    joint_q: wp.array(dtype=wp.float32),
    joint_qd: wp.array(dtype=wp.float32),
    q_adr: wp.array(dtype=wp.int32),
    v_adr: wp.array(dtype=wp.int32),
    target: wp.array(dtype=wp.quat),
    kp: wp.array(dtype=wp.vec3),
    kd: wp.array(dtype=wp.vec3),
    effort: wp.array(dtype=wp.vec3),
    joint_f: wp.array(dtype=wp.float32),
    tau_max: wp.array(dtype=wp.float32),
):
    """One thread per finger ball joint: its torque (parent-anchor frame, N·m) into ``joint_f``; its largest
    child-frame |component| into ``tau_max[0]``."""
    j = wp.tid()
    a = q_adr[j]
    v = v_adr[j]
    q = wp.normalize(wp.quat(joint_q[a], joint_q[a + 1], joint_q[a + 2], joint_q[a + 3]))
    e = wp.quat_inverse(q) * target[j]
    if e[3] < 0.0:  # q and -q are one rotation: the short way
        e = wp.quat(-e[0], -e[1], -e[2], -e[3])
    ev = wp.vec3(e[0], e[1], e[2])
    s = wp.length(ev)
    scale = float(0.0)
    if s >= _TINY:
        scale = 2.0 * wp.atan2(s, e[3]) / s
    w_c = wp.quat_rotate_inv(q, wp.vec3(joint_qd[v], joint_qd[v + 1], joint_qd[v + 2]))
    k = kp[j]
    d = kd[j]
    lim = effort[j]
    tau = wp.vec3(0.0)
    for i in range(3):
        t = k[i] * scale * ev[i] - d[i] * w_c[i]
        tau[i] = wp.clamp(t, -lim[i], lim[i])
        wp.atomic_max(tau_max, 0, wp.abs(tau[i]))
    tp = wp.quat_rotate(q, tau)
    joint_f[v] = tp[0]
    joint_f[v + 1] = tp[1]
    joint_f[v + 2] = tp[2]


@dataclass
class SteelFingerDrive:
    """The quaternion drive of the 15 finger ball joints: ``q_adr``, ``v_adr`` (15,) int32; ``kp``, ``kd``,
    ``effort`` (15,) vec3, N·m/rad, N·m·s/rad, N·m; ``target`` (15,) quat xyzw; ``tau_max`` (1,) N·m; ``gains`` host
    copies (15, 3)."""

    q_adr: wp.array
    v_adr: wp.array
    kp: wp.array
    kd: wp.array
    effort: wp.array
    target: wp.array
    tau_max: wp.array
    gains: dict

    @classmethod
    def from_gains(
        cls, hand_q_start: int, hand_qd_start: int, *, kp: np.ndarray, kd: np.ndarray, effort: np.ndarray, device
    ) -> SteelFingerDrive:
        """The drive of the hand at ``hand_q_start`` / ``hand_qd_start``; ``kp``, ``kd``, ``effort`` (15, 3),
        N·m/rad, N·m·s/rad, N·m. Raises ValueError: a negative or non-finite gain, or an effort limit 0 / inf."""
        J = MANOSIM_HAND.finger_joints
        kp, kd, effort = (np.asarray(x, np.float32).reshape(J, BALL_DOFS) for x in (kp, kd, effort))
        for name, x in (("kp", kp), ("kd", kd)):
            if not (np.all(np.isfinite(x)) and np.all(x >= 0)):
                raise ValueError(f"finger drive {name} must be finite and >= 0, got {x}")
        if not (np.all(np.isfinite(effort)) and np.all(effort > 0)):
            raise ValueError(f"finger drive effort limits must be finite and > 0, got {effort}")
        q_adr = hand_q_start + MANOSIM_HAND.finger_coord_start + 4 * np.arange(J)
        v_adr = hand_qd_start + MANOSIM_HAND.finger_dof_start + BALL_DOFS * np.arange(J)
        ident = np.tile(np.array([0.0, 0.0, 0.0, 1.0], np.float32), (J, 1))
        return cls(
            q_adr=wp.array(q_adr.astype(np.int32), dtype=wp.int32, device=device),
            v_adr=wp.array(v_adr.astype(np.int32), dtype=wp.int32, device=device),
            kp=wp.array(kp, dtype=wp.vec3, device=device),
            kd=wp.array(kd, dtype=wp.vec3, device=device),
            effort=wp.array(effort, dtype=wp.vec3, device=device),
            target=wp.array(ident, dtype=wp.quat, device=device),
            tau_max=wp.zeros(1, dtype=wp.float32, device=device),
            gains={"kp": kp.copy(), "kd": kd.copy(), "effort": effort.copy()},
        )

    def set_targets(self, finger_quat: np.ndarray) -> None:
        """Finger targets (15, 4) xyzw."""
        self.target.assign(np.asarray(finger_quat, np.float32).reshape(-1, 4))

    def apply(self, state, control) -> None:
        """Write the drive torque for ``state`` into ``control.joint_f`` (finger DOFs only)."""
        wp.launch(
            quat_drive_kernel,
            dim=self.q_adr.shape[0],
            device=self.q_adr.device,
            inputs=[state.joint_q, state.joint_qd, self.q_adr, self.v_adr, self.target, self.kp, self.kd, self.effort],
            outputs=[control.joint_f, self.tau_max],
        )

    def max_torque(self) -> float:
        """Largest |torque component| applied since the drive was built, N·m (never above the effort limit)."""
        return float(self.tau_max.numpy()[0])


__all__ = ["SteelFingerDrive", "quat_drive_kernel"]
