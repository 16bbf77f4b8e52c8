"""The compiled path of :class:`~replay.sim.engine.mujoco_c.mjc.MjcBatch` (docs/engine.md, "Spans"): a span of frames
of one world in one ``nogil`` numba call to ``libmujoco``'s C functions (MuJoCo 3.17.0), bit for bit the Python loop.
A world past :data:`ARENA_GUARD` returns :data:`ARENA` (``mju_error`` cannot be caught here). Raises ImportError when
the library's ``mj_versionString`` is not the bindings'."""

from __future__ import annotations

import ctypes
import glob
import math
import os

import llvmlite.binding as llvm
import mujoco
from numba import njit, types

from replay.sim.engine import finger_drive, signals, wrist
from replay.sim.engine.mujoco_c import data_fields as F

#: a world's frames run compiled while MuJoCo's stack + arena use so far is at most this share of its arena
ARENA_GUARD = 0.5


def _load():
    """MuJoCo's :data:`_C_FUNCTIONS` as numba external functions (by symbol: numba's cache keeps the compiled code).
    Raises ImportError: no ``libmujoco`` beside the bindings, or not the bindings' version."""
    paths = sorted(glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so*")))
    if not paths:
        raise ImportError("libmujoco not found beside the mujoco bindings")
    lib = ctypes.CDLL(paths[0])
    lib.mj_versionString.restype = ctypes.c_char_p
    got, want = lib.mj_versionString().decode(), mujoco.mj_versionString()
    if got != want:
        raise ImportError(f"{paths[0]} is MuJoCo {got}, the bindings are {want}")
    llvm.load_library_permanently(paths[0])
    sig = types.void(types.uintp, types.uintp)  # (const mjModel*, mjData*)
    return tuple(types.ExternalFunction(name, sig) for name in _C_FUNCTIONS)


#: the MuJoCo C functions called, each ``void(const mjModel*, mjData*)``
_C_FUNCTIONS = ("mj_step1", "mj_step2", "mj_kinematics", "mj_step", "mj_comPos", "mj_comVel")
_mj_step1, _mj_step2, _mj_kinematics, _mj_step, _mj_comPos, _mj_comVel = _load()

_mj_contactForce = types.ExternalFunction(
    "mj_contactForce", types.void(types.uintp, types.uintp, types.int32, types.uintp)
)  # (m, d, id, mjtNum[6])

#: :func:`_frame`'s return codes besides a warning's index (>= 0)
READ_DONE, NON_FINITE = -1, -2
#: :func:`run_frames`'s return codes (``info[0]``); ``info[1]``: the frame it ended at
SPAN_DONE, STOPPED, FELL, ARENA = 0, 1, 2, 3
#: why a world stopped (``info[2]`` with :data:`STOPPED`); ``info[3]``: the warning's index
WHY_WARNING, WHY_OVERFLOW, WHY_NON_FINITE, WHY_RUNAWAY = 0, 1, 2, 3


def arena_ok(d: mujoco.MjData) -> bool:
    """True while ``d``'s MuJoCo memory use leaves the compiled loop safe (:data:`ARENA_GUARD`)."""
    return d.maxuse_stack + d.maxuse_arena <= ARENA_GUARD * d.narena


@njit(cache=True, nogil=True)
def _frame(
    tp,
    tc,
    target,
    m_ptr,
    d_ptr,
    split,
    S,
    interp,
    qpos,
    qvel,
    xipos,
    xfrc,
    act_force,
    hand,
    wr,
    stats,
    drive,
    dq,
    dv,
    kp,
    kd,
    effort,
    qfrc,
    warn,
    warn_ids,
    warn_base,
    xpos,
    xquat,
    cvel,
    subtree_com,
    rootid,
    bodies,
    stale,
    fresh,
    fast,
):
    """One frame's substeps, then its readout, in one ``nogil`` call: per substep ``mj_step1``, the wrist wrench, the
    finger drive if ``drive``, ``mj_step2`` (or ``mj_step`` unless ``split``), then the warning counters against
    ``warn_base`` (a raised one ends the frame). ``stale`` / ``fresh`` (len(bodies), 7): ``xpos`` m, ``xquat`` xyzw
    before and after the final kinematics; ``fast`` (4,); ``stats[0]`` largest |finger actuator force|, N·m. Returns a
    warning's index into ``warn_ids`` (>= 0), :data:`NON_FINITE` or :data:`READ_DONE`."""
    k = -1
    for j in range(S):
        if split:
            _mj_step1(m_ptr, d_ptr)
        else:
            _mj_kinematics(m_ptr, d_ptr)
        wrist.apply_substep(qpos, qvel, xipos, xfrc, act_force, hand, tp, tc, (j + 1) / S, interp, wr, stats)
        if drive:
            finger_drive.quat_drive(qpos, qvel, dq, dv, target, kp, kd, effort, qfrc)
        if split:
            _mj_step2(m_ptr, d_ptr)
        else:
            _mj_step(m_ptr, d_ptr)
        for i in range(warn_ids.shape[0]):
            if warn[warn_ids[i]] > warn_base[i]:
                k = i
                break
        if k >= 0:
            break
    m = stats[0]
    for i in range(act_force.shape[0]):
        v = abs(act_force[i])
        if v > m:
            m = v
    if drive:
        for j in range(dv.shape[0]):
            for c in range(3):
                v = abs(qfrc[dv[j] + c])
                if v > m:
                    m = v
    stats[0] = m
    _copy_poses(xpos, xquat, bodies, stale)
    if k >= 0:
        return k
    if not signals.all_finite(qpos, qvel):
        return NON_FINITE
    _mj_kinematics(m_ptr, d_ptr)
    _mj_comPos(m_ptr, d_ptr)
    _mj_comVel(m_ptr, d_ptr)
    signals.fastest_body(cvel, xipos, subtree_com, rootid, bodies, fast)
    _copy_poses(xpos, xquat, bodies, fresh)
    return READ_DONE


@njit(cache=True, nogil=True)
def _copy_poses(xpos, xquat, bodies, out):
    """``out[j] = (xpos[b], xquat[b] as xyzw)`` for ``b = bodies[j]`` (MuJoCo's xquat is wxyz)."""
    for j in range(bodies.shape[0]):
        b = bodies[j]
        for c in range(3):
            out[j, c] = xpos[b, c]
        out[j, 3], out[j, 4], out[j, 5], out[j, 6] = xquat[b, 1], xquat[b, 2], xquat[b, 3], xquat[b, 0]


@njit(cache=True, nogil=True)
def _contacts(m_ptr, d_ptr, n, cint, cflt, idx, hand_geoms, object_geoms, force_min, res, out):
    """:func:`replay.sim.engine.signals.hand_object_contacts` over ``n`` contacts, forces by ``mj_contactForce``."""
    cnt = 0
    nf = 0
    fsum = 0.0
    mfsum = 0.0
    s32, s64 = idx[F.I_C_STRIDE32], idx[F.I_C_STRIDE64]
    ng = hand_geoms.shape[0]
    for c in range(min(n, cint.shape[0] // s32)):  # bounded by the views, whatever ``n`` reads (data_fields)
        r = c * s32
        g0, g1 = cint[r + idx[F.I_C_GEOM]], cint[r + idx[F.I_C_GEOM] + 1]
        if g0 < 0 or g1 < 0 or g0 >= ng or g1 >= ng:
            continue
        if not ((hand_geoms[g0] and object_geoms[g1]) or (hand_geoms[g1] and object_geoms[g0])):
            continue
        cnt += 1
        if cint[r + idx[F.I_C_EFC]] < 0:
            continue
        _mj_contactForce(m_ptr, d_ptr, c, res.ctypes.data)
        f = res[0]
        if f > force_min:
            nf += 1
        if f > 0.0:
            fsum += f
            mfsum += cflt[c * s64 + idx[F.I_C_FRICTION]] * f
    out[0], out[1], out[2], out[3] = cnt, nf, fsum, mfsum


@njit(cache=True, nogil=True)
def _why(code, overflow, fast, lim, info):
    """The frame's stop reason (a ``WHY_*``, -1: none): a warning, a contact ``overflow``, non-finite, a runaway."""
    if code >= 0:
        info[3] = code
        return WHY_WARNING
    if overflow:
        return WHY_OVERFLOW
    if code == NON_FINITE:
        return WHY_NON_FINITE
    if not (fast[0] <= lim[0] and fast[2] <= lim[1]):
        return WHY_RUNAWAY
    return -1


@njit(cache=True, nogil=True)
def _pose_row(k, poses, rows, measure_wrist, pos, quat, wrist_err):
    """Row ``k`` of the pose outputs (``poses`` (17, 7): m, xyzw), the root's distance (m) to ``rows[k, :3]``."""
    for b in range(poses.shape[0]):
        for c in range(3):
            pos[k, b, c] = poses[b, c]
        for c in range(4):
            quat[k, b, c] = poses[b, 3 + c]
    if measure_wrist:
        dx = poses[0, 0] - rows[k, 0]
        dy = poses[0, 1] - rows[k, 1]
        dz = poses[0, 2] - rows[k, 2]
        wrist_err[k] = math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True, nogil=True)
def run_frames(
    k0,
    k1,
    ctrl_rows,
    rows,
    targets,
    phase,
    settle,
    floor,
    lim,
    capacity,
    ctrl,
    ints,
    longs,
    cint,
    cflt,
    idx,
    hand_geoms,
    object_geoms,
    res,
    pos,
    quat,
    ccount,
    wrist_err,
    normal,
    friction,
    sums,
    info,
    m_ptr,
    d_ptr,
    wr,
    stale,
    fresh,
    fast,
    fa,
):
    """Frames ``k0 .. k1 - 1`` of one world; returns the code written to ``info[0]``.

    Args:
        ctrl_rows: (F, nu); rows: (F, 16) wrist target rows; targets: (F, J, 4) drive targets wxyz (J = 0: no drive);
            phase: (F,) codes. floor: stop before a frame whose previous object height (m) is below this.
        lim: (4,) runaway speeds m/s and rad/s, contact force threshold N, the arena share.
        capacity: contacts (``maxuse_con``) above which the world stops.
        pos, quat, ccount, wrist_err, normal, friction: outputs (F, 17, 3) float32 m, (F, 17, 4) float32 xyzw, (F,)
            int32, (F,) m, (F,) N, (F,) N.
        sums: (4,) the last frame's contact sums. info: (4,) int64 written: code, frame, why, warning index."""
    narena = idx[F.I_NARENA]
    for k in range(k0, k1):
        info[1] = k
        if k > 0 and pos[k - 1, 16, 2] < floor:
            info[0] = FELL
            return FELL
        if not longs[idx[F.I_MAXUSE_STACK]] + longs[idx[F.I_MAXUSE_ARENA]] <= lim[3] * narena:
            info[0] = ARENA
            return ARENA
        for j in range(ctrl.shape[0]):
            ctrl[j] = ctrl_rows[k, j]
        for j in range(6):
            wr[j] = 0.0
        kp = k - 1 if k > 0 else 0
        code = _frame(rows[kp], rows[k], targets[k], *fa)
        why = _why(code, ints[idx[F.I_MAXUSE_CON]] > capacity, fast, lim, info)
        poses = stale if why >= 0 and why != WHY_RUNAWAY else fresh
        _pose_row(k, poses, rows, phase[k] != settle, pos, quat, wrist_err)
        n = ints[idx[F.I_NCON]]
        if n:
            _contacts(m_ptr, d_ptr, n, cint, cflt, idx, hand_geoms, object_geoms, lim[2], res, sums)
        else:
            sums[0], sums[1], sums[2], sums[3] = 0.0, 0.0, 0.0, 0.0
        ccount[k] = int(sums[0])
        normal[k] = sums[2]
        friction[k] = sums[3]
        if why >= 0:
            info[0], info[2] = STOPPED, why
            return STOPPED
    info[0], info[1] = SPAN_DONE, k1
    return SPAN_DONE
