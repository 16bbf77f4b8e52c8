#!/usr/bin/env python
"""Export one rollout of a study for tools outside this project: plain MuJoCo, USD or Rerun.

    python scripts/export_rollout.py --study out/grab/study.json --sequence mug_lift --format mjcf \
        [--rollout contact|ablation|refine|refine-ablation] [--out DIR] [--data data]
    python DIR/replay_export.py          # replays it with mujoco + numpy alone, prints the outcome figures

Files of each format: docs/results.md, exports (``usd``: ``pip install -e '.[usd]'``; ``rrd``: ``'.[rerun]'``).
mjcf and rrd re-run the rollout and refuse one not reproduced bit for bit (exit status 1).
"""

from __future__ import annotations

import json
from pathlib import Path

from replay import console
from replay.cli import Parser, folder_arg, run
from replay.output.export.run import FORMATS, export_rollout
from replay.output.export.source import ROLLOUTS


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", required=True, type=Path, help="study JSON written by scripts/run_study.py")
    ap.add_argument("--sequence", required=True, help="the recording, e.g. mug_lift")
    ap.add_argument("--format", required=True, choices=FORMATS)
    ap.add_argument("--rollout", default="contact", choices=ROLLOUTS, help="which of the recording's rollouts")
    ap.add_argument("--out", type=Path, default=None, help="export folder")
    ap.add_argument("--data", type=folder_arg, default=None, help="staged data (default $REPLAY_DATA, then the mirror)")
    a = ap.parse_args(argv)
    from replay.study.console import quiet_libraries

    quiet_libraries()
    r = export_rollout(a.study, a.sequence, a.format, out=a.out, rollout=a.rollout, data_dir=a.data)
    console.out(json.dumps({k: r[k] for k in ("format", "out", "sequence", "rollout", "outcome") if k in r}))
    if a.format == "mjcf":
        console.out(f"replay it: python {Path(r['out']) / 'replay_export.py'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
