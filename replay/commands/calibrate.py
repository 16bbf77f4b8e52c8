#!/usr/bin/env python
"""Choose the named physics ``calibrated`` once (issue #46 item 4; replay.study.calibration).

    python scripts/calibrate.py --dataset grab --data DIR --samples 32 [--objects a,b] [--seed 0]
        [--workers 2] [--work out/calibration] [--out docs/results/calibration.json]

Runs one sampled study with the declared corruptions per centre candidate
(:data:`replay.study.calibration.CENTRES`: ``run_study.py --physics calibrated --samples N
--corruptions --conditions as_replayed,wrist_uncompensated``, the candidate named by
``$REPLAY_CALIBRATION``), scores every candidate and condition by the balanced accuracy of real vs
corrupted (``p_lift >= 0.5`` deciding "real"), and writes the best with the figure of every candidate
and the recordings it was chosen on (default ``docs/results/calibration.json``, what
``--physics calibrated`` reads). Lift recordings only (intent ``lift``); one choice for all of them,
never per recording. Exit status (replay.cli): 0 done, 1 a study failed or lacks the sampled fields,
2 bad arguments.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from replay.checks.intent import INTENT_LIFT
from replay.errors import DataError, UsageError
from replay.fileio import atomic_write_text
from replay.output.results_summary import head_commit
from replay.results.files import read_rollout
from replay.sim.calibration_file import ENV
from replay.study.calibration import CENTRES, CONDITIONS, FIGURE, balanced_accuracy, centres_name, choose

ROOT = Path(__file__).resolve().parents[2]


def run_candidate(argv: list[str], env: dict) -> int:
    """Run ``scripts/run_study.py argv`` with ``env`` (a subprocess: its own physics tables), its console
    output into ``run_study.log`` beside its ``--out`` (errors still on stderr); its exit status."""
    log = Path(argv[argv.index("--out") + 1]).parent / "run_study.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as f:
        return subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "run_study.py"), *argv], env=env, stdout=f
        ).returncode


def _rows(study_path: Path) -> tuple[list[dict], dict]:
    """The lift recordings' ``{sequence, p_lift, p_lift_corrupted}`` of a study (the row's fields, else its
    rollout JSON's), and its ``sampling``.

    Raises:
        DataError: unreadable, or no row with ``p_lift_corrupted`` (names the file)."""
    try:
        doc = json.loads(study_path.read_text())
    except (OSError, ValueError) as e:
        raise DataError(study_path, None, f"no study written ({e})") from None
    out = []
    for r in doc.get("rollouts") or []:
        rec = r
        if r.get("p_lift") is None or r.get("intent") is None:
            try:
                full = read_rollout(study_path.parent / str(r.get("json")))  # any results format
                rec = {"intent": full.intent, **full.sampled.to_dict(), **{k: v for k, v in r.items() if v is not None}}
            except (OSError, ValueError, DataError):
                rec = r
        if rec.get("intent") not in (None, INTENT_LIFT):
            continue
        out.append(
            {
                "sequence": r.get("sequence"),
                "p_lift": rec.get("p_lift"),
                "p_lift_corrupted": rec.get("p_lift_corrupted"),
            }
        )
    if not any(r["p_lift_corrupted"] for r in out):
        raise DataError(
            study_path,
            "rollouts.p_lift_corrupted",
            "no lift recording has it: the study must run with --samples N --corruptions",
        )
    return out, doc.get("sampling") or {}


def _candidate_file(work: Path, i: int, centres: dict) -> Path:
    p = work / f"candidate_{i}" / "calibration.json"
    atomic_write_text(
        p,
        json.dumps(
            {"base": "replay", "choice": {"name": centres_name(centres), "overrides": {}, "centres": centres}}, indent=1
        )
        + "\n",
    )
    return p


def _study_argv(a, out: Path) -> list[str]:
    argv = [
        "--dataset",
        a.dataset,
        "--physics",
        "calibrated",
        "--samples",
        str(a.samples),
        "--seed",
        str(a.seed),
        "--conditions",
        ",".join(CONDITIONS),
        "--corruptions",
        "--workers",
        str(a.workers),
        "--quiet",
        "--out",
        str(out),
    ]
    argv += ["--data", str(a.data)] if a.data else []
    return argv + (["--objects", a.objects] if a.objects else [])


def _condition_overrides(sampling: dict, condition: str) -> dict:
    """The overrides the study recorded for ``condition`` (its ``sampling.conditions``); {} if not recorded."""
    for c in sampling.get("conditions") or []:
        if isinstance(c, dict) and c.get("name") == condition:
            return dict(c.get("overrides") or {})
    return {}


def calibrate(a, argv: list[str]) -> dict:
    """Run the candidates' studies and choose (module doc); returns the results file's object.

    Raises:
        DataError: a study failed (exit status other than 0 or 1), or lacks the sampled fields, or the
            candidates' studies replayed different recordings."""
    figures, recordings, sampling = [], None, {}
    for i, centres in enumerate(CENTRES):
        out = a.work / f"candidate_{i}" / "study.json"
        env = dict(os.environ, **{ENV: str(_candidate_file(a.work, i, centres))})
        rc = run_candidate(_study_argv(a, out), env)
        if rc not in (0, 1):
            raise DataError(out, None, f"the study of candidate {centres_name(centres)} exited {rc}")
        rows, sampling = _rows(out)
        seqs = sorted(str(r["sequence"]) for r in rows)
        if recordings is not None and seqs != recordings:
            raise DataError(out, "rollouts", "the candidates' studies replayed different recordings")
        recordings = seqs
        for cond in CONDITIONS:
            fig = balanced_accuracy(rows, cond)
            figures.append(
                {
                    "name": f"{centres_name(centres)} / {cond}",
                    "centres": centres,
                    "condition": cond,
                    "overrides": _condition_overrides(sampling, cond),
                    **(fig or {"balanced_accuracy": None}),
                }
            )
        print(
            f"candidate {centres_name(centres)}: "
            + ", ".join(
                f"{f['condition']} {f['balanced_accuracy']:.3f}"
                if f["balanced_accuracy"] is not None
                else f"{f['condition']} -"
                for f in figures[-len(CONDITIONS) :]
            )
        )
    best = choose(figures)
    return {
        "base": "replay",
        "choice": dict(best),
        "figure": FIGURE,
        "candidates": figures,
        "recordings": recordings,
        "samples": a.samples,
        "seed": a.seed,
        "corruptions": sampling.get("corruptions"),
        "made_by": "python scripts/calibrate.py " + shlex.join(argv),
        "commit": head_commit(ROOT),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
    }


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="calibrate.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="grab", help="the recordings it is chosen on (default grab: its lifts)")
    ap.add_argument("--data", type=Path, default=None, help="data folder or mirror (run_study.py --data)")
    ap.add_argument("--objects", default=None, help="a subset (run_study.py --objects); default every lift")
    ap.add_argument("--samples", type=int, default=32, help="samples per recording and condition (default 32)")
    ap.add_argument("--seed", type=int, default=0, help="the samples' seed (default 0)")
    ap.add_argument("--workers", type=int, default=2, help="run_study.py --workers (default 2)")
    ap.add_argument("--work", type=Path, default=Path("out/calibration"), help="the candidates' studies")
    ap.add_argument("--out", type=Path, default=Path("docs/results/calibration.json"), help="the choice")
    a = ap.parse_args(argv)
    if a.samples < 1:
        raise UsageError("--samples", f"must be >= 1, got {a.samples}")
    doc = calibrate(a, argv)
    atomic_write_text(a.out, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    ch = doc["choice"]
    print(
        f"chose {ch['name']}: balanced accuracy {ch['balanced_accuracy']:.3f} (TPR {ch['tpr']:.2f}, TNR "
        f"{ch['tnr']:.2f}) on {len(doc['recordings'])} recordings; wrote {a.out}"
    )
    return 0
