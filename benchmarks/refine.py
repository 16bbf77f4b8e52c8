#!/usr/bin/env python
"""Benchmark: the refine search's worlds against raw MuJoCo on the same compiled model, in one run.

For each ``--objects`` recording of ``--dataset`` it

1. builds the lift scene and draws one CEM batch of ``--worlds`` corrections (seeded, the
   search's first spread: :mod:`replay.protocol.refine`);
2. evaluates it as the search does (:func:`replay.protocol.refine._evaluate`: the one sampling path,
   :func:`replay.protocol.rollout.run_rollouts`, one :class:`replay.sim.engine.mujoco_c.mjc.MjcBatch`
   with ``--threads`` threads, stepped to the end of the hold with the mid-lift early stop, each
   world judged), timed: rollouts/s and world-steps/s;
3. steps the batch again in one thread while recording the ``ctrl`` and ``xfrc_applied``
   each world's MuJoCo got before every ``mj_step`` (checking it ends in the same state), and
   replays every world's controls through MuJoCo's own C loop (``mujoco.rollout`` with
   ``--threads`` threads) on that world's model from its initial state: the cores' raw
   ``mj_step`` throughput on the same work;
4. with ``--check-early-stop``, steps the batch once more without the early stop and counts
   worlds the early stop ended that would have lifted (must be 0);

and prints the search's share of the raw throughput, and the projected time to refine 30
lifts on 2 cores: ``30 * rollouts per recording / (2 * per-core search rollouts/s)`` with
``--rollouts-per-recording`` (default: measured by a refine study, ``--study``; else 100).

    python benchmarks/refine.py --dataset grab --objects camera,mug --threads 2 --json out/bench/refine.json
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import mujoco
import numpy as np
from mujoco import rollout as mj_rollout

from replay.cli import run
from replay.config import ReplayConfig
from replay.data.locate import dataset_dir
from replay.datasets import RECORDING_DATASETS
from replay.fileio import atomic_write_text
from replay.protocol import refine
from replay.protocol.plan import PHASE_HOLD
from replay.protocol.rollout import Stepping, build_replay_scene, mid_lift_stop, run_rollouts
from replay.protocol.step_plan import step_protocol
from replay.results.files import dumps
from replay.sim.engine.mujoco_c.mjc import MjcBatch
from replay.sim.hand_assets import resolve_hand_variant
from replay.study.prepare import prepare_recording


def _batch(s: refine.RefineSettings, n: int) -> list:
    """The search's first batch of ``n`` corrections (seeded)."""
    rng = np.random.default_rng(s.seed)
    bounds = np.array([s.wrist_mm] * 3 + [s.wrist_deg] * 3 + [s.finger_deg] * 5, float)
    return refine._propose(rng, np.zeros(11), bounds / 2.0, None, n, s)


def _stop_rule(plan, cfg, s):
    """``(hold end frame, the search's early stop)`` (:func:`replay.protocol.rollout.mid_lift_stop`)."""
    hold_end = int(np.flatnonzero(plan.phase == PHASE_HOLD)[-1]) + 1
    return hold_end, mid_lift_stop(plan, s.mid_lift_rise_frac * cfg.lift.lifted_min_rise)


def _recorded(scene, plan, cfg, xs, s):
    """Step the batch in one thread recording per world (initial state, controls, final qpos): each
    world's ``ctrl`` and ``xfrc_applied`` just before every physics step, through the batch's
    ``recorder`` hook (its Python loop, the same trajectory)."""
    hold_end, early = _stop_rule(plan, cfg, s)
    batch = MjcBatch(scene, [refine.to_variant(x) for x in xs], threads=1, c_loop=False)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0, logs = [], [[] for _ in batch.worlds]
    for w in batch.worlds:
        s0.append(np.zeros(mujoco.mj_stateSize(w.m, spec)))
        mujoco.mj_getState(w.m, w.d, s0[-1], spec)
    batch.recorder = lambda i, d: logs[i].append(np.concatenate([d.ctrl, d.xfrc_applied.reshape(-1)]))
    step_protocol(plan, batch, cfg, frame_limit=hold_end, early_stop=early)
    return batch, s0, [np.asarray(x) for x in logs]


def _raw_steps_per_s(batch, s0, controls, repeats: int, threads: int) -> tuple[float, bool]:
    """Raw mj_step rate, steps/s, of ``mujoco.rollout`` with ``threads`` threads over every world's
    recorded controls (worlds grouped by their number of steps, one rollout call per group), and
    whether each replay reached the engine's final state bit for bit."""
    cspec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_XFRC_APPLIED
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(controls):
        groups.setdefault(len(c), []).append(i)
    total, steps, same = 0.0, 0, True
    with mj_rollout.Rollout(nthread=threads if threads > 1 else 0) as r:
        for n, idx in sorted(groups.items()):
            ms = [batch.worlds[i].m for i in idx]
            ds = [mujoco.MjData(ms[0]) for _ in range(max(1, threads))]
            st = np.stack([s0[i] for i in idx])
            ctrl = np.stack([controls[i] for i in idx])
            warm = np.zeros((len(idx), ms[0].nv))
            best = np.inf
            for _ in range(repeats):
                t0 = time.perf_counter()
                state, _ = r.rollout(ms, ds, st, ctrl, control_spec=cspec, initial_warmstart=warm)
                best = min(best, time.perf_counter() - t0)
            total += best
            steps += n * len(idx)
            for k, i in enumerate(idx):
                w = batch.worlds[i]
                d = mujoco.MjData(w.m)
                mujoco.mj_setState(w.m, d, state[k, -1], spec)
                same &= bool(np.array_equal(d.qpos, w.d.qpos) and np.array_equal(d.qvel, w.d.qvel))
    return steps / total, same


def bench_object(dataset, seq, data_dir, manosim, cfg, worlds, threads, repeats, check_early, c_loop=True) -> dict:
    """The figures of one recording (module doc)."""
    rec, coords, mjcf, _ = prepare_recording(dataset, seq, data_dir, manosim_dir=manosim, cfg=cfg)
    plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg=cfg)
    s = refine.RefineSettings(threads=threads, c_loop=c_loop)
    xs = _batch(s, worlds)
    target = refine.Target(rec, coords, mjcf)
    refine._evaluate(target, cfg, xs[:1], s)  # warm-up (numba's cache, first model copy)
    t_search, samples = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        samples = refine._evaluate(target, cfg, xs, s)
        t_search = min(t_search, time.perf_counter() - t0)
    batch, s0, controls = _recorded(scene, plan, cfg, xs, s)
    steps = sum(len(c) for c in controls)
    raw, same = _raw_steps_per_s(batch, s0, controls, repeats, threads)
    out = {"sequence": seq, "worlds": worlds, "threads": threads, "c_loop": c_loop, "world_steps": int(steps),
           "lifted": sum(p.lifted for p in samples), "search_s": t_search,
           "rollouts_per_s": worlds / t_search, "search_steps_per_s": steps / t_search,
           "raw_steps_per_s_cores": raw,
           "raw_replay_bit_identical": same}
    out["share_of_raw"] = out["search_steps_per_s"] / out["raw_steps_per_s_cores"]
    if check_early:
        hold_end, _ = _stop_rule(plan, cfg, s)  # the same worlds on the one path, to the hold's end, no early stop
        judge = Stepping(
            measure=lambda rec, plan, scene, cfg, tr, world: {
                "lifted_by_hold_end": refine.lift_verdict(rec, plan, scene, cfg=cfg, tr=tr, world=world)[0]
            }
        )
        full = [r.metrics["lifted_by_hold_end"] for r in run_rollouts(
            rec, coords, mjcf, cfg=cfg, variants=[refine.to_variant(x) for x in xs], frame_limit=hold_end, threads=threads, stepping=judge)]
        out["early_stop_false_negatives"] = int(sum(f and not p.lifted for f, p in zip(full, samples)))
        out["early_stopped"] = int(sum(len(c) < hold_end * cfg.substeps for c in controls))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="grab", choices=RECORDING_DATASETS)
    p.add_argument("--objects", default="camera,mug", help="comma-separated sequences or objects")
    p.add_argument("--data", default=None)
    p.add_argument("--worlds", type=int, default=24)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads = cores the figures are for")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--check-early-stop", action="store_true")
    p.add_argument("--python-loop", action="store_true", help="step substeps in Python (MjcBatch(c_loop=False), the same trajectory) instead")
    p.add_argument("--rollouts-per-recording", type=float, default=None)
    p.add_argument("--study", type=Path, default=None, help="a refine study JSON: its mean refine_rollouts")
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    cfg = resolve_hand_variant(ReplayConfig(), a.dataset)
    manosim = dataset_dir("manosim", a.data)
    load0 = os.getloadavg()[0]
    rows = []
    for name in [x.strip() for x in a.objects.split(",") if x.strip()]:
        seq = name if name.endswith("_lift") or a.dataset != "grab" else f"{name}_lift"
        rows.append(bench_object(a.dataset, seq, a.data, manosim, cfg, a.worlds, a.threads, a.repeats,
                                 a.check_early_stop, c_loop=not a.python_loop))
        r = rows[-1]
        loop = "C" if r["c_loop"] else "Python"
        print(f"{seq}: {r['worlds']} worlds, {r['threads']} threads, {loop} loop: {r['rollouts_per_s']:.1f} rollouts/s, "
              f"{r['search_steps_per_s']:.0f} steps/s; raw mj_step (mujoco.rollout, same controls, {r['threads']} threads) "
              f"{r['raw_steps_per_s_cores']:.0f} steps/s: search at {r['share_of_raw']:.0%}"
              f" (raw replay bit-identical: {r['raw_replay_bit_identical']})"
              + (f"; early stop false negatives {r['early_stop_false_negatives']}" if a.check_early_stop else ""))
    rpr = a.rollouts_per_recording
    if rpr is None and a.study is not None:
        import json

        refined = json.loads(a.study.read_text()).get("refine_rollouts") or []
        rpr = float(np.mean([r["refine_rollouts"] for r in refined])) if refined else None
    rpr = 100.0 if rpr is None else rpr
    per_core = np.mean([r["rollouts_per_s"] / r["threads"] for r in rows])
    proj = 30 * rpr / (2 * per_core)
    print(f"projected: 30 lifts x {rpr:.0f} rollouts on 2 cores at {per_core:.1f} rollouts/s per core: "
          f"{proj / 60:.1f} min (load average {load0:.1f} -> {os.getloadavg()[0]:.1f})")
    if a.json:
        doc = {"rows": rows, "rollouts_per_recording": rpr, "projected_30_lifts_2_cores_s": proj,
               "load_average": [load0, os.getloadavg()[0]]}
        a.json.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(a.json, dumps(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
