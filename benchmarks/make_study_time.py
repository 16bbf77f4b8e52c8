"""``make study``'s whole time: its commands run in turn, each timed, into a small results file.

    REPLAY_MIRROR=../shared/datasets python benchmarks/make_study_time.py --out docs/results/make-study.json

Runs what ``make study`` runs (the Makefile's ``fetch`` and ``study`` recipes, with their defaults:
``DATASET=grab``, ``EFFORT``, ``SAMPLES`` and ``VERDICTS`` as the Makefile sets them (:func:`makefile_default`),
``--resume`` on a fresh folder, so every rollout runs): the two
``scripts/fetch_data.py`` stagings from ``$REPLAY_MIRROR``, ``scripts/run_study.py``,
``scripts/render_montage.py`` and ``scripts/report.py``, with this interpreter, in a temporary folder
(``data/``, ``out/``, ``renders/``, removed after), each step's wall time measured
(``time.perf_counter``). The file holds the steps (``script``, ``command``, ``wall_s`` s), ``total_s``,
the machine (``cpus``, ``load_1min`` before and after: the 1-minute load average, ``os.getloadavg``),
``made_by``, ``commit`` and ``date``: docs/study.md's generated block (``make_study`` in
:mod:`replay.output.tables`) is written from it. ``make setup`` (the venv, once) is not timed.
Exit status: 0 done, 1 a step failed (its last lines printed), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def makefile_default(name: str) -> str:
    """The Makefile's default of variable ``name`` (its ``NAME ?= value`` line).

    Raises:
        SystemExit: the Makefile sets no such default (the benchmark and the Makefile disagree)."""
    m = re.search(rf"^{re.escape(name)} \?= *(\S+)", (ROOT / "Makefile").read_text(), re.M)
    if m is None:
        raise SystemExit(f"Makefile: no default for {name} (the benchmark runs what make study runs)")
    return m.group(1)


def steps(mirror: str) -> list[list[str]]:
    """The commands of ``make study`` (Makefile ``fetch`` then ``study``, default variables), paths
    relative to the folder they run in, the mirror as given."""
    py = "python"
    return [
        [py, "scripts/fetch_data.py", "--dataset", "grab", "--dest", "data", "--mirror", mirror],
        [py, "scripts/fetch_data.py", "--dataset", "manosim", "--dest", "data", "--mirror", mirror],
        [py, "scripts/run_study.py", "--dataset", "grab", "--data", "data",
         "--samples", makefile_default("SAMPLES"), "--out", "out/grab/study.json", "--resume",
         "--verdicts", makefile_default("VERDICTS")],
        [py, "scripts/render_montage.py", "--study", "out/grab/study.json", "--out", "renders/grab/montage.mp4"],
        [py, "scripts/report.py", "--study", "out/grab/study.json", "--out", "out/grab/report.html", "--montage",
         "renders/grab/montage.mp4"],
    ]


def run_steps(mirror: str, work: Path) -> list[dict]:
    """Each step run in ``work`` (the scripts read from this checkout), timed; SystemExit(1) on a failure."""
    out = []
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for cmd in steps(mirror):
        argv = [sys.executable, str(ROOT / cmd[1]), *cmd[2:]]
        t0 = time.perf_counter()
        p = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        print(f"{wall:7.1f} s  {shlex.join(cmd)}", flush=True)
        if p.returncode not in ((0, 1) if cmd[1] == "scripts/run_study.py" else (0,)):  # as the Makefile's recipe
            print((p.stdout + p.stderr)[-2000:], file=sys.stderr)
            raise SystemExit(1)
        shown = shlex.join(cmd).replace(shlex.quote(mirror), "$REPLAY_MIRROR")  # no machine's path in the file
        out.append({"script": cmd[1], "command": shown, "wall_s": round(wall, 1)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="the results file, e.g. docs/results/make-study.json")
    ap.add_argument("--mirror", default=os.environ.get("REPLAY_MIRROR"), help="the offline mirror ($REPLAY_MIRROR)")
    ap.add_argument("--note", default="", help="what else the machine was doing, said in the block")
    a = ap.parse_args(argv)
    if not a.mirror:
        ap.error("name the mirror: --mirror DIR or REPLAY_MIRROR=DIR")
    mirror = os.path.abspath(os.path.expanduser(a.mirror))
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="make_study_") as tmp:
        done = run_steps(mirror, Path(tmp))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    doc = {"steps": done, "total_s": round(sum(s["wall_s"] for s in done), 1), "cpus": os.cpu_count(),
           "load_1min": [round(load0, 1), round(os.getloadavg()[0], 1)], "note": a.note,
           "made_by": "REPLAY_MIRROR=$REPLAY_MIRROR python benchmarks/make_study_time.py --out " + str(a.out),
           "commit": commit.strip() or "unknown", "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")}
    a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"make study: {doc['total_s']:.1f} s in all; wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
