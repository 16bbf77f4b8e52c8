#!/usr/bin/env python
"""Attribution study: one factor at a time from today's protocol toward a HUG-style replay.

    python scripts/attribute.py --dataset grab --out out/grab/attribution.json --workers 1
    python scripts/attribute.py --dataset grab --factors "defaults,finger effort" --objects mug,cubesmall

``--factors``: names of :data:`replay.study.attribution_factors.FACTORS`, or a JSON file of factors; the factor and
result formats: docs/attribution.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from replay import console
from replay.cli import Parser
from replay.commands.common import named_recordings
from replay.datasets import RECORDING_DATASETS
from replay.errors import UsageError
from replay.fileio import atomic_write_text, out_folder


def _factors(text: str | None) -> list[dict]:
    from replay.study.attribution_factors import FACTORS

    if not text:
        return FACTORS
    if text.endswith(".json"):
        try:
            out = json.loads(Path(text).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise UsageError("--factors", f"{text}: cannot read a JSON list of factors ({e})") from None
        if not isinstance(out, list) or not all(
            isinstance(f, dict) and {"name", "value", "source"} <= set(f) for f in out
        ):
            raise UsageError("--factors", f"{text}: expected a list of {{name, value, source, choices, config}}")
        return out
    want = [n.strip() for n in text.split(",") if n.strip()]
    names = sorted({f["name"] for f in FACTORS})
    unknown = [n for n in want if n not in names]
    if unknown:
        raise UsageError("--factors", f"unknown {unknown}; built-in factors: {', '.join(names)}")
    return [f for f in FACTORS if f["name"] in want]


def main(argv=None) -> int:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True, choices=RECORDING_DATASETS)
    p.add_argument("--out", default="out/grab/attribution.json")
    p.add_argument("--factors", default=None, help="factor names (comma-separated) or a JSON file of factors")
    p.add_argument("--objects", default=None, help="comma-separated objects or sequences (default: the lifts)")
    p.add_argument("--data", default=None, help="staged data folder; falls back to $REPLAY_MIRROR")
    p.add_argument(
        "--workers", type=int, default=0, help="worker processes, one recording each; 0: in this process (default)"
    )
    a = p.parse_args(argv)
    from replay.data.locate import dataset_dir
    from replay.study.attribution import run_attribution

    factors = _factors(a.factors)
    seqs = named_recordings(a.dataset, a.data, a.objects)
    out = out_folder(a.out)
    console.out(f"attribution {a.dataset}: {len(seqs)} recording(s) x {len(factors)} factors")
    res = run_attribution(
        a.dataset,
        seqs,
        a.data,
        manosim_dir=dataset_dir("manosim", a.data),
        factors=factors,
        workers=max(0, a.workers),
        log=console.out,
        partial=lambda r: atomic_write_text(out, json.dumps(r, indent=1, default=str)),
    )
    atomic_write_text(out, json.dumps(res, indent=1, default=str))
    for f in res["factors"]:
        console.out(
            f"{f['name']:>44} {str(f['value']):>9}: lifted {f['lifted']}/{f['of']} unstable {f['unstable']} "
            f"{f['diagnosis']}"
        )
    console.out(f"wrote {out} ({res['wall_s']:.0f} s)")
    for seq, why in res["failed"].items():
        console.err(f"failed: {seq}: {why}")
    return 1 if res["failed"] else 0
