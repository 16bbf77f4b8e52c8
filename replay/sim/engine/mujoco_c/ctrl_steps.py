"""Many ``mj_step`` of one MuJoCo C model toward per-step ``ctrl`` rows in one ``nogil`` call, each step's readout
copied out, for the gripper fixture (docs/gripper_check.md). A chunk ends after a step with a non-finite object COM or
``|qvel|^2`` over ``runaway_sq``."""

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
    """``rows.shape[0]`` steps of ``ctrl[ctrl_idx[j]] = rows[k, j]``, ``mj_step``, then into ``out_com[k]`` (3,) m,
    ``out_pose[k, i]`` m and wxyz of ``bodies[i]``, ``out_q[k, i]``, ``out_qvel[k]``. Returns the steps taken."""
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
