"""One control frame of one world without the GIL: the substep loop compiled by numba,
calling MuJoCo's C ``mj_kinematics`` and ``mj_step`` directly.

:class:`replay.sim.engine.mujoco_c.mjc.MjcBatch` steps every frame of every world here
(:func:`frame_substeps`): per substep ``mj_kinematics``, the wrist wrench (numba), the quaternion
finger drive where configured (numba), ``mj_step``, then MuJoCo's own warning counters, in one
``nogil`` call per frame. The Python loop (:meth:`MjcBatch._python_frame`) makes the same calls in
the same order on the same ``mjModel*`` / ``mjData*``, so the trajectory is the same bit for bit
(``tests/test_engine_contract.py``); it remains for the frames the compiled loop is not trusted with
(below).

What the loop reads from MuJoCo, all through documented bindings (no struct layout assumed):

- ``mjModel*`` / ``mjData*``: ``MjModel._address`` / ``MjData._address``;
- arrays: the bindings' numpy views into ``mjData`` (``qpos``, ``qvel``, ``xipos``, ``xfrc_applied``,
  ``actuator_force``, ``qfrc_applied``);
- overflow: ``mjData.warning[i].number`` for ``mjWARN_CONTACTFULL``, ``mjWARN_CNSTRFULL`` and
  ``mjWARN_BADQACC`` (``d.warning.number``, a strided view of the ``mjWarningStat`` array): a count
  above the world's count at its start stops the frame at that substep;
- contact counts: ``mjData.maxuse_con`` (the most contacts since the data was made), read per frame.

MuJoCo errors (``mju_error``, e.g. its stack exhausted) cannot be caught inside compiled code (the
bindings turn them into a C++ exception that cannot cross numba's frames). So a world's frame runs
here only while MuJoCo's memory use so far (``maxuse_stack + maxuse_arena``) is at most
:data:`ARENA_GUARD` of its arena (``narena``); past that its frames run in the Python loop, where an
error becomes the world's ``unstable`` reason with MuJoCo's message (the same trajectory either way).

The C functions come from the ``libmujoco`` the Python bindings load (the same shared object:
``dlopen`` returns the loaded one), called by symbol (numba ``ExternalFunction``), signature
``void(const mjModel*, mjData*)``. Checked on MuJoCo 3.17.0 (the pinned ``mujoco``); a mismatch is
detected at import: the library's ``mj_versionString`` must equal the bindings' (else ImportError;
:class:`~replay.sim.engine.mujoco_c.mjc.MjcBatch` then steps every frame in the Python loop, its ``c_loop``
is False and ``replay.sim.engine.mujoco_c.mjc.C_LOOP_ERROR`` says why).
"""

from __future__ import annotations

import ctypes
import glob
import os

import llvmlite.binding as llvm
import mujoco
from numba import njit, types

from replay.sim.engine import finger_drive, wrist

#: a world's frames run compiled while MuJoCo's stack + arena use so far is at most this share of its arena
ARENA_GUARD = 0.5

def _load():
    """MuJoCo's ``mj_step`` and ``mj_kinematics`` as numba external functions (by symbol, so
    numba's on-disk cache can keep :func:`frame_substeps`), after making the bindings'
    ``libmujoco`` visible to numba's linker.

    Raises:
        ImportError: no ``libmujoco`` beside the bindings, or its version is not the bindings'.
    """
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
    return types.ExternalFunction("mj_step", sig), types.ExternalFunction("mj_kinematics", sig)


_mj_step, _mj_kinematics = _load()


def arena_ok(d: mujoco.MjData) -> bool:
    """True while ``d``'s MuJoCo memory use so far leaves the compiled loop safe (module doc)."""
    return d.maxuse_stack + d.maxuse_arena <= ARENA_GUARD * d.narena


@njit(cache=True, nogil=True)
def frame_substeps(m_ptr, d_ptr, S, interp, qpos, qvel, xipos, xfrc, act_force, qadr, vadr, root,
                   hand_bodies, body_mass, par, tp, tc, wr, stats, drive, dq, dv, target, kp, kd, effort, qfrc,
                   warn, warn_ids, warn_base):
    """``S`` substeps of one world: per substep ``mj_kinematics``, the wrist wrench
    (:func:`replay.sim.engine.wrist.apply_substep`), the finger drive if ``drive``
    (:func:`replay.sim.engine.finger_drive.quat_drive`), ``mj_step``; then the warning counters
    ``warn[warn_ids[k]]`` (``d.warning.number``) against ``warn_base[k]``.

    Returns:
        ``k``, the index into ``warn_ids`` of the first warning raised (the frame stopped after
        that substep, as the Python loop does), else -1.
    """
    for j in range(S):
        _mj_kinematics(m_ptr, d_ptr)
        wrist.apply_substep(qpos, qvel, xipos, xfrc, act_force, qadr, vadr, root, hand_bodies, body_mass, par,
                            tp, tc, (j + 1) / S, interp, wr, stats)
        if drive:
            finger_drive.quat_drive(qpos, qvel, dq, dv, target, kp, kd, effort, qfrc)
        _mj_step(m_ptr, d_ptr)
        for k in range(warn_ids.shape[0]):
            if warn[warn_ids[k]] > warn_base[k]:
                return k
    return -1
