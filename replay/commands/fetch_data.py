#!/usr/bin/env python3
"""Stage the pipeline's real inputs into data/ with a SHA-256 manifest.

Examples:
    python scripts/fetch_data.py --dataset all                      # GitHub + Hugging Face Hub
    python scripts/fetch_data.py --dataset all --mirror ../shared/datasets   # offline
    python scripts/fetch_data.py --dataset hug-bench --split test --scenes small_2 --revision <commit>
    python scripts/fetch_data.py --dataset grab --local ~/my_grab   # own files (laid out like the mirror)
    python scripts/fetch_data.py --verify                           # re-hash data/

With --mirror or --local, every file under a dataset folder is staged: pinned files are
checked, the others recorded in MANIFEST.json as unpinned (SHA-256 and origin).
Sources and pinned revisions: docs/data.md. Exit status: 0 success, 1 a fetch or verify
error, 2 bad command-line arguments.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from replay import console
from replay.cli import Parser, report
from replay.data.fetch import LINK_MODES, fetch
from replay.data.manifest import verify
from replay.data.sources import (
    HUG_BENCH_ASSETS,
    HUG_RECORDINGS,
    HUG_SPLITS,
)
from replay.datasets import FETCH_ORDER
from replay.errors import ReplayError

log = logging.getLogger(__name__)


def _parser() -> argparse.ArgumentParser:
    ap = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--dataset",
        default="all",
        choices=[*FETCH_ORDER, "all"],
        help=f"one of {', '.join(FETCH_ORDER)} or all (default: all)",
    )
    ap.add_argument("--dest", type=Path, default=Path("data"), help="staging folder (default: data/)")
    ap.add_argument(
        "--mirror",
        default=None,
        help="offline mirror laid out like shared/datasets (default: $REPLAY_MIRROR; unset = download)",
    )
    ap.add_argument(
        "--local",
        default=None,
        help="a folder of your own files laid out like the mirror (DIR/grab/recordings/*.pkl, "
        "DIR/grab/objects/<name>/): all staged, files not on the pin list as unpinned",
    )
    ap.add_argument("--link", choices=LINK_MODES, default="copy", help="how mirror files are staged (default: copy)")
    ap.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="stage files that a symlink in --local/--mirror takes outside the dataset folder "
        "(refused by default; recorded as symlink_target in MANIFEST.json)",
    )
    ap.add_argument("--split", choices=HUG_SPLITS, default="test", help="HUG-Bench split (default: test)")
    ap.add_argument(
        "--scenes",
        default=None,
        help="HUG-Bench scenes, comma separated, e.g. small_2,medium_2 (default: all in the split)",
    )
    ap.add_argument(
        "--revision",
        default=None,
        help=f"commit (40 hex) of {HUG_BENCH_ASSETS.repo_id} (default: "
        f"{HUG_BENCH_ASSETS.revision or 'none pinned, so required for hug-bench'}; a branch is refused)",
    )
    ap.add_argument(
        "--recordings-revision",
        default=None,
        help=f"commit (40 hex) of {HUG_RECORDINGS.repo_id} (default: {HUG_RECORDINGS.revision})",
    )
    ap.add_argument(
        "--verify",
        action="store_true",
        help="re-hash the staged files against the manifest instead of fetching; bad files are "
        "moved aside (<name>.corrupt-<time>) so the next fetch re-stages them",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    return ap


def _run_verify(args) -> int:
    datasets = None if args.dataset == "all" else [args.dataset]
    problems = verify(args.dest, datasets, fix=True, progress=False if args.quiet else None)
    if not problems:
        console.out(f"verify: every file listed in {args.dest / 'MANIFEST.json'} matches its SHA-256")
        return 0
    for p in problems:
        console.err(f"verify: {p.describe()}")
    console.err(f"verify: {len(problems)} problem(s); re-run the fetch to stage those files again")
    return 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    progress = False if args.quiet else None
    try:
        if args.verify:
            return _run_verify(args)
        scenes = [s.strip() for s in args.scenes.split(",") if s.strip()] if args.scenes else None
        if args.local is not None and args.mirror is not None:
            console.err("fetch_data: --local and --mirror exclude each other; run the fetch once with each")
            return 2
        results = fetch(
            args.dataset,
            args.dest,
            mirror=args.mirror,
            local=args.local,
            link=args.link,
            split=args.split,
            scenes=scenes,
            hub_revision=args.revision,
            recordings_revision=args.recordings_revision,
            progress=progress,
            follow_symlinks=args.follow_symlinks,
        )
    except ReplayError as exc:
        return report(exc)
    except KeyboardInterrupt:
        console.err("fetch_data: interrupted; completed files are kept, re-run to resume")
        return 130
    for r in results:
        for msg in r.repaired:
            log.warning("fetch_data: warning: %s (re-staged)", msg)
        if r.source == "skipped":
            console.out(f"{r.dataset}: {r.note}")
            continue
        line = (
            f"{r.dataset}: {r.staged} file(s) staged from {r.source} ({r.bytes / 1e6:.1f} MB), "
            f"{r.skipped} already staged and verified"
        )
        if r.pinned or r.unpinned:
            line += f" [{r.pinned} pinned, {r.unpinned} unpinned]"
        console.out(line + (f"; {r.note}" if r.note else ""))
    console.out(f"manifest: {args.dest / 'MANIFEST.json'}")
    return 0
