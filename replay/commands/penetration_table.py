#!/usr/bin/env python
"""Penetration at the grasp (HUG's table 7): does the recorded grasp start inside the object?

    python scripts/penetration_table.py --out out/penetration.json \\
        --set grab-lifts=grab:../shared/datasets --set grab-intents=grab:../shared/datasets/grab_intents_staged \\
        --set taco=taco:../shared/datasets
    python scripts/penetration_table.py --markdown out/penetration.json      # the table, from the JSON

Per recording the capsule hand at the grasp frame against the object's collision parts (inside, deepest capsule
mm); per set the fraction inside and the depths. ``--set NAME=DATASET:DATA``: GRAB's ``*_lift`` recordings, or
every recording where ``NAME`` ends in ``intents``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from replay import console
from replay.cli import Parser, run
from replay.errors import DataError, UsageError
from replay.fileio import atomic_write_text
from replay.output.p_lift_table import num


def markdown(doc: dict) -> str:
    """The Markdown table of a penetration JSON: one line per set, then one per recording."""
    out = [
        "| set | recordings | start inside | fraction | mean depth inside mm | median mm | max mm |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in doc["sets"].items():
        t = s["summary"]
        out.append(
            f"| {name} | {t['n']} | {t['inside']} | {t['inside_frac']:.2f} | {num(t['mean_depth_mm'], '.1f')} | "
            f"{num(t['median_depth_mm'], '.1f')} | {num(t['max_depth_mm'], '.1f')} |"
        )
    out += [
        "",
        "| set | recording | inside | depth mm (deepest finger capsule; < 0: gap) | capsules inside |",
        "|---|---|---|---|---|",
    ]
    for name, s in doc["sets"].items():
        for seq, r in s["recordings"].items():
            if "error" in r:
                out.append(f"| {name} | {seq} | - | {r['error']} | - |")
            else:
                out.append(
                    f"| {name} | {seq} | {'yes' if r['inside'] else 'no'} | {r['depth_mm']:.1f} | "
                    f"{r['bodies_inside']} |"
                )
    return "\n".join(out) + "\n"


def _parse_set(text: str) -> tuple[str, str, str]:
    try:
        name, rest = text.split("=", 1)
        ds, data = rest.split(":", 1)
    except ValueError:
        raise UsageError("--set", f"{text!r}: expected NAME=DATASET:DATA") from None
    return name, ds, data


def _run_set(name: str, ds: str, data: str) -> dict:
    from replay.config import ReplayConfig
    from replay.data import list_sequences
    from replay.data.locate import dataset_dir
    from replay.protocol.grasp_penetration import grasp_penetration, summarize
    from replay.sim.hand_assets import resolve_hand_variant
    from replay.sim.physics import choice_value
    from replay.study.prepare import prepare_recording

    seqs = list_sequences(ds, data)
    if ds == "grab":
        seqs = [s for s in seqs if (not s.endswith("_lift")) == name.endswith("intents")]
    cfg = resolve_hand_variant(ReplayConfig(), ds)
    rows = {}
    for s in seqs:
        try:
            rec, coords, mjcf, _ = prepare_recording(ds, s, data, manosim_dir=dataset_dir("manosim", data), cfg=cfg)
            rows[s] = grasp_penetration(rec, coords, mjcf)
        except DataError as e:
            rows[s] = {"error": str(e).splitlines()[0][:160]}
        console.out(f"{name} {s}: {rows[s]}")
    ok = [r for r in rows.values() if "error" not in r]
    return {
        "dataset": ds,
        "data": data,
        "hand_variant": choice_value(cfg, "hand_shape"),
        "summary": summarize(ok),
        "recordings": rows,
    }


def main(argv=None) -> int:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="out/penetration.json")
    p.add_argument("--set", action="append", default=[], help="NAME=DATASET:DATA (repeatable)")
    p.add_argument("--markdown", default=None, metavar="JSON", help="print the table of a penetration JSON and exit")
    a = p.parse_args(argv)
    if a.markdown:
        try:
            doc = json.loads(Path(a.markdown).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise DataError(a.markdown, None, f"cannot read the penetration JSON: {e}") from None
        console.out(markdown(doc), end="")
        return 0
    if not a.set:
        raise UsageError("--set", "give at least one NAME=DATASET:DATA")
    doc = {"sets": {}}
    for text in a.set:
        name, ds, data = _parse_set(text)
        doc["sets"][name] = _run_set(name, ds, data)
        atomic_write_text(Path(a.out), json.dumps(doc, indent=1))
    atomic_write_text(Path(a.out).with_suffix(".md"), markdown(doc))
    console.out(markdown(doc), end="")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
