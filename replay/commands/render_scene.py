"""Render one recording: its study rollout if there is one, else the recorded motion.

    python scripts/render_scene.py --dataset grab --sequence mug_lift --out renders/mug_lift.mp4
    python scripts/render_scene.py --dataset hug-bench --sequence test/small_2 --out renders/small_2.mp4

The rollout in ``--study`` is drawn from its saved poses unless ``--recorded``; otherwise the recording around its
grasp (``--hand landmarks``: a landmark skeleton).
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path

from replay import console
from replay.cli import Parser, folder_arg, report, size_arg
from replay.commands.common import add_rollouts_option
from replay.datasets import RECORDING_DATASETS
from replay.errors import ReplayError, UsageError
from replay.output.render.clip import load_study
from replay.output.render.video import render_clip
from replay.protocol.protocols.base import protocol_named


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True, choices=RECORDING_DATASETS)
    ap.add_argument("--sequence", required=True, help="e.g. mug_lift (GRAB), test/small_2 (HUG-Bench)")
    ap.add_argument("--out", type=Path, default=None, help="mp4 (default renders/<sequence>.mp4)")
    ap.add_argument(
        "--study",
        type=Path,
        default=None,
        help="study JSON to look the rollout up in (default out/<dataset>/study.json, if it exists)",
    )
    ap.add_argument("--recorded", action="store_true", help="render the recording even if a rollout exists")
    ap.add_argument("--ablation", action="store_true", help="render the rollout's contact-ablation re-run")
    add_rollouts_option(ap, "which rollout of the study")
    ap.add_argument(
        "--data", type=folder_arg, default=None, help="staged data folder (default data/ or $REPLAY_MIRROR)"
    )
    ap.add_argument("--hand", choices=("auto", "mano", "landmarks"), default="auto")
    ap.add_argument("--hand-mjcf", type=Path, default=None, help="manosim MJCF (default myhand capsule hand)")
    ap.add_argument("--before", type=float, default=None, help="seconds before the grasp (recorded motion)")
    ap.add_argument("--after", type=float, default=None, help="seconds after the grasp (recorded motion)")
    ap.add_argument("--size", type=size_arg, default=(640, 480))
    ap.add_argument("--fps", type=float, default=30.0)
    return ap


def _check_sequence(dataset: str, sequence: str, data) -> None:
    """Raises UsageError naming the closest staged sequences when ``sequence`` is not one."""
    from replay.data import list_sequences

    names = list_sequences(dataset, data)
    if sequence not in names:
        close = difflib.get_close_matches(sequence, names, n=3)
        raise UsageError(
            "--sequence",
            f"no {dataset} sequence {sequence!r}"
            + (f" (did you mean {' or '.join(close)}?)" if close else "")
            + (
                f"; available: {', '.join(names)}"
                if len(names) <= 12
                else f"; {len(names)} sequences, e.g. {', '.join(names[:3])}"
            ),
        )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = args.out or Path("renders") / (args.sequence.replace("/", "_") + ".mp4")
    try:
        from replay.output.render.recording import find_rollout, render_recording, scene_window

        if args.study is None:
            args.study = Path("out") / args.dataset / "study.json"
        elif not args.study.is_file():
            raise ReplayError(
                f"--study {args.study}: no such file (omit --study to use out/<dataset>/study.json, "
                "or --recorded to render the recording)"
            )
        if not args.recorded and args.study.is_file():
            study, study_dir = load_study(args.study)
            hit = find_rollout(study, args.dataset, args.sequence, protocol=args.protocol)
            if hit is not None:
                i, r = hit
                st = render_clip(
                    r,
                    study_dir,
                    out,
                    size=args.size,
                    fps=args.fps,
                    variant="ablation" if args.ablation else "main",
                    source=args.study,
                )
                rows = study.rows_of(protocol_named(args.protocol).rows_field)
                what = "its contact-ablation run" if args.ablation else f"its {args.protocol} rollout"
                console.out(
                    f"wrote {st.path}: {args.sequence}, {what} in {args.study} (row {i + 1} of {len(rows)} of the "
                    f"study's table; drawn from its saved poses), {st.frames} frames, {st.ms_per_frame:.1f} ms/frame"
                )
                return 0
            note = f"no rollout for {args.dataset}/{args.sequence} in {args.study}; rendering the recording"
        elif args.ablation:
            raise UsageError("--ablation", "needs a study rollout (is --study right?)")
        else:
            note = None
        from replay.checks import load_recording

        _check_sequence(args.dataset, args.sequence, args.data)
        if note:
            console.out(note)
        rec = load_recording(args.dataset, args.sequence, args.data)
        window = scene_window(rec, args.before, args.after)
        hand_mjcf = args.hand_mjcf
        if hand_mjcf is None and args.data is not None:
            from replay.kinematics.coords import default_mjcf

            hand_mjcf = default_mjcf(rec.hand_side, "myhand", args.data)
        st = render_recording(
            rec, out, size=args.size, fps=args.fps, window=window, hand=args.hand, hand_mjcf=hand_mjcf
        )
        console.out(
            f"wrote {st.path}: recorded frames {window.start}..{window.stop - 1} of {rec.num_frames}, "
            f"{st.frames} frames, {st.ms_per_frame:.1f} ms/frame"
        )
    except ReplayError as exc:
        return report(exc)
    return 0
