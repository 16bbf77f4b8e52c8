#!/usr/bin/env python
"""The bridge from the hug-oracle protocol to the lift protocol, one element at a time.

    python scripts/bridge.py --dataset grab --out out/grab/bridge.json --workers 2
    python scripts/bridge.py --markdown out/grab/bridge.json            # the table, from the JSON

Writes the JSON after every recording (a rerun resumes) and its Markdown table (``<out stem>.md``; docs/oracle.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from replay import console
from replay.cli import Parser, run
from replay.commands.common import named_recordings
from replay.datasets import RECORDING_DATASETS
from replay.errors import DataError, UsageError
from replay.fileio import atomic_write_text, out_folder


def _markdown(path: str) -> int:
    from replay.output.bridge_table import bridge_markdown

    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DataError(path, None, f"cannot read the bridge JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise DataError(path, "rows", "not a bridge result (no 'rows' list)")
    console.out(bridge_markdown(doc), end="")
    return 0


def main(argv=None) -> int:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", choices=RECORDING_DATASETS)
    p.add_argument("--out", default="out/grab/bridge.json")
    p.add_argument("--objects", default=None, help="comma-separated objects or sequences (default: the lifts)")
    p.add_argument("--rows", default=None, help="comma-separated row ids (default: every row)")
    p.add_argument("--data", default=None, help="staged data folder; falls back to $REPLAY_MIRROR")
    p.add_argument(
        "--workers", type=int, default=0, help="worker processes, one recording each; 0: in this process (default)"
    )
    p.add_argument(
        "--physics",
        choices=["replay", "authored"],
        default="replay",
        help="the oracle's physics (replay.sim.physics); authored: the bridge starts from the files as "
        "written plus MuJoCo's defaults, each physics choice of the lift protocol an element of its own",
    )
    p.add_argument("--markdown", default=None, metavar="JSON", help="print the table of a bridge JSON and exit")
    a = p.parse_args(argv)
    if a.markdown:
        return _markdown(a.markdown)
    if not a.dataset:
        raise UsageError("--dataset", "required (or --markdown JSON)")
    from replay.data.locate import dataset_dir
    from replay.output.bridge_table import bridge_markdown
    from replay.study.bridge import bridge_rows, run_bridge

    rows = bridge_rows(a.physics)
    if a.rows:
        want = [x.strip() for x in a.rows.split(",") if x.strip()]
        unknown = sorted(set(want) - {r["id"] for r in rows})
        if unknown:
            raise UsageError("--rows", f"unknown {unknown}; rows: {', '.join(r['id'] for r in rows)}")
        rows = [r for r in rows if r["id"] in want]
    seqs = named_recordings(a.dataset, a.data, a.objects)
    out = out_folder(a.out)
    from replay.config import ReplayConfig
    from replay.sim.physics import apply_physics

    base = apply_physics(ReplayConfig(), a.physics)
    res = run_bridge(
        a.dataset,
        seqs,
        a.data,
        manosim_dir=dataset_dir("manosim", a.data),
        rows=rows,
        out=out,
        base=base,
        workers=max(0, a.workers),
        log=console.out,
    )
    md = bridge_markdown(res)
    atomic_write_text(out.with_suffix(".md"), md)
    console.out(md, end="")
    console.out(f"wrote {out} and {out.with_suffix('.md')} ({res['wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
