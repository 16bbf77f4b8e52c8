"""A study record carrying the sampled verdict's fields exactly as the issue #46 schema declares them
(per rollout ``p_lift`` / ``p_lift_corrupted``; per study ``sampling``, ``discrimination``,
``counts["p_lift"]``), for the report side's tests (a study whose classes cover every case, without running one).

The lifted counts ``k`` per recording and condition are made up (what a study would measure); every
derived figure is computed from them here as the schema defines it: p = k / n, the 95 % Wilson score
interval (scipy.stats.binomtest), the class from the interval against 0.5, the counts per condition.
"""

from __future__ import annotations

import json
from pathlib import Path

from scipy.stats import binomtest

from replay.protocol.verdict import WORD_OF_CLASS
from replay.results.records import FORMAT_VERSION

N = 32
CONDITIONS = ("as_replayed", "wrist_uncompensated", "mesh_hand")
#: (sequence, object, intent, outcome, lifted of N per condition)
RECORDINGS = (("mug_lift", "mug", "lift", "lifted", (30, 12, 25)),
              ("duck_lift", "duck", "lift", "not_lifted", (2, 0, 14)),
              ("stapler_lift", "stapler", "lift", "lifted", (27, 3, 31)),
              ("bowl_pass_1", "bowl", "pass", "not_lifted", (16, 1, 0)))
#: the hug-oracle's lifted of N for the recordings it ran (one only: the page must say the others lack it)
ORACLE = {"mug_lift": (20, 5, 17)}
CORRUPTIONS = ("wrist_offset_2cm",)
THRESHOLD = 0.5
#: each p_lift class, in order, and the verdict word a reader is told for it
CLASS_WORDS = {c: w.value for c, w in WORD_OF_CLASS.items()}


def entry(k: int, n: int = N) -> dict:
    """One condition's p_lift entry from ``k`` lifted of ``n`` (module doc)."""
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    cls = "robust_lift" if ci.low >= THRESHOLD else "robust_failure" if ci.high <= THRESHOLD else "uncertain"
    return {"p": k / n, "lo": ci.low, "hi": ci.high, "n": n, "k": k, "class": cls,
            "driver": {"variable": "friction", "effect": 0.25, "low": 0.3, "high": 0.55} if 0 < k < n else None}


def p_lift(ks) -> dict:
    return {c: entry(k) for c, k in zip(CONDITIONS, ks)}


def write_p_lift_study(d: Path, physics: str = "replay") -> Path:
    """Write ``d/study.json`` and its rollouts (lift and one hug-oracle) with the sampled fields; returns
    the study path."""
    (d / "study_rollouts").mkdir(parents=True, exist_ok=True)
    rows, oracle_rows = [], []
    for seq, obj, intent, outcome, ks in RECORDINGS:
        rec = {"format_version": FORMAT_VERSION, "sequence": seq, "object": obj, "intent": intent, "outcome": outcome,
               "lifted": outcome == "lifted", "sampled": {"p_lift": p_lift(ks),
               "p_lift_corrupted": {"wrist_offset_2cm": p_lift([max(k - 10, 0) for k in ks])}}}
        (d / "study_rollouts" / f"{seq}.json").write_text(json.dumps(rec))
        rows.append({"sequence": seq, "object": obj, "outcome": outcome, "lifted": outcome == "lifted",
                     "diagnosis": None if outcome == "lifted" else "slid_out", "json": f"study_rollouts/{seq}.json"})
        if seq in ORACLE:
            orec = dict(rec, sampled=dict(rec["sampled"], p_lift=p_lift(ORACLE[seq])))
            (d / "study_rollouts" / f"{seq}.hug-oracle.json").write_text(json.dumps(orec))
            oracle_rows.append({"sequence": seq, "object": obj, "outcome": "lifted",
                                "json": f"study_rollouts/{seq}.hug-oracle.json"})
    counts = {c: {k: 0 for k in ("robust_lift", "uncertain", "robust_failure")} for c in CONDITIONS}
    for _, _, intent, _, ks in RECORDINGS:
        if intent == "lift":
            for c, e in p_lift(ks).items():
                counts[c][e["class"]] += 1
    disc = [{"protocol": "lift", "condition": c, "corruption": "wrist_offset_2cm",
             "p_real": sum(ks[i] for *_, ks in RECORDINGS[:3]) / (3 * N),
             "p_corrupted": sum(max(ks[i] - 10, 0) for *_, ks in RECORDINGS[:3]) / (3 * N),
             "auc": 0.75, "ratio": None, "n_recordings": 3,
             "reference": {"ratio": 0.5, "source": "HUG paper, 2 cm wrist offset"}} for i, c in enumerate(CONDITIONS)]
    for dd in disc:
        dd["ratio"] = dd["p_corrupted"] / dd["p_real"]
    study = {"format_version": FORMAT_VERSION, "dataset": "grab", "config": {"physics": physics}, "config_hash": "0" * 16,
             "protocols": ["lift", "hug-oracle"], "sequences": [r[0] for r in RECORDINGS],
             "counts": {"rollouts": len(rows), "lifted": 2, "p_lift": counts,
                        "hug-oracle": {"rollouts": len(oracle_rows), "p_lift": {
                            c: {k: int(entry(lifted)["class"] == k) for k in ("robust_lift", "uncertain", "robust_failure")}
                            for c, lifted in zip(CONDITIONS, ORACLE["mug_lift"])}}},
             "rollouts": rows,
             "oracle_rollouts": oracle_rows, "discrimination": disc,
             "sampling": {"samples": N, "seed": 0,
                          "conditions": [{"name": c, "overrides": {}, "why": "test"} for c in CONDITIONS],
                          "variables": [{"name": "friction", "distribution": "uniform(0.3, 1.0)", "source": "test"}],
                          "classes": {"threshold": THRESHOLD, "interval": "wilson95"}}}
    (d / "study.json").write_text(json.dumps(study))
    return d / "study.json"
