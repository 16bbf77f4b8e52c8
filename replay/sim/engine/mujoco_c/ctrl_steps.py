"""Many ``mj_step`` of one MuJoCo C model toward per-step ``ctrl`` rows, without the GIL, and what
each step leaves in ``mjData`` for a caller that decides after every step whether to go on.

The gripper fixture (:class:`replay.sim.gripper.GripperScene`) is position-controlled through
``ctrl`` and stops its phases on conditions of each step's state (at rest, fell, left the pads),
which are Python closures. :func:`ctrl_steps` runs a chunk of steps in one ``nogil`` call of
MuJoCo's C ``mj_step`` (the ``libmujoco`` symbol :mod:`replay.sim.engine.mujoco_c.c_loop` loads and
checks against the bindings' version) and copies each step's readout into arrays; the caller then
visits the steps in order, and when one ends the phase before the chunk's last, restores the
state saved at the chunk's start (``mj_getState`` / ``mj_setState`` of ``mjSTATE_INTEGRATION``,
which MuJoCo documents as everything the next step depends on) and steps again to that step, so
``mjData`` ends where the Python loop (one ``mujoco.mj_step`` per step) would leave it, bit for
bit (``tests/test_gripper_steps.py``). Arrays are the bindings' numpy views into ``mjData``
(``ctrl``, ``xipos``, ``xpos``, ``xquat``, ``qpos``, ``qvel``), buffers MuJoCo allocates once.

A chunk ends early, after the step, when the object's COM is not finite or ``|qvel|^2`` exceeds
``runaway_sq``, so a runaway state is not stepped on in compiled code (where a MuJoCo error could
not be caught); the caller checks the same conditions exactly and goes on from there if they do
not hold. The same steps as one ``mujoco.mj_step`` call each from Python, for a model this loop is
not trusted with (this module unavailable, or MuJoCo's memory use past
:data:`~replay.sim.engine.mujoco_c.c_loop.ARENA_GUARD`), are
:meth:`replay.sim.gripper.GripperScene._python_steps`.
"""

from __future__ import annotations

import math

from numba import njit

from replay.sim.engine.mujoco_c.c_loop import _mj_step


@njit(cache=True, nogil=True)
def ctrl_steps(
    m_ptr,
    d_ptr,
    ctrl,
    ctrl_idx,
    rows,
    xipos,
    xpos,
    xquat,
    qpos,
    qvel,
    com_body,
    bodies,
    q_read,
    runaway_sq,
    out_com,
    out_pose,
    out_q,
    out_qvel,
):
    """``rows.shape[0]`` steps: before step ``k``, ``ctrl[ctrl_idx[j]] = rows[k, j]``; then ``mj_step``
    and the readout of step ``k``: ``out_com[k]`` = ``xipos[com_body]`` (m), ``out_pose[k, i]`` =
    ``xpos[bodies[i]]`` (m) then ``xquat[bodies[i]]`` (**wxyz**, as MuJoCo stores it),
    ``out_q[k, i]`` = ``qpos[q_read[i]]``, ``out_qvel[k]`` = ``qvel``.

    Returns:
        The steps taken: ``rows.shape[0]``, or fewer when a step left a non-finite COM or
        ``sum(qvel**2) > runaway_sq`` (that step is the last one taken and read).
    """
    n = rows.shape[0]
    for k in range(n):
        for j in range(ctrl_idx.shape[0]):
            ctrl[ctrl_idx[j]] = rows[k, j]
        _mj_step(m_ptr, d_ptr)
        finite = True
        for c in range(3):
            out_com[k, c] = xipos[com_body, c]
            if not math.isfinite(xipos[com_body, c]):
                finite = False
        for i in range(bodies.shape[0]):
            for c in range(3):
                out_pose[k, i, c] = xpos[bodies[i], c]
            for c in range(4):
                out_pose[k, i, 3 + c] = xquat[bodies[i], c]
        for i in range(q_read.shape[0]):
            out_q[k, i] = qpos[q_read[i]]
        s = 0.0
        for i in range(qvel.shape[0]):
            out_qvel[k, i] = qvel[i]
            s += qvel[i] * qvel[i]
        if not finite or not s <= runaway_sq:
            return k + 1
    return n
