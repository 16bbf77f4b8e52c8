"""One control frame of one world without the GIL, compiled by numba, calling MuJoCo's C ``mj_step1`` and ``mj_step2``
by symbol from the ``libmujoco`` the bindings load (``void(const mjModel*, mjData*)``; MuJoCo 3.17.0).

Per substep ``mj_step1``, the wrist wrench, the quaternion finger drive where configured, ``mj_step2``, then MuJoCo's
warning counters: MuJoCo's documented split of ``mj_step`` (Euler, implicit, implicitfast; an RK4 model keeps
``mj_kinematics`` + ``mj_step``), bit for bit ``mj_step``'s (``benchmarks/engine.py``). Everything is read through the
bindings' views (no struct layout assumed). ``mju_error`` cannot be caught in compiled code, so a world runs here only
while its memory use is at most :data:`ARENA_GUARD` of its arena; past that, in the Python loop.

Raises ImportError at import when the library's ``mj_versionString`` is not the bindings'
(:class:`~replay.sim.engine.mujoco_c.mjc.MjcBatch` then steps in Python; ``C_LOOP_ERROR`` says why)."""

from __future__ import annotations

import ctypes
import glob
import os

import llvmlite.binding as llvm
import mujoco
from numba import njit, types

from replay.sim.engine import finger_drive, signals, wrist

#: a world's frames run compiled while MuJoCo's stack + arena use so far is at most this share of its arena
ARENA_GUARD = 0.5


def _load():
    """MuJoCo's ``mj_step1``, ``mj_step2``, ``mj_kinematics`` and ``mj_step`` as numba external functions (by symbol:
    numba's cache keeps :func:`frame_substeps`).

    Raises:
        ImportError: no ``libmujoco`` beside the bindings, or its version is not the bindings'."""
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

#: :func:`frame_and_read`'s return codes besides a warning's index (>= 0)
READ_DONE, NON_FINITE = -1, -2


def split_step(m: mujoco.MjModel) -> bool:
    """True when ``m``'s integrator steps the same through ``mj_step1`` + ``mj_step2`` (not RK4)."""
    return int(m.opt.integrator) != int(mujoco.mjtIntegrator.mjINT_RK4)


def arena_ok(d: mujoco.MjData) -> bool:
    """True while ``d``'s MuJoCo memory use leaves the compiled loop safe (:data:`ARENA_GUARD`)."""
    return d.maxuse_stack + d.maxuse_arena <= ARENA_GUARD * d.narena


@njit(cache=True, nogil=True)
def frame_substeps(
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
    qadr,
    vadr,
    root,
    hand_bodies,
    body_mass,
    par,
    tp,
    tc,
    wr,
    stats,
    drive,
    dq,
    dv,
    target,
    kp,
    kd,
    effort,
    qfrc,
    warn,
    warn_ids,
    warn_base,
):
    """``S`` substeps of one world: ``mj_step1`` (``mj_kinematics`` unless ``split``), the wrist wrench, the finger
    drive if ``drive``, ``mj_step2`` (``mj_step``); then the warning counters against ``warn_base``. Returns the index
    into ``warn_ids`` of the first warning raised (stopped after that substep), else -1."""
    for j in range(S):
        if split:
            _mj_step1(m_ptr, d_ptr)
        else:
            _mj_kinematics(m_ptr, d_ptr)
        wrist.apply_substep(
            qpos,
            qvel,
            xipos,
            xfrc,
            act_force,
            qadr,
            vadr,
            root,
            hand_bodies,
            body_mass,
            par,
            tp,
            tc,
            (j + 1) / S,
            interp,
            wr,
            stats,
        )
        if drive:
            finger_drive.quat_drive(qpos, qvel, dq, dv, target, kp, kd, effort, qfrc)
        if split:
            _mj_step2(m_ptr, d_ptr)
        else:
            _mj_step(m_ptr, d_ptr)
        for k in range(warn_ids.shape[0]):
            if warn[warn_ids[k]] > warn_base[k]:
                return k
    return -1


@njit(cache=True, nogil=True)
def frame_and_read(
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
    qadr,
    vadr,
    root,
    hand_bodies,
    body_mass,
    par,
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
    """:func:`frame_substeps`, then the frame's readout in the same ``nogil`` call. Inputs first (``tp``, ``tc`` wrist
    target rows; ``target`` drive targets), then a world's fixed pointers and views. ``stale`` / ``fresh`` (len(bodies),
    7) get each body's ``xpos`` m and ``xquat`` xyzw before and after the final state's kinematics (run only when no
    warning and finite); ``fast`` (4,) :func:`replay.sim.engine.signals.fastest_body`; ``stats[0]`` the largest |finger
    actuator force| so far, N·m.

    Returns:
        A warning's index into ``warn_ids`` (>= 0), :data:`NON_FINITE` or :data:`READ_DONE`."""
    k = frame_substeps(
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
        qadr,
        vadr,
        root,
        hand_bodies,
        body_mass,
        par,
        tp,
        tc,
        wr,
        stats,
        drive,
        dq,
        dv,
        target,
        kp,
        kd,
        effort,
        qfrc,
        warn,
        warn_ids,
        warn_base,
    )
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
