#!/usr/bin/env python
"""Executor overhead per rollout: the process pool vs Ray tasks, one recording at a time.

    python benchmarks/executor_overhead.py --data data --objects mug,cubesmall [--json out/bench/executors.json]

For each executor the study runs with one worker (Ray: a local instance of one CPU), so the
recordings run one after the other and the overhead per rollout is
``(study wall - sum of the jobs' own wall_s_total) / n``: starting workers, importing, shipping
jobs and results. Ray is measured twice in one Ray session (cold: its workers start and import;
warm: they are reused), plus ``ray.init`` and a no-op task's round trip.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from replay.config import ReplayConfig
from replay.study.executor import Executor
from replay.study.runner import run_study


def _overhead(study: dict, wall: float) -> dict:
    own = sum(r["wall_s_total"] for r in study["rollouts"])
    n = len(study["rollouts"])
    return {"wall_s": wall, "jobs_s": own, "overhead_per_rollout_s": (wall - own) / n,
            "outcomes": [r["outcome"] for r in study["rollouts"]]}


def _noop():
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=None)
    ap.add_argument("--objects", default="mug,cubesmall")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    import ray

    objs = a.objects.split(",")
    res = {}
    with tempfile.TemporaryDirectory() as d:
        def study(tag, **kw):
            t0 = time.perf_counter()
            s = run_study("grab", Path(d) / tag / "study.json", ReplayConfig(), objects=objs, progress=False,
                          data_dir=a.data, **kw)
            return _overhead(s, time.perf_counter() - t0)

        res["pool"] = study("pool", workers=1)
        t0 = time.perf_counter()
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
        res["ray_init_s"] = time.perf_counter() - t0
        res["ray_cold"] = study("ray_cold", executor=Executor.RAY)
        res["ray_warm"] = study("ray_warm", executor=Executor.RAY)
        f = ray.remote(_noop)
        ray.get(f.remote())
        t0 = time.perf_counter()
        for _ in range(20):
            ray.get(f.remote())
        res["ray_noop_roundtrip_ms"] = (time.perf_counter() - t0) / 20 * 1e3
        ray.shutdown()
    print(json.dumps(res, indent=1))
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
