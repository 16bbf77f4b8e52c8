"""The quaternion drive of the manosim finger ball joints as joint torque written into ``qfrc_applied`` every step,
the MJCF's finger actuators switched off (docs/engine.md, "SolverSteel and the quaternion finger drive"). Per joint in
its child frame: ``tau = clip(kp log(q^-1 q_target) - kd omega, +-effort)``, N·m."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

#: a rotation vector shorter than this, rad, is taken as zero (its axis is undefined)
_TINY = 1e-12


@njit(cache=True, nogil=True)
def _qmul(a, b, out):
    """out = a * b, quaternions wxyz."""
    w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]
    out[0], out[1], out[2], out[3] = w, x, y, z


@njit(cache=True, nogil=True)
def quat_drive(qpos, qvel, qadr, vadr, target_wxyz, kp, kd, effort, qfrc):
    """Write every finger ball joint's drive torque into ``qfrc`` (nv,), N·m.

    Args:
        qpos, qvel: MuJoCo state (ball joints: quaternion wxyz; rad/s, child frame). qadr, vadr: (J,) addresses.
        target_wxyz: (J, 4). kp, kd, effort: (J, 3), N·m/rad, N·m·s/rad, N·m."""
    qinv = np.empty(4)
    e = np.empty(4)
    for j in range(qadr.shape[0]):
        a = qadr[j]
        n = math.sqrt(qpos[a] ** 2 + qpos[a + 1] ** 2 + qpos[a + 2] ** 2 + qpos[a + 3] ** 2)
        qinv[0], qinv[1], qinv[2], qinv[3] = qpos[a] / n, -qpos[a + 1] / n, -qpos[a + 2] / n, -qpos[a + 3] / n
        _qmul(qinv, target_wxyz[j], e)
        if e[0] < 0.0:  # q and -q are one rotation: take the short way
            e[0], e[1], e[2], e[3] = -e[0], -e[1], -e[2], -e[3]
        s = math.sqrt(e[1] * e[1] + e[2] * e[2] + e[3] * e[3])
        scale = 0.0 if s < _TINY else 2.0 * math.atan2(s, e[0]) / s
        v = vadr[j]
        for k in range(3):
            tau = kp[j, k] * scale * e[1 + k] - kd[j, k] * qvel[v + k]
            lim = effort[j, k]
            qfrc[v + k] = min(max(tau, -lim), lim)


@njit(cache=True, nogil=True)
def targets_from_rotvec(rv, out):
    """(J, 3) rotation vectors, rad -> (J, 4) quaternions wxyz (``out``)."""
    for j in range(rv.shape[0]):
        a = math.sqrt(rv[j, 0] ** 2 + rv[j, 1] ** 2 + rv[j, 2] ** 2)
        out[j, 0] = math.cos(0.5 * a)
        s = 0.5 if a < _TINY else math.sin(0.5 * a) / a
        for k in range(3):
            out[j, 1 + k] = s * rv[j, k]


@dataclass(frozen=True)
class FingerDrive:
    """One world's quaternion drive: ``qadr``, ``vadr`` (J,) finger ball joint addresses; ``kp`` (J, 3) N·m/rad,
    ``kd`` N·m·s/rad, ``effort`` N·m, read from the finger actuators."""

    qadr: np.ndarray
    vadr: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    effort: np.ndarray

    @classmethod
    def from_model(cls, m, layout) -> FingerDrive:
        """Joints and gains of ``m``'s finger actuators; ValueError: one not on a ball joint or not force-limited."""
        J = int(layout.finger_joint.max()) + 1
        qadr, vadr = np.zeros(J, np.int64), np.zeros(J, np.int64)
        kp, kd, eff = np.zeros((J, 3)), np.zeros((J, 3)), np.zeros((J, 3))
        for a, j, k in zip(layout.finger_act, layout.finger_joint, layout.finger_axis):
            jnt = int(m.actuator_trnid[a, 0])
            if int(m.jnt_type[jnt]) != 1:
                raise ValueError(f"finger actuator {a} is not on a ball joint")
            if not int(m.actuator_forcelimited[a]):
                raise ValueError(f"finger actuator {a} is not force-limited: no effort limit to carry over")
            qadr[j], vadr[j] = int(m.jnt_qposadr[jnt]), int(m.jnt_dofadr[jnt])
            kp[j, k], kd[j, k] = float(m.actuator_gainprm[a, 0]), float(-m.actuator_biasprm[a, 2])
            eff[j, k] = float(m.actuator_forcerange[a, 1])
        return cls(qadr, vadr, kp, kd, eff)


def disable_finger_actuators(m, layout) -> dict:
    """Zero the finger actuators' gain and bias in ``m``; returns ``{"finger_drive": "quat",
    "finger_actuators_force_free": True}``. Raises ValueError: a value did not take."""
    fa = layout.finger_act
    m.actuator_gainprm[fa, :] = 0.0
    m.actuator_biasprm[fa, :] = 0.0
    if np.any(m.actuator_gainprm[fa]) or np.any(m.actuator_biasprm[fa]):
        raise ValueError("finger actuators still have a gain or bias after switching them off")
    return {"finger_drive": "quat", "finger_actuators_force_free": True}


def rotvec_targets(layout, ctrl: np.ndarray) -> np.ndarray:
    """(J, 3) target rotation vectors, rad, from a ``ctrl`` that ``MjLayout.finger_ctrl`` filled."""
    J = int(layout.finger_joint.max()) + 1
    rv = np.zeros((J, 3))
    rv[layout.finger_joint, layout.finger_axis] = ctrl[layout.finger_act]
    return rv
