"""One control frame of one world without the GIL: the substep loop compiled by numba,
calling MuJoCo's C ``mj_kinematics`` and ``mj_step`` directly.

:class:`replay.sim.engine.mjc.MjcBatch` steps a frame in Python by default: per substep
``mj_kinematics``, the wrist wrench (numba), the quaternion finger drive where configured
(numba), ``mj_step`` and the contact count check, each a call from Python (about 13 µs a
step of interpreter work, holding the GIL, which threads stepping other worlds then wait
for). With ``c_loop=True`` the same sequence runs inside one ``nogil`` numba function per
frame (:func:`frame_substeps`): the same calls in the same order on the same ``mjModel*`` /
``mjData*``, so the trajectory is the same bit for bit (``tests/test_refine.py``).

The C functions come from the ``libmujoco`` the Python bindings load (the same shared
object: ``dlopen`` returns the loaded one), called by symbol (numba ``ExternalFunction``)
with the raw ``mjModel*`` / ``mjData*`` (``MjModel._address``). ``mjData.ncon`` is read through its
address, found once per world by writing sentinel values through the bindings and looking
for them in the struct just before ``mjData.energy`` (a field the bindings expose as a view
into the struct), so no header layout is assumed.

Limit: MuJoCo errors (``mju_error``, e.g. its stack exhausted) cannot be caught here as the
Python loop catches them; they end the process (a study's worker: that recording only). Use
it where throughput matters (the refine search, :mod:`replay.protocol.refine`).
"""

from __future__ import annotations

import ctypes
import glob
import os

import llvmlite.binding as llvm
import mujoco
import numpy as np
from numba import njit, types

from replay.sim.engine import finger_drive, wrist


def _load():
    """MuJoCo's ``mj_step`` and ``mj_kinematics`` as numba external functions (by symbol, so
    numba's on-disk cache can keep :func:`frame_substeps`), after making the bindings'
    ``libmujoco`` visible to numba's linker."""
    paths = sorted(glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so*")))
    if not paths:
        raise ImportError("libmujoco not found beside the mujoco bindings")
    llvm.load_library_permanently(paths[0])
    sig = types.void(types.uintp, types.uintp)  # (const mjModel*, mjData*)
    return types.ExternalFunction("mj_step", sig), types.ExternalFunction("mj_kinematics", sig)


_mj_step, _mj_kinematics = _load()


def ncon_view(d: mujoco.MjData) -> np.ndarray:
    """(1,) int32 array aliasing ``d.ncon`` (module doc).

    Raises:
        RuntimeError: the field is not where the sentinels say (nothing else is assumed).
    """
    end = d.energy.ctypes.data
    start = max(d._address, end - 512)
    n = (end - start) // 4
    words = np.ctypeslib.as_array((ctypes.c_int32 * n).from_address(start))
    keep = d.ncon
    hits = None
    for sentinel in (1234567, 7654321, 1357911):
        d.ncon = sentinel
        found = set(np.flatnonzero(words == sentinel).tolist())
        hits = found if hits is None else hits & found
    d.ncon = keep
    if not hits or len(hits) != 1:
        raise RuntimeError(f"mjData.ncon not found before mjData.energy ({hits})")
    i = hits.pop()
    return np.ctypeslib.as_array((ctypes.c_int32 * 1).from_address(start + 4 * i))


@njit(cache=True, nogil=True)
def frame_substeps(m_ptr, d_ptr, ncon, S, interp, qpos, qvel, xipos, xfrc, act_force, qadr, vadr, root,
                   hand_bodies, body_mass, par, tp, tc, wr, stats, drive, dq, dv, target, kp, kd, effort, qfrc,
                   cap, peak):
    """``S`` substeps of one world: per substep ``mj_kinematics``, the wrist wrench
    (:func:`replay.sim.engine.wrist.apply_substep`), the finger drive if ``drive``
    (:func:`replay.sim.engine.finger_drive.quat_drive`), ``mj_step``; the contact count
    ``ncon[0]`` checked after each step.

    Returns:
        ``(peak contacts, n)``: ``n`` the count that exceeded ``cap`` (the frame stopped
        there, as the Python loop does), else -1.
    """
    for j in range(S):
        _mj_kinematics(m_ptr, d_ptr)
        wrist.apply_substep(qpos, qvel, xipos, xfrc, act_force, qadr, vadr, root, hand_bodies, body_mass, par,
                            tp, tc, (j + 1) / S, interp, wr, stats)
        if drive:
            finger_drive.quat_drive(qpos, qvel, dq, dv, target, kp, kd, effort, qfrc)
        _mj_step(m_ptr, d_ptr)
        n = ncon[0]
        if n > peak:
            peak = n
            if n > cap:
                return peak, n
    return peak, -1
