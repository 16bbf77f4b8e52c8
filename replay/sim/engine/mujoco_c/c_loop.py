"""One control frame of one world without the GIL, compiled by numba, calling MuJoCo's C ``mj_step1`` and
``mj_step2`` directly: the frame the compiled span (:func:`replay.sim.engine.mujoco_c.span_loop.run_frames`)
steps, and MuJoCo's C functions for it and the gripper fixture (:mod:`replay.sim.engine.mujoco_c.ctrl_steps`).

:func:`frame_and_read`: :func:`frame_substeps`, then the frame's readout. Per substep ``mj_step1``
(positions and velocities: the body COMs the controller reads), the wrist wrench (numba), the
quaternion finger drive where configured (numba), ``mj_step2`` (forces, constraints, integration),
then MuJoCo's own warning counters. ``mj_step1`` + ``mj_step2`` is MuJoCo's documented split of
``mj_step`` for controls that depend on the current state (MuJoCo's "Simulation pipeline" docs;
supported for the Euler, implicit and implicitfast integrators; MuJoCo's ``mj_step2`` integrates RK4
with Euler, so an RK4 model keeps ``mj_kinematics`` + ``mj_step`` per substep, ``split`` False): the
trajectory is ``mj_step``'s bit for bit (``benchmarks/engine.py`` replays the recorded controls
through ``mujoco.rollout``, which calls ``mj_step``, and compares). The Python loop
(:meth:`replay.sim.engine.mujoco_c.mjc.MjcBatch._python_frame`) makes the same calls in the same order
(``tests/test_frame_spans.py``, ``tests/test_engine_contract.py``).

What the loop reads from MuJoCo, all through documented bindings (no struct layout assumed):

- ``mjModel*`` / ``mjData*``: ``MjModel._address`` / ``MjData._address``;
- arrays: the bindings' numpy views into ``mjData`` (``qpos``, ``qvel``, ``xipos``, ``xfrc_applied``,
  ``actuator_force``, ``qfrc_applied``);
- overflow: ``mjData.warning[i].number`` for ``mjWARN_CONTACTFULL``, ``mjWARN_CNSTRFULL``,
  ``mjWARN_BADQACC``, ``mjWARN_BADQPOS`` and ``mjWARN_BADQVEL`` (``d.warning.number``, a strided view of the ``mjWarningStat`` array): a count
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

from replay.sim.engine import finger_drive, signals, wrist

#: a world's frames run compiled while MuJoCo's stack + arena use so far is at most this share of its arena
ARENA_GUARD = 0.5


def _load():
    """MuJoCo's ``mj_step1``, ``mj_step2``, ``mj_kinematics`` and ``mj_step`` as numba external functions (by symbol, so
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
    return tuple(types.ExternalFunction(name, sig) for name in _C_FUNCTIONS)


#: the MuJoCo C functions called, each ``void(const mjModel*, mjData*)``
_C_FUNCTIONS = ("mj_step1", "mj_step2", "mj_kinematics", "mj_step", "mj_comPos", "mj_comVel")
_mj_step1, _mj_step2, _mj_kinematics, _mj_step, _mj_comPos, _mj_comVel = _load()

#: :func:`frame_and_read`'s return codes besides a warning's index (>= 0)
READ_DONE, NON_FINITE = -1, -2


def split_step(m: mujoco.MjModel) -> bool:
    """True when ``m``'s integrator steps the same through ``mj_step1`` + ``mj_step2`` as through
    ``mj_step`` (Euler, implicit, implicitfast; not RK4: module doc)."""
    return int(m.opt.integrator) != int(mujoco.mjtIntegrator.mjINT_RK4)


def arena_ok(d: mujoco.MjData) -> bool:
    """True while ``d``'s MuJoCo memory use so far leaves the compiled loop safe (module doc)."""
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
    """``S`` substeps of one world: per substep ``mj_step1`` (``mj_kinematics`` unless ``split``), the wrist
    wrench (:func:`replay.sim.engine.wrist.apply_substep`), the finger drive if ``drive``
    (:func:`replay.sim.engine.finger_drive.quat_drive`), ``mj_step2`` (``mj_step``); then the warning counters
    ``warn[warn_ids[k]]`` (``d.warning.number``) against ``warn_base[k]``.

    Returns:
        ``k``, the index into ``warn_ids`` of the first warning raised (the frame stopped after
        that substep, as the Python loop does), else -1.
    """
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
    """:func:`frame_substeps`, then the frame's readout in the same ``nogil`` call (what
    :meth:`replay.sim.engine.mujoco_c.mjc.MjcBatch.read_frame` does in Python otherwise).

    The frame's inputs come first (``tp``, ``tc``: the wrist target rows; ``target``: the drive's
    joint targets), then what stays fixed for a world (its pointers and the bindings' views into its
    ``mjData``, whose buffers MuJoCo allocates once in ``mj_makeData``), so a caller keeps the rest
    as one tuple per world.

    ``stale`` and ``fresh`` (len(bodies), 7) get each body's ``xpos`` (m) and ``xquat`` (Newton
    xyzw): ``stale`` as the last step left them (its ``mj_step1``), ``fresh`` after
    ``mj_kinematics`` + ``mj_comPos`` + ``mj_comVel`` at the frame's final state, which run only
    when no warning was raised and ``qpos``/``qvel`` are finite; then
    :func:`replay.sim.engine.signals.fastest_body` into ``fast`` (4,). ``stats[0]`` ends as the
    largest |finger actuator force| (and |drive torque|) so far, N·m.

    Returns:
        A warning's index into ``warn_ids`` (>= 0; no readout), :data:`NON_FINITE` (no readout)
        or :data:`READ_DONE`.
    """
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
