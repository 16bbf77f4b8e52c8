#!/usr/bin/env python
"""Print what the input checks measure on each recording, and the range over them.

    REPLAY_MIRROR=../shared/datasets python scripts/input_check_figures.py --dataset grab taco \
        --extra-grab ../shared/datasets/grab_intents/recordings

One JSON line per recording (its figures and flags, or why it was refused), then each figure's range. Exit status 1
when no recording could be read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from replay import console
from replay.cli import Parser, run

#: (figures key, field) pairs reported by default: the checks of issue 30
DEFAULT_KEYS = (
    "time_base.time_scale_factor",
    "time_base.peak_speed_m_s",
    "hand_scale.hand_length_mm",
    "finger_swap.frames",
    "object_mass.overlap",
    "object_mass.outside",
    "object_mass.ratio",
    "object_mass.simulated_kg",
)


def _records(datasets: list[str], data: str | None, extra: str | None):
    from replay.checks import load_recording
    from replay.checks.recording_checks import check_recording
    from replay.data import list_sequences
    from replay.data.grab import load_grab

    for ds in datasets:
        for s in list_sequences(ds, data):
            yield s, lambda ds=ds, s=s: load_recording(ds, s, data)
    if extra:
        for p in sorted(Path(extra).glob("*.pkl")):
            objects = Path(extra).resolve().parents[1] / "grab" / "objects"
            yield p.stem, lambda p=p, o=objects: check_recording(load_grab(p, o))


def main(argv=None) -> int:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", nargs="+", default=["grab"], choices=["grab", "taco", "hug-bench"])
    p.add_argument("--data", default=None, help="staged data folder (falls back to $REPLAY_MIRROR)")
    p.add_argument("--extra-grab", default=None, help="a folder of more GRAB recordings (the mirror's grab_intents)")
    p.add_argument("--keys", nargs="+", default=list(DEFAULT_KEYS), help="figures as <check>.<field>")
    a = p.parse_args(argv)
    from replay.errors import DataError

    seen: dict[str, list[float]] = {k: [] for k in a.keys}
    n = 0
    for name, load in _records(a.dataset, a.data, a.extra_grab):
        try:
            rec = load()
        except DataError as e:
            console.out(f"{name}: refused: {e}")
            continue
        n += 1
        figs = rec.meta["input_checks"]
        row = {k: (figs.get(k.split(".")[0]) or {}).get(k.split(".")[1]) for k in a.keys}
        for k, v in row.items():
            if isinstance(v, (int, float)):
                seen[k].append(float(v))
        console.out(f"{name}: {json.dumps(row)} flags {sorted(rec.meta['input_flags'])}")
    for k, v in seen.items():
        console.out(f"{k}: " + (f"{min(v):g} .. {max(v):g} over {len(v)}" if v else "none"))
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(run(main))
