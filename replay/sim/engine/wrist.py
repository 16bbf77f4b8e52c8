"""The wrist controller, compiled by numba: a wrench (N, N·m) at the root body's COM, world frame; the laws
(``par[P_LAW]``: ``wrench`` 0, ``authored_actuators`` 1; ``par[P_GCOMP]``: the ``M g`` term) in docs/engine.md, "The
wrist controller". Quaternions wxyz; world Z up, m."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from replay.config import GRAVITY

G = GRAVITY  # m/s^2, magnitude (world gravity is -G along Z): replay.config.GRAVITY

# layout of the float64 parameter vector ``par`` (see :func:`wrist_params`)
P_KP, P_KD, P_DPASS, P_M, P_G, P_IPOS, P_LAW, P_GCOMP = 0, 6, 12, 18, 19, 20, 23, 24
P_SIZE = 25
#: ``par[P_LAW]`` values
LAW_WRENCH, LAW_AUTHORED = 0.0, 1.0
# layout of a per-substep target row ``tgt``: pos (3), quat wxyz (4), vel (3), omega (3), acc (3)
T_POS, T_QUAT, T_VEL, T_OMEGA, T_ACC, T_SIZE = 0, 3, 7, 10, 13, 16


def wrist_params(
    kp,
    kd,
    *,
    d_passive,
    hand_mass: float,
    root_com_local,
    gravity: float = G,
    law: str = "wrench",
    gravity_compensation: bool = True,
) -> np.ndarray:
    """The controller constants as one float64 vector (layout ``P_*``). Raises ValueError: non-finite or unknown law.

    Args:
        kp, kd: (6,) gains (tx, ty, tz N/m, N·s/m; rx, ry, rz N·m/rad, N·m·s/rad). d_passive: (6,), as kd.
        hand_mass: kg. root_com_local: (3,) root body COM in its frame, m. gravity: m/s^2."""
    if law not in ("wrench", "authored_actuators"):
        raise ValueError(f"wrist law {law!r} not in ('wrench', 'authored_actuators')")
    par = np.zeros(P_SIZE)
    par[P_LAW] = LAW_AUTHORED if law == "authored_actuators" else LAW_WRENCH
    par[P_GCOMP] = 1.0 if gravity_compensation else 0.0
    par[P_KP : P_KP + 6] = kp
    par[P_KD : P_KD + 6] = kd
    par[P_DPASS : P_DPASS + 6] = d_passive
    par[P_M] = hand_mass
    par[P_G] = gravity
    par[P_IPOS : P_IPOS + 3] = root_com_local
    if not np.all(np.isfinite(par)):
        raise ValueError(f"wrist controller constants must be finite, got {par}")
    return par


@njit(cache=True, nogil=True)
def _quat2mat(q, R):
    w, x, y, z = q[0], q[1], q[2], q[3]
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    R[0, 0] = 1 - 2 * (y * y + z * z)
    R[0, 1] = 2 * (x * y - w * z)
    R[0, 2] = 2 * (x * z + w * y)
    R[1, 0] = 2 * (x * y + w * z)
    R[1, 1] = 1 - 2 * (x * x + z * z)
    R[1, 2] = 2 * (y * z - w * x)
    R[2, 0] = 2 * (x * z - w * y)
    R[2, 1] = 2 * (y * z + w * x)
    R[2, 2] = 1 - 2 * (x * x + y * y)


@njit(cache=True, nogil=True)
def slerp_wxyz(q0, q1, a, out):
    """Shortest-arc slerp of unit quaternions (4,) with weight ``a`` in [0, 1] into ``out``."""
    dot = q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3]
    s1 = 1.0
    if dot < 0.0:
        s1 = -1.0
        dot = -dot
    if dot > 1.0:
        dot = 1.0
    th = math.acos(dot)
    s = math.sin(th)
    if s < 1e-8:
        w0, w1 = 1.0 - a, a
    else:
        w0, w1 = math.sin((1.0 - a) * th) / s, math.sin(a * th) / s
    n = 0.0
    for i in range(4):
        out[i] = w0 * q0[i] + w1 * s1 * q1[i]
        n += out[i] * out[i]
    n = math.sqrt(n)
    for i in range(4):
        out[i] /= n


@njit(cache=True, nogil=True)
def _orientation_error(q, tgt):
    """Rotation vector (3,) rad, world, of ``q* q^-1`` (angle in [0, pi]), ``q`` (4,) and the row's ``q*`` wxyz."""
    nq = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    qw, qx, qy, qz = q[0] / nq, -q[1] / nq, -q[2] / nq, -q[3] / nq  # conjugate
    tw, tx, ty, tz = tgt[T_QUAT], tgt[T_QUAT + 1], tgt[T_QUAT + 2], tgt[T_QUAT + 3]
    ew = tw * qw - tx * qx - ty * qy - tz * qz
    ex = tw * qx + tx * qw + ty * qz - tz * qy
    ey = tw * qy - tx * qz + ty * qw + tz * qx
    ez = tw * qz + tx * qy - ty * qx + tz * qw
    return _rotvec_unnormalized(ew, ex, ey, ez)


@njit(cache=True, nogil=True)
def _rotvec_unnormalized(w, x, y, z):
    """Rotation vector (3,) rad of a unit quaternion (w, x, y, z) taken as it is, angle in [0, pi]."""
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    sv = math.sqrt(x * x + y * y + z * z)
    if sv < 1e-12:
        k = 2.0 / w if w > 0.0 else 0.0
    else:
        k = 2.0 * math.atan2(sv, w) / sv
    return (x * k, y * k, z * k)


@njit(cache=True, nogil=True)
def _rotvec(q0, q1, q2, q3):
    """Rotation vector (3,) rad of a wxyz quaternion, normalized, angle in [0, pi] (``mju_quat2Vel``, dt 1)."""
    n = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    return _rotvec_unnormalized(q0 / n, q1 / n, q2 / n, q3 / n)


@njit(cache=True, nogil=True)
def _authored_torque(qpos, qvel, qadr, vadr, R, par, tgt, tau):
    """World-frame torque (3,) N·m of the MJCF's ball-joint wrist actuators into ``tau``."""
    rv = _rotvec(qpos[qadr + 3], qpos[qadr + 4], qpos[qadr + 5], qpos[qadr + 6])
    rt = _rotvec(tgt[T_QUAT], tgt[T_QUAT + 1], tgt[T_QUAT + 2], tgt[T_QUAT + 3])
    loc = np.empty(3)
    for i in range(3):
        e = rt[i] - rv[i]  # wrapped into (-pi, pi] per axis, as MuJoCo does (module doc)
        if e > math.pi:
            e -= 2.0 * math.pi
        elif e <= -math.pi:
            e += 2.0 * math.pi
        loc[i] = par[P_KP + 3 + i] * e - par[P_KD + 3 + i] * qvel[vadr + 3 + i]
    for i in range(3):
        tau[i] = R[i, 0] * loc[0] + R[i, 1] * loc[1] + R[i, 2] * loc[2]


@njit(cache=True, nogil=True)
def wrench(qpos, qvel, xipos, qadr, vadr, root, hand_bodies, body_mass, par, tgt, out):
    """Write the wrist wrench (6,) = (force N, torque N·m), world, at the root COM, into ``out``; ``qpos`` (nq,),
    ``qvel`` (nv,), ``xipos`` (nbody, 3) m, ``body_mass`` (nbody,) kg, ``hand_bodies`` (16,), ``tgt`` (16,)."""
    R = np.empty((3, 3))
    _quat2mat(qpos[qadr + 3 : qadr + 7], R)
    p = qpos[qadr : qadr + 3]
    ip = par[P_IPOS : P_IPOS + 3]
    c_root = np.empty(3)
    w = np.empty(3)
    for i in range(3):
        c_root[i] = p[i] + R[i, 0] * ip[0] + R[i, 1] * ip[1] + R[i, 2] * ip[2]
        w[i] = R[i, 0] * qvel[vadr + 3] + R[i, 1] * qvel[vadr + 4] + R[i, 2] * qvel[vadr + 5]
    M = par[P_M]
    f = np.empty(3)
    tau = np.empty(3)
    if par[P_LAW] == LAW_AUTHORED:
        for i in range(3):
            f[i] = par[P_KP + i] * (tgt[T_POS + i] - p[i]) - par[P_KD + i] * qvel[vadr + i]
        _authored_torque(qpos, qvel, qadr, vadr, R, par, tgt, tau)
    else:
        for i in range(3):
            f[i] = (
                par[P_KP + i] * (tgt[T_POS + i] - p[i])
                + par[P_KD + i] * (tgt[T_VEL + i] - qvel[vadr + i])
                + par[P_DPASS + i] * tgt[T_VEL + i]
                + M * tgt[T_ACC + i]
            )
        err = _orientation_error(qpos[qadr + 3 : qadr + 7], tgt)
        for i in range(3):
            tau[i] = (
                par[P_KP + 3 + i] * err[i]
                + par[P_KD + 3 + i] * (tgt[T_OMEGA + i] - w[i])
                + par[P_DPASS + 3 + i] * tgt[T_OMEGA + i]
            )
    r = p - c_root
    tau[0] += r[1] * f[2] - r[2] * f[1]
    tau[1] += r[2] * f[0] - r[0] * f[2]
    tau[2] += r[0] * f[1] - r[1] * f[0]
    # gravity feed-forward: M g up at the hand's COM, moved to the root COM
    ch = np.zeros(3)
    for b in hand_bodies:
        for i in range(3):
            ch[i] += body_mass[b] * xipos[b, i]
    fg = M * par[P_G] * par[P_GCOMP]
    dx = ch[0] / M - c_root[0]
    dy = ch[1] / M - c_root[1]
    out[0], out[1], out[2] = f[0], f[1], f[2] + fg
    out[3] = tau[0] + dy * fg
    out[4] = tau[1] - dx * fg
    out[5] = tau[2]


@njit(cache=True, nogil=True)
def substep_target(tgt_prev, tgt, a, interp, out):
    """Target row at fraction ``a`` of a frame: position linear, quaternion slerped (``interp``); rates ``tgt``'s."""
    for i in range(T_SIZE):
        out[i] = tgt[i]
    if interp:
        for i in range(3):
            out[T_POS + i] = (1.0 - a) * tgt_prev[T_POS + i] + a * tgt[T_POS + i]
        q = np.empty(4)
        slerp_wxyz(tgt_prev[T_QUAT : T_QUAT + 4], tgt[T_QUAT : T_QUAT + 4], a, q)
        for i in range(4):
            out[T_QUAT + i] = q[i]


@njit(cache=True, nogil=True)
def apply_substep(qpos, qvel, xipos, xfrc, act_force, hand, tgt_prev, tgt, a, interp, wr, stats):
    """One substep's wrench into ``xfrc[root]``; the last step's largest |actuator force| (N·m) into ``stats[0]``."""
    qadr, vadr, root, hand_bodies, body_mass, par = hand
    row = np.empty(T_SIZE)
    substep_target(tgt_prev, tgt, a, interp, row)
    wrench(qpos, qvel, xipos, qadr, vadr, root, hand_bodies, body_mass, par, row, wr)
    for i in range(6):
        xfrc[root, i] = wr[i]
    m = stats[0]
    for i in range(act_force.shape[0]):
        v = abs(act_force[i])
        if v > m:
            m = v
    stats[0] = m
