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

and prints ms per physics step for both and their ratio (each the best of
``--repeats`` runs). ``--worlds N`` also steps
N worlds of the recording (friction variants) in one batch with ``--threads``.
Unless ``--no-study``, it then runs the whole study of the dataset (replay +
contact ablation, ``--study-workers`` processes, landmark IK from the cache) and
prints rollouts per minute. ``--reference`` also times the reference engine
(every step through ``SolverMuJoCo.step``).

    python benchmarks/engine.py --dataset grab --objects cubesmall,mug --json out/bench/engine.json

``--device cuda`` is for a CUDA machine: the same figures for mujoco-warp (reference
engine, one world per launch) next to the CPU ones.
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

from replay.cli import run
from replay.config import ReplayConfig, resolve_hand_variant
from replay.data.locate import dataset_dir
from replay.engine import Variant
from replay.engine.mjc import MjcBatch
from replay.errors import UsageError
from replay.fileio import atomic_write_text
from replay.rollout import build_replay_scene, run_rollouts, step_protocol
from replay.study import dumps, package_versions, prepare_recording, run_study, sequence_object


def _recorded_controls(scene, plan, cfg):
    """Step the protocol once more, recording (ctrl, xfrc_applied) before every mj_step.

    Returns (initial full-physics state, controls (nstep, nu + 6 nbody), final qpos, qvel, batch)."""
    batch = MjcBatch(scene, [Variant()])
    w = batch.worlds[0]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.zeros(mujoco.mj_stateSize(w.m, spec))
    mujoco.mj_getState(w.m, w.d, s0, spec)
    log = []
    real_step = mujoco.mj_step

    def spy(m, d, *a, **k):
        log.append(np.concatenate([d.ctrl, d.xfrc_applied.reshape(-1)]))
        return real_step(m, d, *a, **k)

    mujoco.mj_step = spy
    try:
        step_protocol(plan, batch, cfg)
    finally:
        mujoco.mj_step = real_step
    return s0, np.asarray(log), w.d.qpos.copy(), w.d.qvel.copy(), batch


def bench_object(dataset, seq, data_dir, manosim, cfg, worlds, threads, reference, repeats=3) -> dict:
    rec, coords, mjcf, _ = prepare_recording(dataset, seq, data_dir, manosim, cfg)
    t0 = time.perf_counter()
    plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg)
    build_s = time.perf_counter() - t0

    # (a) the engine, timed (a warm-up pass compiles/loads numba's functions first);
    # best of ``repeats``, as for (b): the figure least disturbed by other processes
    step_protocol(plan, MjcBatch(scene, [Variant()]), cfg, frame_limit=3)
    t_engine = np.inf
    for _ in range(repeats):
        batch = MjcBatch(scene, [Variant()])
        t0 = time.perf_counter()
        trace = step_protocol(plan, batch, cfg)[0]
        t_engine = min(t_engine, time.perf_counter() - t0)
    nstep = trace.done * cfg.substeps
    q_engine = batch.worlds[0].d.qpos.copy()

    # (b) the same controls through MuJoCo's C loop
    s0, controls, q_rec, v_rec, rb = _recorded_controls(scene, plan, cfg)
    if len(controls) != nstep or not np.array_equal(q_rec, q_engine):
        raise RuntimeError(f"{seq}: the engine is not deterministic ({len(controls)} vs {nstep} steps)")
    m = rb.worlds[0].m
    d = mujoco.MjData(m)
    cspec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_XFRC_APPLIED
    warm = np.zeros((1, m.nv))
    with mj_rollout.Rollout(nthread=0) as r:
        r.rollout(m, d, s0[None], controls[None, :1], control_spec=cspec, initial_warmstart=warm)  # warm-up
        t_raw = np.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            state, _ = r.rollout(m, d, s0[None], controls[None], control_spec=cspec, initial_warmstart=warm)
            t_raw = min(t_raw, time.perf_counter() - t0)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    d_end = mujoco.MjData(m)
    mujoco.mj_setState(m, d_end, state[0, -1], spec)
    same = bool(np.array_equal(d_end.qpos, q_rec) and np.array_equal(d_end.qvel, v_rec))
    out = {
        "sequence": seq, "steps": int(nstep), "frames": int(trace.done), "build_s": build_s, "repeats": repeats,
        "engine_ms_per_step": t_engine / nstep * 1e3, "mujoco_ms_per_step": t_raw / nstep * 1e3,
        "raw_replay_bit_identical": same,
    }
    out["ratio"] = out["engine_ms_per_step"] / out["mujoco_ms_per_step"]
    if reference:
        ref_cfg = dataclasses.replace(cfg, engine="newton")
        r0 = run_rollouts(rec, coords, mjcf, ref_cfg, [Variant()])[0].metrics
        ref_steps = r0["frames"] * cfg.substeps
        out["reference_engine_ms_per_step"] = (r0["wall_s"] - r0["build_s"]) / ref_steps * 1e3
        out["reference_ratio"] = out["reference_engine_ms_per_step"] / out["mujoco_ms_per_step"]
    if worlds > 1:
        mus = np.linspace(0.5, 1.5, worlds)
        b = MjcBatch(scene, [Variant(friction=float(mu)) for mu in mus], threads=threads)
        t0 = time.perf_counter()
        tr = step_protocol(plan, b, cfg)
        t_b = time.perf_counter() - t0
        b.close()
        wsteps = sum(t.done for t in tr) * cfg.substeps
        out["batch"] = {"worlds": worlds, "threads": threads, "world_steps": int(wsteps), "wall_s": t_b,
                        "ms_per_world_step": t_b / wsteps * 1e3,
                        "world_steps_per_s": wsteps / t_b}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="grab", choices=["grab", "taco", "hug-bench"])
    p.add_argument("--objects", required=True, help="comma-separated object (or sequence) names")
    p.add_argument("--data", default=None, help="staged data folder; falls back to $REPLAY_MIRROR")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--worlds", type=int, default=1, help="also step N worlds of each recording in one batch")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for the N-world batch")
    p.add_argument("--reference", action="store_true", help="also time the reference engine (SolverMuJoCo.step)")
    p.add_argument("--no-study", action="store_true", help="skip the whole-study rollouts/min figure")
    p.add_argument("--study-workers", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3, help="time each side this many times, keep the best")
    a = p.parse_args(argv)
    if a.worlds < 1:
        raise UsageError("--worlds", f"must be >= 1, got {a.worlds}")
    if a.repeats < 1:
        raise UsageError("--repeats", f"must be >= 1, got {a.repeats}")
    if a.device == "cuda":
        import warp as wp

        wp.config.quiet = True
        if not wp.is_cuda_available():
            raise UsageError("--device", "cuda requested but Warp finds no CUDA device")
    from replay.data import list_sequences

    cfg = resolve_hand_variant(ReplayConfig(), a.dataset)
    seqs = list_sequences(a.dataset, a.data)
    names = [o.strip() for o in a.objects.split(",") if o.strip()]
    picked = []
    for n in names:
        hit = [s for s in seqs if s == n or sequence_object(a.dataset, s) == n]
        if not hit:
            raise UsageError("--objects", f"no {a.dataset} sequence for {n!r}")
        picked.append(hit[0])
    manosim = dataset_dir("manosim", a.data)
    result = {
        "machine": {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                    "platform": platform.platform()},
        "versions": package_versions(), "dataset": a.dataset, "device": a.device, "objects": {},
    }
    load0 = os.getloadavg()[0]
    print(f"{'object':<14} {'steps':>6} {'engine ms/step':>15} {'MuJoCo ms/step':>15} {'ratio':>6} {'same state':>10}")
    for seq in picked:
        r = bench_object(a.dataset, seq, a.data, manosim, cfg, a.worlds, a.threads, a.reference, a.repeats)
        name = sequence_object(a.dataset, seq) or seq
        result["objects"][name] = r
        print(f"{name:<14} {r['steps']:>6} {r['engine_ms_per_step']:>15.4f} {r['mujoco_ms_per_step']:>15.4f} "
              f"{r['ratio']:>6.2f} {str(r['raw_replay_bit_identical']):>10}")
        if "reference_ratio" in r:
            print(f"{'':<14} reference engine (SolverMuJoCo.step): {r['reference_engine_ms_per_step']:.4f} ms/step, "
                  f"ratio {r['reference_ratio']:.1f}")
        if "batch" in r:
            b = r["batch"]
            print(f"{'':<14} {b['worlds']} worlds, {b['threads']} threads: {b['ms_per_world_step']:.4f} ms per "
                  f"world-step ({b['world_steps_per_s']:.0f} world-steps/s)")
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
    if max(load0, load1) > 0.75 * (os.cpu_count() or 1):
        print(f"note: the machine was busy (1-min load {load0:.1f} -> {load1:.1f} on {os.cpu_count()} cores): "
              "other processes share the cores, and the per-step figures (the engine's Python side most) are high")
    if a.json:
        atomic_write_text(a.json, dumps(result))
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
