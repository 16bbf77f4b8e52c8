#!/usr/bin/env python
"""Is each object asset liftable at all? The nine-phase parallel-jaw grasp-and-lift check (docs/gripper_check.md).

    python scripts/gripper_check.py --dataset grab --out out/grab/gripper --data ../shared/datasets
    python scripts/gripper_check.py --dataset grab --objects cubesmall,mug --out out/grab/gripper

Writes ``<out>/gripper.json``, ``gripper.csv`` (one row per object) and ``gripper.html``. Exit status 0 whatever the
verdicts; 1 when a recording or asset could not be loaded.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from replay import console
from replay.cli import Parser, report, say_error
from replay.datasets import RECORDING_DATASETS
from replay.errors import ReplayError


def build_parser() -> argparse.ArgumentParser:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True, choices=RECORDING_DATASETS)
    p.add_argument("--objects", default=None, help="comma-separated object names (default: all)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--data", default=None, help="staged data folder; falls back to $REPLAY_MIRROR")
    p.add_argument(
        "--workers", type=int, default=0, help="worker processes, one recording each; 0: in this process (default)"
    )
    p.add_argument("--pad-friction", type=float, default=None, help="pad sliding friction (default 1.0)")
    return p


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    from replay.output.gripper_section import gripper_section_html
    from replay.sim.gripper import FixtureConfig
    from replay.study.executor import where_run
    from replay.study.gripper_check import LINE_NAMES, run_gripper_check

    fixture = FixtureConfig()
    if a.pad_friction is not None:
        if not a.pad_friction > 0:
            say_error(f"--pad-friction must be > 0, got {a.pad_friction}")
            return 2
        fixture = dataclasses.replace(fixture, pad_friction=a.pad_friction)
    objects = [s.strip() for s in a.objects.split(",") if s.strip()] if a.objects else None
    try:
        rec = run_gripper_check(a.dataset, a.out, a.data, objects=objects, fixture=fixture, workers=max(0, a.workers))
    except ReplayError as e:
        return report(e)
    html = Path(a.out) / "gripper.html"
    html.write_text(
        f"<!doctype html><meta charset='utf-8'><title>grasp and lift: {a.dataset}</title>\n"
        + gripper_section_html(rec.to_dict())
    )
    for r in rec.rows:
        console.out(
            f"{r['object']:16s} {r['verdict']:20s} " + "  ".join(f"{n}={r[f'{n}_result'] or '-'}" for n in LINE_NAMES)
        )
    passed = sum(1 for r in rec.rows if r["passed"])
    console.out(
        f"{passed}/{len(rec.rows)} objects pass; {rec.wall_s:.1f} s {where_run(rec.workers)}; {a.out}/gripper.json"
    )
    for seq, why in rec.failed.items():
        console.err(f"failed: {seq}: {why}")
    return 1 if rec.failed else 0
