#!/usr/bin/env python
"""Choose the named physics ``calibrated`` once (issues #46, #54; :mod:`replay.study.calibration`).

    python scripts/calibrate.py --dataset grab --data DIR --samples 32 [--attribute] [--objects a,b] [--seed 0]
        [--workers 2] [--work out/calibration] [--out replay/results/calibration.json] [--candidates 0,2]
        [--score-only]

One sampled study with the declared corruptions per candidate (``$REPLAY_CALIBRATION`` names its file), scored
per condition; the best is written with every candidate's figures. ``--attribute``: the choice again with each
of issue #54's items reverted. Lift recordings only; resumable. Exit status 1 also for a study that failed or
lacks the sampled fields.
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

from replay import console
from replay.checks.intent import INTENT_LIFT
from replay.errors import DataError, UsageError
from replay.fileio import atomic_write_text
from replay.output.results_summary import head_commit
from replay.results.files import read_rollout
from replay.sim.calibration_file import ENV
from replay.study.calibration import (
    ATTRIBUTIONS,
    CENTRES,
    CONDITIONS,
    FIGURE,
    OWN_WORLD,
    candidate_figures,
    centres_name,
    choose,
)

ROOT = Path(__file__).resolve().parents[2]


def run_candidate(argv: list[str], env: dict) -> int:
    """Run ``scripts/run_study.py argv`` in a subprocess with ``env``, stdout into ``run_study.log`` beside its
    ``--out``; its exit status."""
    log = Path(argv[argv.index("--out") + 1]).parent / "run_study.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as f:
        return subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "run_study.py"), *argv], env=env, stdout=f
        ).returncode


def _rows(study_path: Path) -> tuple[list[dict], dict, list]:
    """The lift recordings' ``{sequence, p_lift, p_lift_corrupted}`` of a study, its ``sampling`` and
    ``discrimination``. Raises DataError: unreadable, or no row with ``p_lift_corrupted``."""
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
        out.append({"sequence": r.get("sequence"), **{k: rec.get(k) for k in ("p_lift", "p_lift_corrupted")}})
    if not any(r["p_lift_corrupted"] for r in out):
        raise DataError(
            study_path,
            "rollouts.p_lift_corrupted",
            "no lift recording has it: the study must run with --samples N --corruptions",
        )
    return out, doc.get("sampling") or {}, doc.get("discrimination") or []


def _candidate_file(folder: Path, name: str, centres: dict, overrides: dict) -> Path:
    p = folder / "calibration.json"
    choice = {"name": name, "overrides": overrides, "centres": centres}
    atomic_write_text(p, json.dumps({"base": "replay", "choice": choice}, indent=1) + "\n")
    return p


def _study_argv(a, out: Path, conditions: tuple[str, ...]) -> list[str]:
    argv = ["--dataset", a.dataset, "--physics", "calibrated", "--samples", str(a.samples), "--seed", str(a.seed)]
    argv += ["--conditions", ",".join(conditions), "--corruptions", "--workers", str(a.workers), "--quiet"]
    argv += ["--out", str(out), "--resume"] + (["--data", str(a.data)] if a.data else [])
    return argv + (["--objects", a.objects] if a.objects else [])


def _condition_overrides(sampling: dict, condition: str) -> dict:
    """The overrides the study recorded for ``condition`` (its ``sampling.conditions``); {} if not recorded."""
    for c in sampling.get("conditions") or []:
        if isinstance(c, dict) and c.get("name") == condition:
            return dict(c.get("overrides") or {})
    return {}


def _run(
    a, folder: Path, name: str, centres: dict, overrides: dict, conditions: tuple[str, ...] = CONDITIONS
) -> tuple[list[dict], dict, list]:
    """:func:`_rows` of one candidate's sampled study in ``folder``. Raises DataError: it exited other than 0 or 1,
    or lacks the sampled fields."""
    out = folder / "study.json"
    if a.score_only:
        if not out.is_file():
            raise DataError(out, None, f"candidate {name} not measured (--score-only runs no study)")
        return _rows(out)
    env = dict(os.environ, **{ENV: str(_candidate_file(folder, name, centres, overrides))})
    rc = run_candidate(_study_argv(a, out, conditions), env)
    if rc not in (0, 1):
        raise DataError(out, None, f"the study of candidate {name} exited {rc}")
    return _rows(out)


def calibrate(a, argv: list[str]) -> dict:
    """The results file's object: the candidates' studies, the choice, the attribution rows. Raises DataError: a study
    failed or lacks the sampled fields, or the studies replayed different recordings."""
    figures, recordings, sampling = [], None, {}
    for i, centres in enumerate(CENTRES):
        if i not in a.candidates:
            continue
        name = centres_name(centres)
        rows, sampling, disc = _run(a, a.work / f"candidate_{i}", name, centres, dict(OWN_WORLD))
        seqs = sorted(str(r["sequence"]) for r in rows)
        if recordings is not None and seqs != recordings:
            raise DataError(
                a.work / f"candidate_{i}", "rollouts", "the candidates' studies replayed different recordings"
            )
        recordings = seqs
        for cond in CONDITIONS:
            fig = candidate_figures(rows, disc, cond)
            over = {**OWN_WORLD, **_condition_overrides(sampling, cond)}
            figures.append(
                {
                    "name": f"{name} / {cond}",
                    "centres": centres,
                    "condition": cond,
                    "overrides": over,
                    **(fig or {"balanced_accuracy": None}),
                }
            )
        console.out(f"candidate {name}: " + ", ".join(_line(f) for f in figures[-len(CONDITIONS) :]))
    best = dict(choose(figures))
    rows_att = _attribute(a, best, recordings) if a.attribute else []
    hand = next((r for r in rows_att if r["name"] == "hand"), None)
    if hand and hand.get("balanced_accuracy") is not None and hand["balanced_accuracy"] > best["balanced_accuracy"]:
        best["overrides"] = {k: v for k, v in best["overrides"].items() if k not in OWN_WORLD}
        best["hand"] = "the dataset's shape: the fitted hand judged worse (attribution row 'hand')"
    return {
        "base": "replay",
        "choice": best,
        "figure": FIGURE,
        "candidates": figures,
        "candidates_measured": f"{len(a.candidates)} of the {len(CENTRES)} declared centres"
        + (
            ""
            if len(a.candidates) == len(CENTRES)
            else f" (--candidates {','.join(map(str, a.candidates))}): a partial choice"
        ),
        "attribution": rows_att,
        "recordings": recordings,
        "samples": a.samples,
        "seed": a.seed,
        "corruptions": sampling.get("corruptions"),
        "made_by": "python scripts/calibrate.py " + shlex.join(argv),
        "commit": head_commit(ROOT),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
    }


def _parse_candidates(text: str | None) -> tuple[int, ...]:
    """``--candidates`` as sorted indices into :data:`CENTRES` (None: all). Raises UsageError."""
    if text is None:
        return tuple(range(len(CENTRES)))
    try:
        idx = sorted({int(t) for t in text.split(",") if t.strip()})
    except ValueError:
        idx = []
    if not idx or any(i < 0 or i >= len(CENTRES) for i in idx):
        raise UsageError("--candidates", f"indices 0..{len(CENTRES) - 1}, comma-separated; got {text!r}")
    return tuple(idx)


def _line(f: dict) -> str:
    if f.get("balanced_accuracy") is None:
        return f"{f['condition']} -"
    return f"{f['condition']} {f['balanced_accuracy']:.3f} (median p {f['median_p_real']:.2f})"


def _attribute(a, best: dict, recordings: list[str]) -> list[dict]:
    """``[{name, reverts, overrides, **figures}]``: the chosen candidate, then with each of :data:`ATTRIBUTIONS`
    reverted, under the chosen condition alone."""
    cond, base = best["condition"], dict(best["overrides"])
    out = [
        {
            "name": "chosen",
            "reverts": "nothing",
            "overrides": base,
            **{
                k: best.get(k)
                for k in ("balanced_accuracy", "tpr", "tnr", "n_real", "n_corrupted", "median_p_real", "auc")
            },
        }
    ]
    for att in ATTRIBUTIONS:
        over = {**base, **att.overrides}
        folder = a.work / f"attribution_{att.name}"
        try:
            rows, _, disc = _run(a, folder, f"{best['name']} - {att.name}", best["centres"], over, (cond,))
            seqs = sorted(str(r["sequence"]) for r in rows)
            if seqs != recordings:
                raise DataError(folder, "rollouts", f"{len(seqs)} of the {len(recordings)} recordings replayed")
        except DataError as e:
            if not a.score_only:
                raise
            out.append({"name": att.name, "reverts": att.reverts, "overrides": over, "not_measured": str(e)})
            console.out(f"attribution {att.name}: not measured ({e})")
            continue
        fig = candidate_figures(rows, disc, cond) or {"balanced_accuracy": None}
        out.append({"name": att.name, "reverts": att.reverts, "overrides": over, **fig})
        console.out(f"attribution {att.name}: {_line({**fig, 'condition': cond})}")
    return out


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
    ap.add_argument("--out", type=Path, default=Path("replay/results/calibration.json"), help="the choice")
    ap.add_argument(
        "--attribute", action="store_true", help="also the chosen candidate with each of issue #54's items reverted"
    )
    ap.add_argument(
        "--candidates",
        default=None,
        help="the declared centre candidates to measure, by index (e.g. 0,2; default all): a choice among them only",
    )
    ap.add_argument(
        "--score-only",
        action="store_true",
        help="run no study: score the studies already in --work (an attribution row not finished says so)",
    )
    a = ap.parse_args(argv)
    a.candidates = _parse_candidates(a.candidates)
    if a.samples < 1:
        raise UsageError("--samples", f"must be >= 1, got {a.samples}")
    doc = calibrate(a, argv)
    atomic_write_text(a.out, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    ch = doc["choice"]
    console.out(
        f"chose {ch['name']}: balanced accuracy {ch['balanced_accuracy']:.3f} (TPR {ch['tpr']:.2f}, TNR "
        f"{ch['tnr']:.2f}) on {len(doc['recordings'])} recordings; wrote {a.out}"
    )
    return 0
