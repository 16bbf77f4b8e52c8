#!/usr/bin/env python
"""Agreement tables: per recording, the outcome and rise under each of several studies.

    python scripts/agreement.py --studies out/grab/study.json out/grab_mesh/study.json \
        --out out/grab/agreement.json [--labels capsule mesh]

For every pair of studies: lifted in both, only in A, only in B, neither, and which
recordings flipped (:mod:`replay.study.agreement`); printed as a Markdown table and
written as JSON. Exit status (replay.cli): 0 done, 1 a study missing or unreadable,
2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from replay.fileio import atomic_write_text
from replay.study.agreement import agreement, markdown


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--studies", nargs="+", required=True, type=Path, help="two or more study JSONs")
    ap.add_argument("--labels", nargs="+", default=None, help="one short name per study")
    ap.add_argument("--out", type=Path, required=True, help="agreement JSON to write")
    a = ap.parse_args(argv)
    table = agreement(a.studies, a.labels)
    atomic_write_text(a.out, json.dumps(table, indent=1))
    print(markdown(table))
    print(f"{table['common']} recordings in every study; wrote {a.out}")
    return 0
