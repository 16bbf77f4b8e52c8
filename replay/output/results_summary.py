"""Small results files (``docs/results/``) the figure blocks are made from: a results document reduced to what the
tables read, with ``made_by``, ``commit`` and ``date`` (UTC day); docs/figures.md."""

from __future__ import annotations

import datetime as _dt
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from replay.output.table_docs import CrossCheckRun
from replay.protocol.protocols.hug_oracle import HugOracle
from replay.protocol.protocols.lift import Lift
from replay.results.json_record import JsonRecord, read_as
from replay.results.records import REFINE_FIELDS

#: the study row fields the tables read (a subset of replay.results.records.ROW_FIELDS)
STUDY_ROW_FIELDS = (
    "sequence",
    "object",
    "intent",
    "outcome",
    "diagnosis",
    "stable",
    "lifted",
    "rise",
    "shake_held",
    "stuck_after_release",
    "contacts_force_at_lift",
    "wrist_err_median_mm",
    "wrist_err_peak_mm",
    "ablation_clean",
    "ablation_no_rise",
    "ablation_max_disp_mm",
    "ablation_lifted",
    "contact_agreement_precision",
    "contact_agreement_recall",
)


def head_commit(cwd: Path | None = None) -> str:
    """``git rev-parse --short HEAD`` of ``cwd`` (the checkout), or ``"unknown"`` outside a git tree."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=30
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def _rows(rows, fields) -> list[dict]:
    return [{k: r.get(k) for k in fields} for r in rows or []]


@dataclass(frozen=True)
class _Named(JsonRecord):
    name: object = None


@dataclass(frozen=True)
class _Sampling(JsonRecord):
    samples: int | None = None
    seed: int | None = None
    classes: dict | None = None
    conditions: list[_Named] = read_as(_Named.many)
    variables: list[_Named] = read_as(_Named.many)


@dataclass(frozen=True)
class _SampledRow(JsonRecord):
    sequence: str | None = None
    p_lift: dict | None = None
    p_lift_corrupted: dict | None = None


@dataclass(frozen=True)
class _Study(JsonRecord):
    dataset: str | None = None
    config_hash: str | None = None
    versions: dict | None = None
    protocols: list | None = None
    counts: dict | None = None
    judge: dict | None = None
    failed: dict | None = None
    rollouts: list | None = None
    oracle_rollouts: list | None = None
    refine_rollouts: list | None = None
    sampling: dict | None = None
    discrimination: list | None = None


def study_summary(doc: dict) -> dict:
    """The fields of a study JSON the tables read; ValueError: not a study."""
    if "rollouts" not in doc and "oracle_rollouts" not in doc:
        raise ValueError("not a study (no 'rollouts'): scripts/run_study.py writes one")
    st = _Study.from_dict(doc)
    return {
        "dataset": st.dataset,
        "config_hash": st.config_hash,
        "versions": st.versions,
        "protocols": st.protocols,
        "counts": st.counts,
        "judge": st.judge,
        "failed": {k: str(v)[:200] for k, v in (st.failed or {}).items()},
        "rollouts": _rows(st.rollouts, STUDY_ROW_FIELDS),
        "oracle_rollouts": _rows(st.oracle_rollouts, STUDY_ROW_FIELDS),
        "refine_rollouts": _rows(st.refine_rollouts, REFINE_FIELDS),
        **_sampled(st),
    }


def _sampled(st: _Study) -> dict:
    """A sampled study's ``sampling``, ``discrimination``, ``p_lift`` ``{protocol: {sequence: {condition: ...}}}`` and
    ``p_lift_corrupted`` (one level more, by corruption); {} otherwise."""
    if not st.sampling:
        return {}
    rows = {
        p.name: _SampledRow.many(v)
        for p, v in ((Lift, st.rollouts), (HugOracle, st.oracle_rollouts))
        if v and isinstance(v, list)
    }
    return {
        "sampling": _sampling(st.sampling),
        "discrimination": st.discrimination or [],
        "p_lift": {k: {r.sequence: r.p_lift for r in v if r.p_lift} for k, v in rows.items()},
        "p_lift_corrupted": {
            k: {r.sequence: r.p_lift_corrupted for r in v if r.p_lift_corrupted} for k, v in rows.items()
        },
    }


def _sampling(s: dict) -> dict:
    s = _Sampling.from_dict(s)
    return {
        "samples": s.samples,
        "seed": s.seed,
        "classes": s.classes,
        "conditions": [{"name": c.name} for c in s.conditions],
        "variables": [v.name for v in s.variables],
    }


def bridge_summary(doc: dict) -> dict:
    """The bridge's rows without per-recording lists. Raises ValueError: no ``rows``."""
    if "rows" not in doc:
        raise ValueError("not a bridge result (no 'rows'): scripts/bridge.py writes one")
    keep = ("path", "element", "value", "lifted", "of", "unstable", "diagnosis")
    b = _Bridge.from_dict(doc)
    return {"dataset": b.dataset, "rows": _rows(b.rows, keep)}


@dataclass(frozen=True)
class _Bridge(JsonRecord):
    dataset: str | None = None
    rows: list | None = None


def junit_summary(path: Path) -> dict:
    """A pytest JUnit XML report's counts, wall time (s), skip reasons, failures; ValueError: no ``testsuite``."""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        raise ValueError("not a JUnit XML report (no <testsuite>): pytest --junitxml writes one")
    tests, failures, errors, skipped = (int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
    reasons, failed = Counter(), []
    for c in suite.iter("testcase"):
        if c.find("failure") is not None or c.find("error") is not None:
            failed.append(f"{c.get('classname', '')}::{c.get('name', '')}".strip(":"))
        if (s := c.find("skipped")) is not None:
            reasons[(s.get("message") or "").strip()[:160]] += 1
    return {
        "tests": tests,
        "passed": tests - failures - errors - skipped,
        "failed": failures,
        "errors": errors,
        "skipped": skipped,
        "time_s": round(float(suite.get("time", 0.0)), 1),
        "skip_reasons": dict(sorted(reasons.items())),
        "failed_tests": failed,
    }


def crosscheck_summary(doc: dict) -> dict:
    """``benchmarks/authored_crosscheck.py --json`` reduced; ValueError: no ``results``."""
    if not isinstance(doc, dict) or "results" not in doc:
        raise ValueError("not a crosscheck result (no 'results'): benchmarks/authored_crosscheck.py --json writes one")
    x = CrossCheckRun.from_dict(doc)
    return {
        "settings": x.settings,
        "lifted": x.lifted,
        "recordings": x.recordings,
        "agreement": x.agreement,
        "results": [{"sequence": r.sequence, "lifted": bool(r.lifted)} for r in x.results],
    }


def summarize(source: str, doc_or_path, *, made_by: str, commit: str | None = None, date: str | None = None) -> dict:
    """The summary of ``source`` with ``made_by``, ``commit`` (default HEAD) and ``date`` (default today UTC,
    ``YYYY-MM-DD``); ``doc_or_path`` the JSON, the XML path (junit) or a list of JSONs (pose_mapping). ValueError."""
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; choose from {tuple(SOURCES)}")
    body = SOURCES[source](doc_or_path)
    return {
        "source": source,
        "made_by": made_by,
        "commit": commit or head_commit(),
        "date": date or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        **body,
    }


def pose_mapping_summary(docs: list) -> dict:
    """``scripts/validate_pose_mapping.py`` runs reduced (per-landmark median and p90, mm); ValueError: no
    ``overall.per_landmark``."""
    runs = []
    for doc in docs if isinstance(docs, list) else [docs]:
        v = _Validation.from_dict(doc)
        if not v.overall.per_landmark:
            raise ValueError("not a pose-mapping validation (no 'overall.per_landmark'): validate_pose_mapping.py")
        runs.append(
            {
                "hand_shape": v.run.hand_shape,
                "window": v.run.window,
                "frames": v.overall.frames,
                "sequences": [s.name for s in v.sequences],
                "per_landmark": [
                    {"name": k, "median_mm": e.median_mm, "p90_mm": e.p90_mm}
                    for k, e in v.overall.per_landmark.items()
                    if e
                ],
            }
        )
    return {"runs": runs}


@dataclass(frozen=True)
class _Landmark(JsonRecord):
    median_mm: float | None = None
    p90_mm: float | None = None


@dataclass(frozen=True)
class _Overall(JsonRecord):
    frames: int | None = None
    per_landmark: dict = read_as(lambda d: {k: _Landmark.from_dict(v) if v else None for k, v in (d or {}).items()})


@dataclass(frozen=True)
class _Run(JsonRecord):
    hand_shape: object = None
    window: object = None


@dataclass(frozen=True)
class _Validation(JsonRecord):
    run: _Run = read_as(_Run.from_dict)
    overall: _Overall = read_as(_Overall.from_dict)
    sequences: list[_Named] = read_as(_Named.many)


#: each source's summary
SOURCES = {
    "study": study_summary,
    "bridge": bridge_summary,
    "junit": junit_summary,
    "crosscheck": crosscheck_summary,
    "pose_mapping": pose_mapping_summary,
}
