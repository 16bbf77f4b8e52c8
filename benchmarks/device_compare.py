#!/usr/bin/env python
"""Benchmark: the same study on the CPU backend and on CUDA, in one run on one machine.

Runs ``replay.study.runner.run_study`` (replay + contact ablation, the full default
protocol) for the chosen recordings once per device, in this process
(``workers=0``), after a short warm-up rollout per device so Warp's kernel
compilation is reported separately and not charged to the first rollout. Prints,
per recording and device: outcome, rise (mm), wrist tracking median (mm), ablation
displacement (mm), wall time (s) and real-time factor, then the CUDA/CPU wall-time
ratio per recording and its median. Agreement between devices is reported, not
asserted: the two backends run different collision code (MuJoCo C vs mujoco-warp),
so contacts, and with them marginal grasps, may differ.

    python benchmarks/device_compare.py --dataset grab --objects cubesmall,mug,stamp \\
        --json out/device_compare.json

Needs a CUDA device for ``cuda`` (``--devices cpu`` alone runs anywhere).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from replay.cli import run
from replay.config import ReplayConfig
from replay.datasets import RECORDING_DATASETS
from replay.errors import UsageError
from replay.fileio import atomic_write_text
from replay.results.engine_choice import from_legacy
from replay.results.files import read_rollout
from replay.sim.hand_assets import resolve_hand_variant


def warm_up(dataset: str, sequence: str, cfg: ReplayConfig, data_dir) -> float:
    """Seconds for a 3-frame rollout on ``cfg.device`` (Warp compiles its kernels here)."""
    from replay.checks import load_recording
    from replay.data.locate import dataset_dir
    from replay.protocol.rollout import run_rollout
    from replay.sim.hand_assets import hand_mjcf_path
    from replay.study.prepare import crop_recording, hand_trajectory

    rec = load_recording(dataset, sequence, data_dir)
    g = rec.grasp_frame
    # a fitted hand: every frame
    mjcf = hand_mjcf_path(dataset_dir("manosim", data_dir), cfg, rec.hand_side, recording=rec)
    rec = crop_recording(rec, max(0, g - 20), min(rec.num_frames, g + 4))
    rec, coords = hand_trajectory(rec, mjcf)
    t0 = time.perf_counter()
    run_rollout(rec, coords, mjcf, cfg=cfg, frame_limit=3)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="grab", choices=RECORDING_DATASETS)
    p.add_argument("--objects", required=True, help="comma-separated object names")
    p.add_argument("--devices", default="cpu,cuda", help="comma-separated, from cpu and cuda")
    p.add_argument("--data", default=None, help="staged data folder; falls back to $REPLAY_MIRROR")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    a = p.parse_args(argv)
    devices = [d.strip() for d in a.devices.split(",") if d.strip()]
    if not devices or set(devices) - {"cpu", "cuda"}:
        raise UsageError("--devices", f"expected cpu and/or cuda, got {a.devices!r}")
    if "cuda" in devices:
        import warp as wp

        wp.config.quiet = True  # no banner before a one-line error
        if not wp.is_cuda_available():
            raise UsageError("--devices", "cuda requested but Warp finds no CUDA device (use --devices cpu)")
    objects = [o.strip() for o in a.objects.split(",") if o.strip()]
    from replay.data import list_sequences
    from replay.study.batch import package_versions
    from replay.study.prepare import sequence_object
    from replay.study.runner import run_study

    machine = {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine()}
    if "cuda" in devices:
        machine["gpu"] = wp.get_cuda_device(0).name
    report: dict = {"dataset": a.dataset, "objects": objects, "machine": machine, "versions": package_versions(),
                    "devices": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for dev in devices:
            engine, device = from_legacy("mujoco", "direct", dev)  # cpu: MuJoCo C; cuda: mujoco-warp
            cfg = resolve_hand_variant(ReplayConfig(engine=engine, device=device).validate(), a.dataset)
            first = next((s for s in list_sequences(a.dataset, a.data)
                          if objects[0] in (s, sequence_object(a.dataset, s))), None)
            if first is None:
                raise UsageError("--objects", f"no {a.dataset} sequence for {objects[0]!r}")
            compile_s = warm_up(a.dataset, first, cfg, a.data)
            t0 = time.perf_counter()
            # workers=0: in this process, after its warm-up (no process start or kernel load in the timing)
            study = run_study(a.dataset, Path(tmp) / dev / "study.json", cfg, objects=objects, workers=0,
                              data_dir=a.data, progress=False)
            rows = {}
            for r in study["rollouts"]:
                rec = read_rollout(Path(tmp) / dev / r["json"])
                ab = rec.ablation
                rows[r["object"]] = {
                    "outcome": rec.outcome, "rise_mm": 1e3 * rec.lift.rise if rec.lift.rise is not None else None,
                    "wrist_err_median_mm": rec.grasp.wrist_err_median_mm,
                    "contacts_force_at_lift": rec.grasp.contacts_force_at_lift,
                    "ablation_max_disp_mm": ab.grasp.max_object_disp_mm if ab else None,
                    "wall_s": rec.timing.wall_s, "ablation_wall_s": ab.timing.wall_s if ab else None,
                    "rtf": rec.timing.rtf, "contact_capacity": rec.scene.contact_capacity,
                    "peak_contacts": rec.grasp.peak_contacts,
                }
            report["devices"][dev] = {"warm_up_s": compile_s, "study_wall_s": time.perf_counter() - t0,
                                      "failed": study.get("failed"), "rollouts": rows}
            print(f"[{dev}] warm-up (kernel compile + 3 frames) {compile_s:.1f} s, study "
                  f"{report['devices'][dev]['study_wall_s']:.1f} s, failed: {len(study.get('failed') or {})}")
            for name, row in rows.items():
                print(f"  {name:14s} {row['outcome']:9s} rise {_f(row['rise_mm'])} mm  wrist {_f(row['wrist_err_median_mm'])} mm"
                      f"  force contacts {row['contacts_force_at_lift']}  ablation {_f(row['ablation_max_disp_mm'])} mm"
                      f"  wall {_f(row['wall_s'])} s  rtf {_f(row['rtf'], 2)}")
    if {"cpu", "cuda"} <= set(report["devices"]):
        cpu, gpu = report["devices"]["cpu"]["rollouts"], report["devices"]["cuda"]["rollouts"]
        ratios, agree = [], 0
        print("cuda vs cpu (same machine, same run):")
        for name in cpu:
            if name not in gpu or not cpu[name]["wall_s"] or not gpu[name]["wall_s"]:
                continue
            ratio = gpu[name]["wall_s"] / cpu[name]["wall_s"]
            ratios.append(ratio)
            same = cpu[name]["outcome"] == gpu[name]["outcome"]
            agree += same
            print(f"  {name:14s} wall cuda/cpu {ratio:.2f}  outcome {'same' if same else 'DIFFERS'}"
                  f" ({cpu[name]['outcome']} / {gpu[name]['outcome']})  rise diff "
                  f"{_f(_diff(gpu[name]['rise_mm'], cpu[name]['rise_mm']))} mm")
        report["cuda_over_cpu_wall_median"] = float(np.median(ratios)) if ratios else None
        report["outcomes_agree"] = f"{agree}/{len(ratios)}"
        print(f"  median wall ratio cuda/cpu {_f(report['cuda_over_cpu_wall_median'], 2)}; outcomes agree {agree}/{len(ratios)}")
    if a.json is not None:
        atomic_write_text(a.json, json.dumps(report, indent=1, default=float) + "\n")
        print(f"wrote {a.json}")
    return 0


def _f(v, nd: int = 1) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def _diff(a, b):
    return None if a is None or b is None else a - b


if __name__ == "__main__":
    sys.exit(run(main))
