"""Validate the MANO -> manosim pose mapping / landmark IK against each dataset's reference.

Usage:
    python scripts/validate_pose_mapping.py --dataset grab --out out/pose_mapping_validation.json
    python scripts/validate_pose_mapping.py --dataset grab taco --sequences mug_lift 20231104_010

Writes the JSON summary (landmark error, mm, per dataset, landmark, finger and sequence) and a PNG of the error per
finger (``<out stem>.png``). Exit status: 0 done; 1 missing data or a sequence not validated; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from replay import console
from replay.checks import load_recording
from replay.cli import Parser, report, say_error
from replay.commands.common import add_data_dir_option
from replay.config import ReplayConfig
from replay.data import list_sequences
from replay.data.locate import dataset_dir
from replay.datasets import RECORDING_DATASETS
from replay.errors import ReplayError, UsageError
from replay.fileio import atomic_write_text, ensure_parent
from replay.kinematics.ik import IKOptions, ik_options_for
from replay.kinematics.validate import plot_finger_errors, sequence_errors, summarize
from replay.sim.hand_assets import HAND_SHAPES, hand_mjcf_path, resolve_hand_variant


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", nargs="+", required=True, choices=RECORDING_DATASETS)
    ap.add_argument("--sequences", nargs="*", default=None, help="sequence names (default: all of each dataset)")
    ap.add_argument("--out", type=Path, default=Path("out/pose_mapping_validation.json"))
    add_data_dir_option(ap)
    ap.add_argument("--stride", type=int, default=IKOptions.stride, help="landmark IK: fit every Nth frame")
    ap.add_argument(
        "--window",
        choices=["all", "grasp"],
        default="all",
        help="frames to evaluate: all, or from the start to grasp_frame + --hold-s",
    )
    ap.add_argument("--hold-s", type=float, default=3.0, help="seconds after grasp_frame kept by --window grasp")
    ap.add_argument(
        "--hand-side",
        nargs="*",
        default=[],
        metavar="DATASET=SIDE",
        help="override the adapter's hand_side for a dataset, e.g. taco=left (recorded in the JSON)",
    )
    ap.add_argument(
        "--hand-shape",
        choices=sorted(HAND_SHAPES),
        default=None,
        help="manosim hand shape (default: the study's per-dataset choice, "
        "replay.datasets: zerohand for grab/taco, myhand for hug-bench; fitted: the recording's own hand, "
        "docs/hand.md)",
    )
    ap.add_argument("--no-cache", action="store_true", help="do not read or write the IK cache")
    return ap


def _validate_one(ds: str, name: str, args, side: str | None, shape: str, opts: IKOptions):
    """``(recording, errors)``: its pose on the manosim ``shape`` hand, FK against the landmarks. Raises ReplayError:
    cannot be loaded or validated."""
    rec = load_recording(ds, name, args.data_dir)
    if side is not None and rec.hand_side != side:
        rec = dataclasses.replace(rec, hand_side=side, meta=dict(rec.meta, hand_side_override=side))
    window = None
    if args.window == "grasp":
        window = (0, min(rec.num_frames, rec.grasp_frame + int(round(args.hold_s * rec.fps)) + 1))
    cfg = ReplayConfig(physics_overrides={"hand_shape": shape})
    mjcf = hand_mjcf_path(dataset_dir("manosim", args.data_dir), cfg, rec.hand_side, recording=rec)
    opts = ik_options_for(mjcf, stride=opts.stride)
    return rec, sequence_errors(rec, mjcf, ik_options=opts, window=window, cache=not args.no_cache)


def _selected(args) -> list[tuple[str, str]]:
    """(dataset, sequence) pairs to validate, in order. Raises ReplayError: a dataset not found; UsageError: a
    ``--sequences`` name staged nowhere."""
    available = {ds: list_sequences(ds, args.data_dir) for ds in args.dataset}
    if args.sequences:
        unknown = set(args.sequences) - {n for names in available.values() for n in names}
        if unknown:
            listing = "; ".join(f"{ds}: {', '.join(names)}" for ds, names in available.items())
            raise UsageError("--sequences", f"unknown sequence(s) {sorted(unknown)}; available: {listing}")
    return [(ds, n) for ds in args.dataset for n in available[ds] if not args.sequences or n in args.sequences]


def _validate(args, sides: dict, shapes: dict, opts, flags: dict):
    """One ``dataset/sequence`` key validated, its line printed."""

    def one(key: str):
        ds, name = key.split("/", 1)
        t1 = time.perf_counter()
        shapes[ds] = args.hand_shape or resolve_hand_variant(ReplayConfig(), ds).physics_overrides["hand_shape"]
        rec, s = _validate_one(ds, name, args, sides.get(ds), shapes[ds], opts)
        flags[(ds, name)] = rec.meta.get("input_flags", {})
        if flags[(ds, name)]:
            console.out(f"{ds}/{name}: input flags {json.dumps(flags[(ds, name)])}")
        e = s.errors[np.isfinite(s.errors)]
        console.out(
            f"{ds}/{name}: {len(s.frames)} frames, median {np.median(e):.2f} mm, "
            f"p90 {np.percentile(e, 90):.2f} mm, max {e.max():.2f} mm ({time.perf_counter() - t1:.1f} s)"
        )
        return s

    return one


def main(argv: list[str] | None = None) -> int:
    from replay.study.batch import run_batch

    ap = build_parser()
    args = ap.parse_args(argv)
    ensure_parent(args.out)  # an unwritable --out fails now, not after minutes of IK

    opts = IKOptions(stride=args.stride)
    sides, shapes = {}, {}
    for item in args.hand_side:
        ds, _, side = item.partition("=")
        if side not in ("left", "right"):
            ap.error(f"--hand-side expects DATASET=left|right, got {item!r}")
        sides[ds] = side
    try:
        keys = [f"{ds}/{n}" for ds, n in _selected(args)]
    except ReplayError as exc:
        return report(exc)
    flags: dict[tuple[str, str], dict] = {}
    res = run_batch(
        keys,
        _validate(args, sides, shapes, opts, flags),
        isolate=(ReplayError,),
        label="validate_pose_mapping",
        on_fail=lambda key, exc: say_error(f"{key}: {exc}"),
    )
    if res.interrupted:
        return 130
    seqs, errors = list(res.results.values()), res.failed
    if not seqs:
        say_error("no sequence could be validated" if errors else "no sequence selected")
        return 1
    summary = summarize(seqs)
    for entry in summary["sequences"]:
        entry["input_flags"] = flags.get((entry["dataset"], entry["name"]), {})
    summary["errors"] = errors
    summary["run"] = {
        "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
        "seconds": round(res.wall_s, 1),
        "ik_options": dataclasses.asdict(opts),
        "ik_landmark_weights": "per hand (replay.kinematics.ik.ik_options_for: a fitted hand's tips 1.5, others 3); "
        "each sequence's own under sequences[].mapping.ik_options",
        "window": args.window,
        "hand_shape": shapes,
        "hold_s": args.hold_s if args.window == "grasp" else None,
        "hand_side_override": sides,
        "versions": res.versions,
        "mirror": os.environ.get("REPLAY_MIRROR"),
    }
    atomic_write_text(args.out, json.dumps(summary, indent=1, default=str))
    png = plot_finger_errors(seqs, args.out.with_suffix(".png"), title="pose mapping: manosim FK vs recorded")
    o = summary["overall"]["all"]
    for ds, d in summary.get("datasets", {}).items():
        a = d["all"]
        console.out(
            f"{ds}: {d['frames']} frames, median {a['median_mm']} mm, p90 {a['p90_mm']} mm, max {a['max_mm']} mm"
        )
    console.out(
        f"overall: {summary['overall']['frames']} frames, median {o['median_mm']} mm, p90 {o['p90_mm']} mm, "
        f"max {o['max_mm']} mm -> {args.out}, {png}"
    )
    if errors:
        say_error(f"{len(errors)} sequence(s) could not be validated (see above); the others are in {args.out}")
        return 1
    return 0
