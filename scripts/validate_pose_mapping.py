"""Validate the MANO -> manosim pose mapping / landmark IK against each dataset's reference.

Usage:
    python scripts/validate_pose_mapping.py --dataset grab --out out/pose_mapping_validation.json
    python scripts/validate_pose_mapping.py --dataset grab taco --sequences mug_lift 20231104_010

Writes the JSON summary (per dataset and overall: frames, median / p90 / max landmark
error in mm, per landmark, per finger, worst frames, per-sequence figures and the
mapping used) and a PNG of the error distribution per finger next to it
(``<out stem>.png``). Data come from ``data/`` or ``$REPLAY_MIRROR`` (or ``--data-dir``).
Exit status (the convention of replay.cli): 0 done, 1 missing or unreadable data or
a sequence that could not be validated (named; the others are still validated and
written, with any input flags of replay.checks.input_checks), 2 bad arguments (an unknown
sequence among them).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

import mujoco
import numpy as np
import scipy

from replay.cli import folder_arg, report, say_error
from replay.config import DEFAULT_HAND_VARIANT
from replay.data import list_sequences
from replay.checks import load_recording
from replay.datasets import RECORDING_DATASETS
from replay.errors import ReplayError, UsageError
from replay.fileio import atomic_write_text, ensure_parent
from replay.kinematics.coords import default_mjcf
from replay.kinematics.ik import IKOptions
from replay.kinematics.validate import plot_finger_errors, sequence_errors, summarize


def build_parser() -> argparse.ArgumentParser:
    """The command line (``--help`` lists every option)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", nargs="+", required=True, choices=RECORDING_DATASETS)
    ap.add_argument("--sequences", nargs="*", default=None, help="sequence names (default: all of each dataset)")
    ap.add_argument("--out", type=Path, default=Path("out/pose_mapping_validation.json"))
    ap.add_argument("--data", "--data-dir", dest="data_dir", type=folder_arg, default=None, help="staged data folder (default data/ or $REPLAY_DATA)")
    ap.add_argument("--stride", type=int, default=IKOptions.stride, help="landmark IK: fit every Nth frame")
    ap.add_argument("--window", choices=["all", "grasp"], default="all",
                    help="frames to evaluate: all, or from the start to grasp_frame + --hold-s")
    ap.add_argument("--hold-s", type=float, default=3.0, help="seconds after grasp_frame kept by --window grasp")
    ap.add_argument("--hand-side", nargs="*", default=[], metavar="DATASET=SIDE",
                    help="override the adapter's hand_side for a dataset, e.g. taco=left (recorded in the JSON)")
    ap.add_argument("--hand-shape", choices=["myhand", "zerohand"], default=None,
                    help="manosim hand shape (default: the study's per-dataset choice, "
                         "replay.datasets: zerohand for grab/taco, myhand for hug-bench)")
    ap.add_argument("--no-cache", action="store_true", help="do not read or write the IK cache")
    return ap


def _validate_one(ds: str, name: str, args, side: str | None, shape: str, opts: IKOptions):
    """Load one recording (its hand side overridden when ``side`` is given), map its pose onto
    the manosim ``shape`` hand and measure FK against the landmarks: ``(recording, errors)``.

    Raises:
        ReplayError: the recording cannot be loaded or validated (bad input, refused).
    """
    rec = load_recording(ds, name, args.data_dir)
    if side is not None and rec.hand_side != side:
        rec = dataclasses.replace(rec, hand_side=side, meta=dict(rec.meta, hand_side_override=side))
    window = None
    if args.window == "grasp":
        window = (0, min(rec.num_frames, rec.grasp_frame + int(round(args.hold_s * rec.fps)) + 1))
    mjcf = default_mjcf(rec.hand_side, shape, args.data_dir)
    return rec, sequence_errors(rec, mjcf, ik_options=opts, window=window, cache=not args.no_cache)


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    ensure_parent(args.out)  # an unwritable --out fails now, not after minutes of IK

    opts = IKOptions(stride=args.stride)
    sides = {}
    shapes = {}
    for item in args.hand_side:
        ds, _, side = item.partition("=")
        if side not in ("left", "right"):
            ap.error(f"--hand-side expects DATASET=left|right, got {item!r}")
        sides[ds] = side
    t0 = time.perf_counter()
    seqs = []
    errors: dict[str, str] = {}  # "<dataset>/<sequence>": one-line reason it could not be validated
    flags: dict[tuple[str, str], dict] = {}  # replay.checks.input_checks flags per validated sequence
    available = {}
    for ds in args.dataset:
        try:
            available[ds] = list_sequences(ds, args.data_dir)
        except ReplayError as exc:
            return report(exc)
    if args.sequences:
        unknown = set(args.sequences) - {n for names in available.values() for n in names}
        if unknown:
            listing = "; ".join(f"{ds}: {', '.join(names)}" for ds, names in available.items())
            return report(UsageError("--sequences", f"unknown sequence(s) {sorted(unknown)}; available: {listing}"))
    for ds in args.dataset:
        names = available[ds]
        if args.sequences:
            names = [n for n in names if n in args.sequences]
        for name in names:
            t1 = time.perf_counter()
            shapes[ds] = args.hand_shape or DEFAULT_HAND_VARIANT[ds]
            try:
                rec, s = _validate_one(ds, name, args, sides.get(ds), shapes[ds], opts)
            except ReplayError as exc:  # this recording is reported; the others are still validated
                say_error(f"{ds}/{name}: {exc}")
                errors[f"{ds}/{name}"] = str(exc)
                continue
            seqs.append(s)
            flags[(ds, name)] = rec.meta.get("input_flags", {})
            if flags[(ds, name)]:
                print(f"{ds}/{name}: input flags {json.dumps(flags[(ds, name)])}", flush=True)
            e = s.errors[np.isfinite(s.errors)]
            print(f"{ds}/{name}: {len(s.frames)} frames, median {np.median(e):.2f} mm, "
                  f"p90 {np.percentile(e, 90):.2f} mm, max {e.max():.2f} mm ({time.perf_counter() - t1:.1f} s)",
                  flush=True)
    if not seqs:
        say_error("no sequence could be validated" if errors else "no sequence selected")
        return 1
    summary = summarize(seqs)
    for entry in summary["sequences"]:
        entry["input_flags"] = flags.get((entry["dataset"], entry["name"]), {})
    summary["errors"] = errors
    summary["run"] = {
        "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
        "seconds": round(time.perf_counter() - t0, 1),
        "ik_options": dataclasses.asdict(opts),
        "window": args.window,
        "hand_shape": shapes,
        "hold_s": args.hold_s if args.window == "grasp" else None,
        "hand_side_override": sides,
        "versions": {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
                     "mujoco": mujoco.__version__},
        "mirror": os.environ.get("REPLAY_MIRROR"),
    }
    atomic_write_text(args.out, json.dumps(summary, indent=1, default=str))
    png = plot_finger_errors(seqs, args.out.with_suffix(".png"), title="pose mapping: manosim FK vs recorded")
    o = summary["overall"]["all"]
    for ds, d in summary.get("datasets", {}).items():
        a = d["all"]
        print(f"{ds}: {d['frames']} frames, median {a['median_mm']} mm, p90 {a['p90_mm']} mm, max {a['max_mm']} mm")
    print(f"overall: {summary['overall']['frames']} frames, median {o['median_mm']} mm, p90 {o['p90_mm']} mm, "
          f"max {o['max_mm']} mm -> {args.out}, {png}")
    if errors:
        say_error(f"{len(errors)} sequence(s) could not be validated (see above); the others are in {args.out}")
        return 1
    return 0


if __name__ == "__main__":
    from replay.cli import run

    sys.exit(run(main))
