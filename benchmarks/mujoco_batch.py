"""The engine's batch (:class:`replay.sim.engine.mujoco_c.mjc.MjcBatch`) against ``mujoco.batch.Batch``
(MuJoCo 3.17) on the same models and samples: ``benchmarks/sample_cost.py --compare-batch N``.

Per recording, N samples (``draw_samples``: friction, object mass, wrist offset; each a world with
its own edited ``MjModel``):

* ``mjc``: wall s and CPU s (``time.process_time``, every thread of the process) of the samples'
  stepping on the one sampling path (``step_protocol`` on a built scene, one ``MjcBatch`` world per
  sample) on 1 and 2 threads: the protocol's controls computed, the worlds stepped, their signals read
  and the protocol's stops decided, all in it;
* ``mujoco_batch``: the same worlds in one ``mujoco.batch.Batch`` (``set_models`` with each world's
  model, its ``mjSTATE_INTEGRATION`` row from the world's state before the first step,
  :func:`replay.protocol.input_log.record_rollout`), stepped one physics step per call with the
  world's own recorded ``ctrl``, ``xfrc_applied`` and ``qfrc_applied`` written between steps (the
  closed-loop use the protocol needs: its wrist wrench is computed every step), on 1 and 2 threads.
  Its controls are precomputed, its signals not read: a lower bound on a sampling path built on it;
* ``agree``: ``max_abs_qpos`` (mujoco.batch's final qpos and qvel against one ``MjData`` stepped with
  the same inputs: 0.0 is bit for bit) and ``max_abs_xpos_vs_engine`` m (its recorded bodies' positions
  at the final state against the engine's world after its last frame,
  :attr:`replay.protocol.input_log.InputLog.final_body_pos`; 0.0: the same trajectory's end bit for bit).

Whole rollouts (``--frame-limit`` does not apply here): the recorded inputs are a whole rollout's.
"""

from __future__ import annotations

import time

import numpy as np


def _logs(rec, coords, mjcf, cfg, variants) -> list:
    from replay.protocol.input_log import record_rollout

    return [record_rollout(rec, coords, mjcf, cfg=cfg, variant=v) for v in variants]


def _loop_final(log) -> np.ndarray:
    """qpos, qvel after one ``MjData`` stepped through the log's inputs (the reference)."""
    import mujoco

    from replay.protocol.input_log import STATE_SPEC

    m = log.model
    d = mujoco.MjData(m)
    mujoco.mj_setState(m, d, log.state0, STATE_SPEC)
    for k in range(len(log.ctrl)):
        d.ctrl[:], d.xfrc_applied[:], d.qfrc_applied[:] = log.ctrl[k], log.xfrc_applied[k], log.qfrc_applied[k]
        mujoco.mj_step(m, d)
    return np.concatenate([d.qpos, d.qvel])


def run_mujoco_batch(logs, threads: int) -> tuple[float, float, object]:
    """``(wall s, CPU s, batch)``: every log's world in one ``mujoco.batch.Batch`` on ``threads``
    threads, one ``step`` call per physics step over the worlds still running (module doc)."""
    from mujoco import batch as mj_batch

    b = mj_batch.Batch(logs[0].model, nsim=len(logs), nthread=threads)
    b.set_models([g.model for g in logs])
    b.state[:] = np.stack([g.state0 for g in logs])
    ctrl, xfrc, qfrc = b.bind("ctrl"), b.bind("xfrc_applied"), b.bind("qfrc_applied")
    steps = np.array([len(g.ctrl) for g in logs])
    w0, c0 = time.perf_counter(), time.process_time()
    for k in range(int(steps.max())):
        ids = np.flatnonzero(steps > k)
        for i in ids:
            ctrl[i], xfrc[i], qfrc[i] = logs[i].ctrl[k], logs[i].xfrc_applied[k], logs[i].qfrc_applied[k]
        b.step(ids)
    return time.perf_counter() - w0, time.process_time() - c0, b


def compare(rec, coords, mjcf, cfg, variants, threads=(1, 2), stepping=None) -> dict:
    """The figures of one recording (module doc). ``stepping(rec, coords, mjcf, cfg, variants, threads)
    -> (wall s, CPU s)``: the engine's batch stepping (``sample_cost.batch_stepping_wall``)."""
    logs = _logs(rec, coords, mjcf, cfg, variants)
    out: dict = {"n": len(variants), "steps": int(sum(len(g.ctrl) for g in logs)), "mjc": {}, "mujoco_batch": {}}
    for t in threads:
        wall, cpu = stepping(rec, coords, mjcf, cfg, variants, t)
        out["mjc"][f"threads{t}"] = {"wall_s": wall, "cpu_s": cpu}
        wall, cpu, b = run_mujoco_batch(logs, t)
        out["mujoco_batch"][f"threads{t}"] = {"wall_s": wall, "cpu_s": cpu}
    final = np.concatenate([b.bind("qpos"), b.bind("qvel")], axis=1)
    ref = np.stack([_loop_final(g) for g in logs])
    out["agree"] = {"max_abs_qpos": float(np.max(np.abs(final - ref))),
                    "max_abs_xpos_vs_engine": float(max(np.max(np.abs(_final_xpos(g, b.state[i]) - g.final_body_pos))
                                                        for i, g in enumerate(logs)))}
    return out


def _final_xpos(log, row: np.ndarray) -> np.ndarray:
    """(17, 3) m: the recorded bodies' world positions at a world's final state row, as the engine reads
    them after its last frame (``mj_kinematics`` at the state; a bound ``xpos`` is one substep behind it)."""
    import mujoco

    from replay.protocol.input_log import STATE_SPEC

    d = mujoco.MjData(log.model)
    mujoco.mj_setState(log.model, d, row, STATE_SPEC)
    mujoco.mj_kinematics(log.model, d)
    return d.xpos[log.bodies]
