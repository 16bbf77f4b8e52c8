"""Tile a study's rollouts into one labelled H.264 montage (and optionally per-clip mp4s).

    python scripts/render_montage.py --study out/study.json --out renders/montage.mp4 \
        [--cols N] [--objects mug,banana ...] [--size WxH] [--ablation | --pairs] [--clips DIR]

Each tile is one rollout drawn from its saved poses with its overlay; a study of more than ``--max-clips`` is
shown by a selection with every outcome class. A montage whose inputs are unchanged (``OUT.json``) is kept unless
``--force``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from replay import console
from replay.cli import Parser, report, size_arg
from replay.commands.common import add_rollouts_option
from replay.errors import ReplayError, UsageError
from replay.output.render.clip import load_study
from replay.output.render.montage import MONTAGE_MAX_CLIPS, montage_record_path, render_montage, select_rollouts
from replay.output.render.video import render_clip
from replay.protocol.protocols.base import protocol_named

log = logging.getLogger(__name__)


def split_objects(values: list[str] | None) -> list[str] | None:
    """Object names from ``--objects``, comma- and/or space-separated."""
    if values is None:
        return None
    names = [n for v in values for n in v.replace(",", " ").split()]
    return names or None


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", required=True, type=Path, help="study JSON written by scripts/run_study.py")
    ap.add_argument("--out", default=Path("renders/montage.mp4"), type=Path, help="montage .mp4")
    ap.add_argument("--cols", type=int, default=None, help="grid columns (default: 3 up to 6 clips)")
    ap.add_argument(
        "--objects",
        nargs="+",
        default=None,
        help="only these objects, in study order: comma- and/or space-separated (mug,banana)",
    )
    ap.add_argument("--size", type=size_arg, default=None, help="tile size WxH, even (default: fit 1920x1080)")
    ap.add_argument("--fps", type=float, default=30.0)
    ap.add_argument("--ablation", action="store_true", help="show the contact-ablation re-runs instead")
    ap.add_argument("--pairs", action="store_true", help="show each rollout beside its contact-ablation re-run")
    add_rollouts_option(ap, "which rollouts")
    ap.add_argument(
        "--max-clips",
        type=int,
        default=MONTAGE_MAX_CLIPS,
        help="at most this many tiles (default 48; more rollouts: a selection with every outcome "
        "class, replay.output.render.montage_pick)",
    )
    ap.add_argument(
        "--force",
        action="store_true",
        help="re-render even if OUT is up to date (same rollouts, poses, settings and renderer)",
    )
    ap.add_argument(
        "--clips", type=Path, default=None, help="also write each rollout as DIR/<object>[_ablation].mp4 at 640x480"
    )
    args = ap.parse_args(argv)
    args.objects = split_objects(args.objects)
    if args.ablation and args.pairs:
        ap.error("--ablation and --pairs are exclusive")
    variant = "both" if args.pairs else ("ablation" if args.ablation else "main")
    try:
        st = render_montage(
            args.study,
            args.out,
            cols=args.cols,
            objects=args.objects,
            tile=args.size,
            fps=args.fps,
            variant=variant,
            max_clips=args.max_clips,
            progress=True,
            force=args.force,
            protocol=args.protocol,
        )
        if st.skipped:
            console.out(
                f"{st.path} is up to date ({st.frames} frames {st.size[0]}x{st.size[1]}; same rollouts, poses and "
                f"settings as {montage_record_path(st.path).name} records); --force re-renders"
            )
        else:
            console.out(
                f"wrote {st.path}: {st.frames} frames {st.size[0]}x{st.size[1]} in {st.seconds:.1f} s "
                f"({st.ms_per_frame:.1f} ms per tile frame)"
            )
        if st.left_out:
            log.info(
                "note: %d rollout(s) left out of the montage (--max-clips %s): %s",
                st.left_out,
                args.max_clips,
                ", ".join(st.left_out_names),
            )
        if args.clips is not None:
            study, study_dir = load_study(args.study)
            key = protocol_named(args.protocol).rows_field
            for i, e in select_rollouts(study, args.objects, args.study, key=key):
                for v in ("main", "ablation") if variant == "both" else (variant,):
                    name = str(e.record.object or f"rollout{i}") + ("_ablation" if v == "ablation" else "")
                    cs = render_clip(e, study_dir, args.clips / f"{name}.mp4", variant=v, source=args.study)
                    console.out(f"wrote {cs.path}: {cs.frames} frames, {cs.ms_per_frame:.1f} ms/frame")
    except ReplayError as exc:
        return report(exc)
    except ValueError as exc:  # settings the renderer cannot use (layout, frame size)
        return report(UsageError("settings", str(exc)))
    return 0
