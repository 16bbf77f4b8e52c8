#!/usr/bin/env python3
"""Maintainer tool: regenerate ``replay/data/pinned_files.json`` from a trusted mirror.

Lists every file of the GitHub-hosted datasets (manosim, grab, taco) in a mirror laid
out like ``shared/datasets`` with its size and SHA-256. Only run it on a mirror whose
files are byte-for-byte as published at the commits in ``replay/data/sources.py``;
the fetch stage then rejects any download or mirror copy that differs.

    python scripts/pin_sources.py --mirror ../shared/datasets
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from replay import console
from replay.cli import Parser
from replay.data.sources import (
    GITHUB_SOURCES,
    MIRROR_ALIASES,
    PINS_PATH,
    github_source_for,
    is_hidden,
)
from replay.fileio import atomic_write_text, sha256_file


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", required=True, type=Path)
    ap.add_argument("--out", type=Path, default=PINS_PATH)
    args = ap.parse_args(argv)
    files = {}
    for dataset in sorted({s.dataset for s in GITHUB_SOURCES}):
        folder = args.mirror / dataset
        if not folder.is_dir():
            console.err(f"error: {folder} missing")
            return 1
        for p in sorted(folder.rglob("*")):
            rel = p.relative_to(folder).as_posix()
            if p.is_file() and not is_hidden(rel):
                github_source_for(dataset, rel)  # every file must map to a pinned source
                files[f"{dataset}/{rel}"] = {"size": p.stat().st_size, "sha256": sha256_file(p)}
    for alias, folder_key in sorted(MIRROR_ALIASES.items()):
        # more files of a pinned source kept under another mirror folder (sources.MIRROR_ALIASES)
        dataset, _, prefix = folder_key.partition("/")
        for p in sorted((args.mirror / alias).rglob("*")):
            rel = p.relative_to(args.mirror / alias).as_posix()
            if p.is_file() and not is_hidden(rel):
                key = f"{folder_key}/{rel}"
                github_source_for(dataset, f"{prefix}/{rel}")
                if key in files:
                    console.err(f"error: {alias}/{rel} and {key} are both in the mirror")
                    return 1
                files[key] = {"size": p.stat().st_size, "sha256": sha256_file(p), "mirror_path": f"{alias}/{rel}"}
    atomic_write_text(args.out, json.dumps({"format": 1, "files": files}, indent=1, sort_keys=True) + "\n")
    console.out(f"pinned {len(files)} files -> {args.out}")
    return 0
