#!/usr/bin/env python
"""Agreement tables: per recording, the outcome and rise under each of several rollout sets.

    python scripts/agreement.py --studies out/grab/study.json out/grab_mesh/study.json \
        --out out/grab/agreement.json [--labels capsule mesh] [--protocols lift lift]
    python scripts/agreement.py --studies out/hug/study.json out/hug/study.json \
        --protocols lift hug-oracle --out out/hug/agreement.json

A rollout set is one protocol's rows of a study (default: the first it has); per pair of sets the recordings that
succeeded in both, only in A, only in B, neither. Exit status 2 also for a protocol a study did not run.
"""

from __future__ import annotations

import json
from pathlib import Path

from replay import console
from replay.cli import Parser
from replay.fileio import atomic_write_text
from replay.protocol.protocols.base import protocol_names
from replay.study.agreement import agreement, markdown, pairing_lines


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--studies", nargs="+", required=True, type=Path, help="two or more study JSONs")
    ap.add_argument("--labels", nargs="+", default=None, help="one short name per study")
    ap.add_argument(
        "--protocols",
        nargs="+",
        default=None,
        choices=list(protocol_names()),
        help="one protocol per study (default: the first each study has rows of)",
    )
    ap.add_argument("--out", type=Path, required=True, help="agreement JSON to write")
    a = ap.parse_args(argv)
    table = agreement(a.studies, a.labels, a.protocols)
    atomic_write_text(a.out, json.dumps(table, indent=1))
    console.out(markdown(table))
    for line in pairing_lines(table):
        console.out(line)
    console.out(f"{table['common']} recordings in every set; wrote {a.out}")
    return 0
