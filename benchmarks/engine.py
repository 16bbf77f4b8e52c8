#!/usr/bin/env python
"""Benchmark: the replay engine against raw MuJoCo on the same compiled model, in one run.

For each ``--objects`` recording of ``--dataset`` it

1. builds the study's scene and steps the full protocol (settle, approach, lift,
   hold, shake if lifted) through the project's engine (one world, the contact
   run), timing the stepping alone (the scene build is reported on its own);
2. steps it again while recording the exact ``ctrl`` and ``xfrc_applied`` MuJoCo
   received before every ``mj_step``, and checks the two runs end in the same state;
3. replays those controls through MuJoCo's own C loop (``mujoco.rollout``) on the
   same ``MjModel`` from the same initial state, checks it reaches the engine's final
   state bit for bit, and times it;

and prints ms per physics step for both, their ratio (each the best of ``--repeats`` runs; and the
ratio of the two on this thread's CPU time, ``cpu ratio``, which leaves out what other processes
take of the cores on a shared machine) and
the split of the engine's step: ``mj_step`` (the raw figure) and our work (the rest: wrist wrench,
finger drive, ``mj_kinematics``, per-frame reads). The engine steps the protocol's spans of frames in
the compiled loop (:mod:`replay.sim.engine.mujoco_c.c_loop`, every direct rollout's default; ``spans:``
says ``compiled`` or why not); the recording pass of step 2 uses the Python loop (same trajectory bit
for bit), whose ``mj_step2`` calls (``mj_step``'s second half) can be watched.
Then, for 8 and 32 worlds (and ``--worlds``'s largest) on 1 and 2 threads (and ``--threads``), N
worlds of the recording in one batch, twice: N identical copies of the timed world, whose
efficiency (world-steps/s over ``threads`` x raw ``mj_step`` steps/s of the same model in the same
run; 1.0: every thread steps at raw MuJoCo speed) is printed beside raw MuJoCo's own multi-threaded
rollout of the same worlds against the same ideal (what the machine allows), and N friction
variants 0.5-1.5 (their contact loads differ from the timed world's); each against raw MuJoCo doing
the same worlds' work on the same threads, best of ``--batch-repeats`` (default 5: on a shared
machine one batch's time scatters by 10-20 % from run to run). Before the objects and again after
them it measures the machine's own ceiling for 2 (and ``--threads``) busy threads
(:func:`core_scaling`: register-only integer work that shares nothing, each thread against one
thread alone): on a machine whose cores do not each keep one core's speed when all are busy, no
N-thread efficiency can be expected above it (beyond timing noise: the baselines are timed apart);
below :data:`SHARED_CORES` at either end, a closing note says the cores were shared during the run
(the load average cannot say it: it counts the run's own threads and study workers, and lags a
minute). Warp's banner and module-load lines are kept off the table (``--verbose`` shows them).
Unless ``--no-study``, it then runs the whole study of the dataset (replay +
contact ablation, ``--study-workers`` processes, landmark IK from the cache) and
prints rollouts per minute. ``--reference`` also times the reference engine
(every step through ``SolverMuJoCo.step``).

    python benchmarks/engine.py --dataset grab --objects cubesmall,mug --json out/bench/engine.json

``--device cuda`` is for a CUDA machine: the MuJoCo C figures above, then for each
``--worlds`` count (comma-separated, e.g. ``--worlds 1,64,512,1024``) N worlds of the
recording (object friction spread over 0.5-1.5) stepped through the full protocol in
one mujoco-warp launch per step (:class:`replay.sim.engine.mjwarp.warp_batch.WarpBatch`, frame
graph-captured), reported as rollouts per minute (batch build included, and stepping
only), ms per launch step and per world step, next to mujoco-warp's own step on the
same N-world model (zero control from the initial state, graph-captured; a lower bound,
its contact load differs from the protocol's). ``--device warp-cpu`` runs the same on
Warp's CPU device, for a tiny N only (a check that the path works; kernels take
minutes to compile cold, steps are slow)::

    python benchmarks/engine.py --dataset grab --objects cubesmall --device cuda --worlds 1,64,512,1024 \
        --no-study --json out/bench/engine_cuda.json
    python benchmarks/engine.py --dataset grab --objects cubesmall --device warp-cpu --worlds 2 --no-study
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import tempfile
import time
from pathlib import Path

import mujoco
import numpy as np
from mujoco import rollout as mj_rollout
from numba import njit

from replay.cli import run
from replay.config import ReplayConfig
from replay.data.locate import dataset_dir
from replay.datasets import RECORDING_DATASETS
from replay.errors import UsageError
from replay.fileio import atomic_write_text
from replay.protocol.plan import PHASE_HOLD
from replay.protocol.rollout import build_replay_scene, run_rollouts
from replay.protocol.step_plan import step_protocol
from replay.results.engine_choice import EngineChoice
from replay.results.files import dumps
from replay.sim.engine.mujoco_c.mjc import MjcBatch
from replay.sim.engine.variants import Variant
from replay.sim.hand_assets import resolve_hand_variant
from replay.study.batch import package_versions
from replay.study.console import quiet_libraries
from replay.study.prepare import prepare_recording, select_sequences, sequence_object
from replay.study.runner import run_study


def _recorded_controls(scene, plan, cfg):
    """Step the protocol once more, recording (ctrl, xfrc_applied) before every mj_step.

    Returns (initial full-physics state, controls (nstep, nu + 6 nbody), final qpos, qvel, batch)."""
    batch = MjcBatch(scene, [Variant()], c_loop=False)  # the Python loop: its mj_step calls can be watched
    w = batch.worlds[0]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.zeros(mujoco.mj_stateSize(w.m, spec))
    mujoco.mj_getState(w.m, w.d, s0, spec)
    log = []
    real_step = mujoco.mj_step2

    def spy(m, d, *a, **k):
        log.append(np.concatenate([d.ctrl, d.xfrc_applied.reshape(-1)]))
        return real_step(m, d, *a, **k)

    mujoco.mj_step2 = spy
    try:
        step_protocol(plan, batch, cfg)
    finally:
        mujoco.mj_step2 = real_step
    return s0, np.asarray(log), w.d.qpos.copy(), w.d.qvel.copy(), batch


def bench_object(dataset, seq, data_dir, manosim, cfg, worlds, threads, reference, repeats=3,
                 batch_worlds=(8, 32), batch_repeats=5) -> dict:
    rec, coords, mjcf, _ = prepare_recording(dataset, seq, data_dir, manosim_dir=manosim, cfg=cfg)
    t0 = time.perf_counter()
    plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg=cfg)
    build_s = time.perf_counter() - t0

    # (a) the engine and (b) the same controls through MuJoCo's C loop, timed in turn (engine, raw,
    # engine, raw, ...: both sides see the same machine), best of ``repeats`` each: the figure least
    # disturbed by other processes; a warm-up pass compiles/loads numba's functions first
    step_protocol(plan, MjcBatch(scene, [Variant()]), cfg, frame_limit=3)
    batch = MjcBatch(scene, [Variant()])
    trace = step_protocol(plan, batch, cfg)[0]
    nstep = trace.done * cfg.substeps
    q_engine = batch.worlds[0].d.qpos.copy()
    spans = batch.span_error or "compiled"  # how the engine stepped the protocol's spans (mjc_spans)
    s0, controls, q_rec, v_rec, rb = _recorded_controls(scene, plan, cfg)
    if len(controls) != nstep or not np.array_equal(q_rec, q_engine):
        raise RuntimeError(f"{seq}: the engine is not deterministic ({len(controls)} vs {nstep} steps)")
    m = rb.worlds[0].m
    d = mujoco.MjData(m)
    cspec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_XFRC_APPLIED
    warm = np.zeros((1, m.nv))
    t_engine = c_engine = t_raw = c_raw = np.inf
    with mj_rollout.Rollout(nthread=0) as r:
        r.rollout(m, d, s0[None], controls[None, :1], control_spec=cspec, initial_warmstart=warm)  # warm-up
        for _ in range(repeats):
            batch = MjcBatch(scene, [Variant()])
            t0, c0 = time.perf_counter(), time.thread_time()
            step_protocol(plan, batch, cfg)
            t_engine, c_engine = min(t_engine, time.perf_counter() - t0), min(c_engine, time.thread_time() - c0)
            t0, c0 = time.perf_counter(), time.thread_time()
            state, _ = r.rollout(m, d, s0[None], controls[None], control_spec=cspec, initial_warmstart=warm)
            t_raw, c_raw = min(t_raw, time.perf_counter() - t0), min(c_raw, time.thread_time() - c0)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    d_end = mujoco.MjData(m)
    mujoco.mj_setState(m, d_end, state[0, -1], spec)
    same = bool(np.array_equal(d_end.qpos, q_rec) and np.array_equal(d_end.qvel, v_rec))
    out = {
        "sequence": seq, "steps": int(nstep), "frames": int(trace.done), "build_s": build_s, "repeats": repeats,
        "engine_ms_per_step": t_engine / nstep * 1e3, "mujoco_ms_per_step": t_raw / nstep * 1e3,
        "raw_replay_bit_identical": same, "spans": spans,
    }
    out["ratio"] = out["engine_ms_per_step"] / out["mujoco_ms_per_step"]
    # the same on this thread's CPU time (time.thread_time): what other processes on the cores take is left out
    out["cpu_ratio"] = c_engine / c_raw
    if reference:
        ref_cfg = dataclasses.replace(cfg, engine=EngineChoice.NEWTON)
        r0 = run_rollouts(rec, coords, mjcf, cfg=ref_cfg, variants=[Variant()])[0].metrics
        ref_steps = r0["frames"] * cfg.substeps
        out["reference_engine_ms_per_step"] = (r0["wall_s"] - r0["build_s"]) / ref_steps * 1e3
        out["reference_ratio"] = out["reference_engine_ms_per_step"] / out["mujoco_ms_per_step"]
    out["our_ms_per_step"] = out["engine_ms_per_step"] - out["mujoco_ms_per_step"]
    out["batches"] = [row for n, t in batch_grid(worlds, threads, batch_worlds)
                      for row in _bench_batch(scene, plan, cfg, n, t, out["mujoco_ms_per_step"], batch_repeats)]
    return out


def batch_grid(worlds: int, threads: int, batch_worlds=(8, 32)) -> list[tuple[int, int]]:
    """(worlds, threads) pairs timed: ``batch_worlds`` (``--batch-worlds``) and ``worlds`` when > 1, on 1
    and 2 threads and ``threads``."""
    ns = sorted(set(batch_worlds) | ({worlds} if worlds > 1 else set()))
    ts = sorted({1, 2, max(1, threads)})
    return [(n, t) for n in ns for t in ts]


def _bench_batch(scene, plan, cfg, worlds: int, threads: int, raw_ms: float, repeats: int = 3) -> list[dict]:
    """N worlds in one batch on ``threads``, two kinds, each timed in turn with raw MuJoCo doing the same
    work (:class:`_RawSameWork`: each world's recorded controls through ``mujoco.rollout`` on the same
    threads), best of ``repeats`` each:

    * ``identical``: N copies of the timed world (``Variant()``): every world does exactly the timed
      world's work, so ``threads`` x raw ``mj_step`` (``raw_ms`` ms per step, this model, this run) is
      the ideal: ``efficiency`` is the issue's figure, and ``raw_efficiency`` is raw MuJoCo's own
      multi-threaded rollout of the same worlds against that ideal (the machine's ceiling);
    * ``friction``: friction variants 0.5-1.5 (a sweep's batch; their contact loads differ from the
      timed world's, so only ``efficiency_same_work`` compares like with like).

    Returns one row per kind."""
    rows = []
    for kind, variants in (("identical", [Variant() for _ in range(worlds)]),
                           ("friction", [Variant(friction=float(mu)) for mu in np.linspace(0.5, 1.5, worlds)])):
        raw = _RawSameWork(scene, plan, cfg, variants, threads)
        t_b = t_raw = np.inf
        for _ in range(repeats):
            b = MjcBatch(scene, variants, threads=threads)
            t0 = time.perf_counter()
            tr = step_protocol(plan, b, cfg)
            t_b = min(t_b, time.perf_counter() - t0)
            b.close()
            q_end = [w.d.qpos.copy() for w in b.worlds]
            t_raw = min(t_raw, raw.timed())
        wsteps = sum(t.done for t in tr) * cfg.substeps
        ms = t_b / wsteps * 1e3
        ideal = wsteps * raw_ms * 1e-3 / threads  # s: every thread at raw mj_step speed on the timed world
        rows.append({"worlds": worlds, "threads": threads, "kind": kind, "world_steps": int(wsteps), "wall_s": t_b,
                     "ms_per_world_step": ms, "world_steps_per_s": wsteps / t_b, "efficiency": raw_ms / (ms * threads),
                     "raw_same_work_s": t_raw, "efficiency_same_work": t_raw / t_b, "raw_efficiency": ideal / t_raw,
                     "raw_same_work_bit_identical": raw.same(q_end)})
    return rows


class _RawSameWork:
    """Raw MuJoCo doing a batch's work: every world's (ctrl, xfrc_applied) recorded before each physics
    step (the batch's ``recorder`` hook, Python loop), then (:meth:`timed`) each world's steps through
    ``mujoco.rollout`` (its own ``MjModel``, from its own initial state, its ``MjData`` made before the
    clock starts, as the batch's are) on ``threads`` threads, the worlds dealt round-robin as the batch
    deals them; :meth:`same`: every world's final ``qpos`` equals the batch's bit for bit."""

    def __init__(self, scene, plan, cfg, variants, threads: int):
        rb = MjcBatch(scene, variants, c_loop=False)
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.s0 = []
        for w in rb.worlds:
            s = np.zeros(mujoco.mj_stateSize(w.m, spec))
            mujoco.mj_getState(w.m, w.d, s, spec)
            self.s0.append(s)
        logs = [[] for _ in variants]
        rb.recorder = lambda i, d: logs[i].append(np.concatenate([d.ctrl, d.xfrc_applied.reshape(-1)]))
        step_protocol(plan, rb, cfg)
        self.models = [w.m for w in rb.worlds]
        self.datas = [mujoco.MjData(m) for m in self.models]
        self.controls = [np.asarray(x)[None] for x in logs]
        self.ends: list = [None] * len(variants)
        self.chunks = [list(range(t, len(variants), threads)) for t in range(min(threads, len(variants)))]
        self._run(self.chunks[0][:1])  # warm-up

    def _run(self, ids) -> None:
        cspec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_XFRC_APPLIED
        with mj_rollout.Rollout(nthread=0) as r:
            for i in ids:
                m = self.models[i]
                st, _ = r.rollout(m, self.datas[i], self.s0[i][None], self.controls[i], control_spec=cspec,
                                  initial_warmstart=np.zeros((1, m.nv)))
                self.ends[i] = st[0, -1]

    def timed(self) -> float:
        """Wall s of every world's rollout, the threads' tasks as the batch deals them."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(self.chunks)) as pool:
            t0 = time.perf_counter()
            list(pool.map(self._run, self.chunks))
            return time.perf_counter() - t0

    def same(self, q_end: list) -> bool:
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        ok = True
        for i, m in enumerate(self.models):
            d = mujoco.MjData(m)
            mujoco.mj_setState(m, d, self.ends[i], spec)
            ok = ok and bool(np.array_equal(d.qpos, q_end[i]))
        return ok


@njit(nogil=True, cache=False)
def _integer_work(n: int) -> int:
    """``n`` rounds of four independent xorshift streams: register arithmetic only (no memory
    traffic, nothing shared between threads), the machine's best case for scaling."""
    a, b, c, d = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)
    for _ in range(n):
        a ^= a << np.uint64(13)
        a ^= a >> np.uint64(7)
        b ^= b << np.uint64(17)
        b ^= b >> np.uint64(9)
        c ^= c << np.uint64(5)
        c ^= c >> np.uint64(11)
        d ^= d << np.uint64(3)
        d ^= d >> np.uint64(15)
    return int(a ^ b ^ c ^ d)


#: below this share of one thread's speed per thread (:func:`core_scaling`), the run says the cores were shared
SHARED_CORES = 0.8


def core_scaling(threads: int, seconds: float = 0.2, repeats: int = 3, work=None) -> float:
    """The machine's own ceiling for ``threads`` busy threads: the wall time of one thread running
    :func:`_integer_work` alone over the wall time of ``threads`` threads each running the same work
    at once (1.0: every core as fast as one alone), best of ``repeats``, timed in turn. A CPU-bound
    loop that shares nothing can only lose to the hardware (cores that share execution units or
    a clock budget, a host that time-slices the virtual CPUs), so a batch's ``efficiency`` against
    ``threads`` x raw ``mj_step`` cannot be expected above this figure, measured in the same run (the
    two are timed apart, so timing noise can put a batch a few percent above it). ``work(n)``:
    the work timed instead (tests), sized to about ``seconds`` s."""
    from concurrent.futures import ThreadPoolExecutor

    work = work or _integer_work
    work(1000)  # compile
    t0 = time.perf_counter()
    work(100_000)
    n = max(100_000, int(100_000 * seconds / max(time.perf_counter() - t0, 1e-6)))
    one = many = np.inf
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats):
            t0 = time.perf_counter()
            work(n)
            one = min(one, time.perf_counter() - t0)
            t0 = time.perf_counter()
            list(pool.map(work, [n] * threads))
            many = min(many, time.perf_counter() - t0)
    return one / many


def _mjw_raw_ms_per_step(scene, variants, device, steps: int, substeps: int) -> float:
    """ms per ``mujoco_warp.step`` launch on a fresh N-world batch model: zero control
    from the initial state, ``substeps`` steps per graph launch on CUDA (plain launches on CPU)."""
    import mujoco_warp
    import warp as wp

    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    b = WarpBatch(scene, variants, device=device)
    m, d = b.m, b.d
    ctx = b.solver._scoped_mujoco_warp_execution

    def frame():
        with ctx():
            for _ in range(substeps):
                mujoco_warp.step(m, d)

    frame()  # load every module
    graph = None
    if b.device.is_cuda:
        with wp.ScopedCapture(device=b.device) as cap:
            frame()
        graph = cap.graph
    frames = max(1, steps // substeps)
    wp.synchronize_device(b.device)
    t0 = time.perf_counter()
    for _ in range(frames):
        if graph is not None:
            wp.capture_launch(graph)
        else:
            frame()
    wp.synchronize_device(b.device)
    return (time.perf_counter() - t0) / (frames * substeps) * 1e3


def bench_warp(dataset, seq, data_dir, manosim, cfg, device, worlds: list[int], raw_steps: int) -> dict:
    """N worlds of one recording through the full protocol in one mujoco-warp launch, per N.

    The scene is built for MuJoCo C (probe, capacity, flutter damping, read-back);
    :class:`WarpBatch` rebuilds its world N times on ``device``. A 3-frame warm-up
    batch loads Warp's modules first; its time is reported as ``warmup_s``.
    """
    import warp as wp

    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    rec, coords, mjcf, _ = prepare_recording(dataset, seq, data_dir, manosim_dir=manosim, cfg=cfg)
    plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg=cfg)
    wdev = "cpu" if device == "warp-cpu" else "cuda:0"
    t0 = time.perf_counter()
    warm = WarpBatch(scene, [Variant(), Variant(friction=0.7)], device=wdev)
    step_protocol(plan, warm, cfg, frame_limit=3)
    warm.close()
    out = {"sequence": seq, "device": device, "warmup_s": time.perf_counter() - t0, "worlds": {}}
    hold_end = int(np.flatnonzero(plan.phase == PHASE_HOLD)[-1]) + 1  # worlds still running after it were lifted
    for n in worlds:
        variants = [Variant()] if n == 1 else [Variant(friction=float(mu)) for mu in np.linspace(0.5, 1.5, n)]
        t0 = time.perf_counter()
        b = WarpBatch(scene, variants, device=wdev)
        t_build = time.perf_counter() - t0
        t0 = time.perf_counter()
        tr = step_protocol(plan, b, cfg)
        wp.synchronize_device(b.device)
        t_step = time.perf_counter() - t0
        b.close()
        launch_steps = max(t.done for t in tr) * cfg.substeps
        world_steps = sum(t.done for t in tr) * cfg.substeps
        raw = _mjw_raw_ms_per_step(scene, variants, wdev, min(raw_steps, launch_steps), cfg.substeps)
        r = {"worlds": n, "build_s": t_build, "step_s": t_step, "launch_steps": int(launch_steps),
             "world_steps": int(world_steps), "frames": int(max(t.done for t in tr)),
             "unstable": int(sum(w.reason is not None for w in b.worlds)),
             "lifted_worlds": int(sum(t.done > hold_end for t in tr)),
             "engine_ms_per_step": t_step / launch_steps * 1e3,
             "ms_per_world_step": t_step / world_steps * 1e3,
             "mujoco_ms_per_step": raw,
             "rollouts_per_min": n / (t_build + t_step) * 60.0,
             "rollouts_per_min_stepping": n / t_step * 60.0}
        r["ratio"] = r["engine_ms_per_step"] / raw
        out["worlds"][str(n)] = r
    return out


def _worlds_arg(text: str, option: str = "--worlds") -> list[int]:
    try:
        vals = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise UsageError(option, f"expected comma-separated integers, got {text!r}") from None
    if not vals or min(vals) < 1:
        raise UsageError(option, f"must be >= 1, got {text!r}")
    return vals


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="grab", choices=RECORDING_DATASETS)
    p.add_argument("--objects", required=True, help="comma-separated object (or sequence) names")
    p.add_argument("--data", default=None, help="staged data folder; falls back to $REPLAY_MIRROR")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda", "warp-cpu"],
                   help="cuda / warp-cpu: also step --worlds worlds per mujoco-warp launch (GPU / Warp's CPU device)")
    p.add_argument("--worlds", default="1",
                   help="N or N1,N2,...: worlds of each recording in one batch (CPU: the largest, threads; "
                        "cuda/warp-cpu: each, one mujoco-warp launch)")
    p.add_argument("--raw-steps", type=int, default=480,
                   help="mujoco-warp steps timed for its own per-step cost (cuda/warp-cpu)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for the N-world batch")
    p.add_argument("--batch-worlds", default="8,32", help="N1,N2,...: batch sizes timed on 1 and 2 threads (CPU)")
    p.add_argument("--reference", action="store_true", help="also time the reference engine (SolverMuJoCo.step)")
    p.add_argument("--no-study", action="store_true", help="skip the whole-study rollouts/min figure")
    p.add_argument("--study-workers", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5, help="time each side this many times, in turn, keep the best")
    p.add_argument("--batch-repeats", type=int, default=5, help="the same for each batch of worlds")
    p.add_argument("--verbose", action="store_true", help="let Warp print its banner and module-load lines")
    a = p.parse_args(argv)
    worlds = _worlds_arg(a.worlds)
    batch_worlds = _worlds_arg(a.batch_worlds, "--batch-worlds")
    if a.repeats < 1 or a.batch_repeats < 1:
        bad = "--repeats" if a.repeats < 1 else "--batch-repeats"
        raise UsageError(bad, f"must be >= 1, got {min(a.repeats, a.batch_repeats)}")
    if a.device == "cuda":
        import warp as wp

        wp.config.quiet = True
        if not wp.is_cuda_available():
            raise UsageError("--device", "cuda requested but Warp finds no CUDA device")
    from replay.data import list_sequences

    cfg = resolve_hand_variant(ReplayConfig(), a.dataset)
    picked = select_sequences(a.dataset, list_sequences(a.dataset, a.data), a.objects, first_only=True)
    manosim = dataset_dir("manosim", a.data)
    result = {
        "machine": {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                    "platform": platform.platform()},
        "versions": package_versions(), "dataset": a.dataset, "device": a.device, "objects": {},
    }
    if not a.verbose:
        quiet_libraries()  # Warp's banner and module-load lines would split the table
    load0 = os.getloadavg()[0]
    scaling_threads = sorted({t for _, t in batch_grid(max(worlds), a.threads, batch_worlds) if t > 1})
    ceiling = {t: [core_scaling(t)] for t in scaling_threads}
    for t, (c,) in ceiling.items():
        print(f"machine: {t} threads of register-only integer work (nothing shared) each ran at {100 * c:.0f} % of "
              f"one thread alone: the {t}-thread figures below cannot be expected above that, beyond timing noise")
    print(f"{'object':<14} {'steps':>6} {'engine ms/step':>15} {'MuJoCo ms/step':>15} {'ours ms/step':>13} "
          f"{'ratio':>6} {'cpu ratio':>9} {'bit-identical':>13}")
    for seq in picked:
        r = bench_object(a.dataset, seq, a.data, manosim, cfg, max(worlds), a.threads, a.reference, a.repeats,
                         batch_worlds, a.batch_repeats)
        name = sequence_object(a.dataset, seq) or seq
        result["objects"][name] = r
        print(f"{name:<14} {r['steps']:>6} {r['engine_ms_per_step']:>15.4f} {r['mujoco_ms_per_step']:>15.4f} "
              f"{r['our_ms_per_step']:>13.4f} {r['ratio']:>6.2f} {r['cpu_ratio']:>9.2f} "
              f"{str(r['raw_replay_bit_identical']):>13}  spans: {r['spans']}")
        if "reference_ratio" in r:
            print(f"{'':<14} reference engine (SolverMuJoCo.step): {r['reference_engine_ms_per_step']:.4f} ms/step, "
                  f"ratio {r['reference_ratio']:.1f}")
        for b in r["batches"]:
            vs = (f"{100 * b['efficiency']:.0f} % of {b['threads']} x raw mj_step (raw MuJoCo's own rollout of "
                  f"these worlds: {100 * b['raw_efficiency']:.0f} %); " if b["kind"] == "identical" else "")
            print(f"{'':<14} {b['worlds']:>3} {b['kind']:<9} worlds, {b['threads']} threads: "
                  f"{b['ms_per_world_step']:.4f} ms per world-step ({b['world_steps_per_s']:.0f} world-steps/s), "
                  f"{vs}{100 * b['efficiency_same_work']:.0f} % of raw MuJoCo doing the same worlds on "
                  f"{b['threads']} threads (bit-identical {b['raw_same_work_bit_identical']})")
        if a.device in ("cuda", "warp-cpu"):
            wr = bench_warp(a.dataset, seq, a.data, manosim, cfg, a.device, worlds, a.raw_steps)
            r["warp"] = wr
            print(f"{'':<14} mujoco-warp on {a.device} (module load {wr['warmup_s']:.1f} s):")
            print(f"{'':<14} {'worlds':>7} {'rollouts/min':>13} {'stepping only':>14} {'ms/launch step':>15} "
                  f"{'ms/world step':>14} {'raw ms/step':>12} {'ratio':>6} {'build s':>8}")
            for n, x in wr["worlds"].items():
                print(f"{'':<14} {n:>7} {x['rollouts_per_min']:>13.1f} {x['rollouts_per_min_stepping']:>14.1f} "
                      f"{x['engine_ms_per_step']:>15.3f} {x['ms_per_world_step']:>14.4f} {x['mujoco_ms_per_step']:>12.3f} "
                      f"{x['ratio']:>6.2f} {x['build_s']:>8.1f}")
            for n, x in wr["worlds"].items():
                result.setdefault("warp_rollouts_per_min", {}).setdefault(n, {})[name] = x["rollouts_per_min"]
    if not a.no_study:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            study = run_study(a.dataset, Path(tmp) / "study.json", cfg, workers=a.study_workers,
                              data_dir=a.data, progress=False)
            wall = time.perf_counter() - t0
        n = study["counts"]["rollouts"] + study["counts"]["ablation_run"]
        result["study"] = {"rollouts": n, "recordings": study["counts"]["rollouts"], "wall_s": wall,
                           "workers": a.study_workers, "lifted": study["counts"]["lifted"],
                           "shake_held": study["counts"]["shake_held"]}
        result["study_rollouts_per_min"] = n / wall * 60.0
        print(f"study {a.dataset}: {n} rollouts ({study['counts']['rollouts']} recordings + ablation) in "
              f"{wall:.1f} s with {a.study_workers} workers = {result['study_rollouts_per_min']:.0f} rollouts/min "
              f"({study['counts']['lifted']} lifted, {study['counts']['shake_held']} held through the shake)")
    load1 = os.getloadavg()[0]
    result["machine"]["load_avg_1min"] = [load0, load1]
    for t in scaling_threads:  # again at the end: the host's share of the cores moves during a run
        ceiling[t].append(core_scaling(t))
        print(f"machine, at the end: {t} threads ran at {100 * ceiling[t][1]:.0f} % of one thread alone "
              f"(start: {100 * ceiling[t][0]:.0f} %)")
    result["machine"]["core_scaling"] = {str(t): c for t, c in ceiling.items()}
    low = {t: min(c) for t, c in ceiling.items() if min(c) < SHARED_CORES}
    if low:  # the load average cannot tell: it counts this run's own threads and workers, and lags a minute
        print("note: the cores were shared during this run (" + ", ".join(
            f"{t} threads at {100 * c:.0f} %" for t, c in low.items()) + " of one alone): other processes or the "
              "host took part of them, and every multi-thread figure above is low by about as much")
    if a.json:
        atomic_write_text(a.json, dumps(result))
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
