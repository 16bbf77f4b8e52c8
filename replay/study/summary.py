"""A study's summary: its counts, package versions and the study record remade at intervals
(:class:`replay.results.records.StudyRecord`; every field: ``docs/results.md``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from replay.checks.causes import count_causes
from replay.config import ReplayConfig
from replay.protocol import recorded_protocol as tracking
from replay.protocol.diagnosis import CLASSES as DIAGNOSIS_CLASSES
from replay.protocol.oracle_plan import ORACLE
from replay.results.records import RolloutRecord, StudyRecord, study_row
from replay.sim import physics
from replay.study.batch import package_versions
from replay.study.counts import LIFTS, NO_INTENT, OTHER_INTENTS, intent_counts, intent_group
from replay.study.job import failed_recordings, result_key, result_stem
from replay.study.p_lift import p_lift_counts
from replay.study.refine_job import REFINE, refine_part


def summarize(rollouts: list[dict], failed: dict, wall_s: float) -> dict:
    """Outcome counts and timing of lift-judged rollouts (the lift and hug-oracle protocols); ``by_intent``:
    :func:`replay.study.counts.intent_counts`; ``causes``: refusals and input flags per cause
    (:func:`replay.checks.causes.count_causes`); wrist tracking error, mm: ``median_wrist_err_mm`` (the
    median of the recordings' medians), ``median_wrist_err_peak_mm`` / ``max_wrist_err_peak_mm`` (the
    median and the largest of their peaks over the lift and hold, ``wrist_err_peak_mm``)."""
    n = len(rollouts)
    ab = [r for r in rollouts if r.get("ablation")]
    rt = [r["wall_s_total"] for r in rollouts if r.get("wall_s_total")]
    rtf = [r["rtf"] for r in rollouts if r.get("rtf")]
    fl = [r["contacts_force_at_lift"] for r in rollouts if r.get("contacts_force_at_lift") is not None]
    we = [r["wrist_err_median_mm"] for r in rollouts if r.get("wrist_err_median_mm") is not None]
    wp = [r["wrist_err_peak_mm"] for r in rollouts if r.get("wrist_err_peak_mm") is not None]
    return {
        "rollouts": n,
        "stable": sum(bool(r["stable"]) for r in rollouts),
        "lifted": sum(bool(r["lifted"]) for r in rollouts),
        "shake_held": sum(bool(r.get("shake_held")) for r in rollouts),
        "not_lifted": sum(r["outcome"] == "not_lifted" for r in rollouts),
        "unstable": sum(r["outcome"] == "unstable" for r in rollouts),
        "stuck": sum(r["outcome"] == "stuck" for r in rollouts),
        "ablation_run": len(ab),
        "ablation_clean": sum(bool(r.get("ablation_clean")) for r in ab),
        "ablation_no_rise": sum(bool(r.get("ablation_no_rise")) for r in ab),
        "ablation_lifted": sum(bool(r["ablation"]["lifted"]) for r in ab),
        "ablation_max_disp_mm": max((r["ablation"]["max_object_disp_mm"] for r in ab), default=None),
        "diagnosis": {
            c: sum(1 for r in rollouts if (r.get("diagnosis") or {}).get("class") == c) for c in DIAGNOSIS_CLASSES
        },
        "by_intent": intent_counts(rollouts),
        "failed_inputs": len(failed),
        "causes": count_causes(rollouts, failed),  # refusals and input flags per cause (replay.checks.causes)
        "median_contacts_force_at_lift": float(np.median(fl)) if fl else None,
        "median_wrist_err_mm": float(np.median(we)) if we else None,
        "median_wrist_err_peak_mm": float(np.median(wp)) if wp else None,  # the median of the recordings' peaks
        "max_wrist_err_peak_mm": float(np.max(wp)) if wp else None,  # the largest peak of any recording
        "wall_s": wall_s,
        "mean_rollout_pair_s": float(np.mean(rt)) if rt else None,
        "median_rtf": float(np.median(rtf)) if rtf else None,
        **agreement_medians(rollouts),
    }


def agreement_medians(rollouts: list[dict]) -> dict:
    """Contact agreement over the recordings that have both recorded contact (bones the person touched
    with: a recall) and simulated contact (bones carrying force: a precision)
    (:mod:`replay.protocol.contact_agreement`): ``median_contact_agreement_precision`` / ``_recall``
    over those (None if none), ``contact_agreement_n`` (how many), ``contact_agreement_of`` (all the
    rollouts), ``contact_agreement_no_simulated`` (recorded contact, no bone carrying force: a recall of
    0 that says nothing of where the hand touched) and ``contact_agreement_no_recorded`` (no recorded
    contact, or an engine without per-contact forces); the three counts sum to ``_of``."""
    both = [
        r
        for r in rollouts
        if r.get("contact_agreement_precision") is not None and r.get("contact_agreement_recall") is not None
    ]
    out = {
        f"median_contact_agreement_{k}": float(np.median([r[f"contact_agreement_{k}"] for r in both])) if both else None
        for k in ("precision", "recall")
    }
    no_rec = sum(r.get("contact_agreement_recall") is None for r in rollouts)
    return dict(
        out,
        contact_agreement_n=len(both),
        contact_agreement_of=len(rollouts),
        contact_agreement_no_simulated=len(rollouts) - len(both) - no_rec,
        contact_agreement_no_recorded=no_rec,
    )


def lift_counts(rollouts: list[dict], failed: dict, wall_s: float) -> dict:
    """The lift protocol's counts: :func:`summarize` and, with ``--samples``, ``p_lift``
    (:func:`replay.study.p_lift.p_lift_counts`, lift recordings only), ``p_lift_groups`` (the same per
    :func:`replay.study.counts.intent_group`: lifts, other intents, no intent named, each apart) and
    ``p_lift_rollouts``."""
    counts = summarize(rollouts, failed, wall_s)
    if (pl := p_lift_counts(_lifts(rollouts))) is not None:
        counts["p_lift"] = pl
    groups = {
        g: c
        for g in (LIFTS, OTHER_INTENTS, NO_INTENT)
        if (c := p_lift_counts([r for r in rollouts if intent_group(r.get("intent")) == g])) is not None
    }
    if groups:
        counts["p_lift_groups"] = groups
        counts["p_lift_rollouts"] = _sampled_rollouts(rollouts)
    return counts


def oracle_counts(rollouts: list[dict], failed: dict, wall_s: float) -> dict:
    """The hug-oracle protocol's counts: those of the lift protocol (:func:`lift_counts`: it is judged on
    a lift too, without the shake and release) with the contact agreement (:func:`agreement_medians`);
    ``failed``: the study's failures (named once, in the study's own ``failed``)."""
    return dict(lift_counts(rollouts, failed, wall_s), **agreement_medians(rollouts))


def recorded_counts(rollouts: list[dict], failed: dict, wall_s: float) -> dict:
    """The recorded protocol's counts (:func:`replay.protocol.recorded_protocol.summarize`: tracked, lost,
    unstable, the medians) with the contact agreement, ``by_intent`` (rollouts per intent), ``failed_inputs``
    and ``wall_s`` (s)."""
    by_intent: dict[str, dict[str, int]] = {}
    for r in rollouts:
        c = by_intent.setdefault(str(r.get("intent") or "unknown"), {"rollouts": 0, "tracked": 0})
        c["rollouts"] += 1
        c["tracked"] += r.get("outcome") == "tracked"
    return dict(
        tracking.summarize(rollouts),
        **agreement_medians(rollouts),
        by_intent=by_intent,
        failed_inputs=len(failed),
        wall_s=wall_s,
    )


#: the count function of each protocol (what the console, study.json, study.csv and the report read)
COUNTERS = {"lift": lift_counts, ORACLE: oracle_counts, "recorded": recorded_counts}


def study_counts(protocols: list[str], by_protocol: dict[str, list[dict]], failed: dict, wall_s: float) -> dict:
    """A study's ``counts``: each protocol's (:data:`COUNTERS`) under its name (``counts["lift"]``,
    ``counts["hug-oracle"]``, ``counts["recorded"]``), and at the top level those of its first protocol
    in the order lift, hug-oracle, recorded (named in ``counts["protocol"]``), so a hug-oracle study alone
    has its real counts at the top level; ``wall_s`` in s."""
    ran = [p for p in COUNTERS if p in protocols] or ["lift"]
    per = {p: COUNTERS[p](by_protocol.get(p) or [], failed, wall_s) for p in ran}
    top = per[ran[0]]
    if ran[0] == "recorded":  # the fields the study's readers expect of the top level, from the lift protocol's
        top = dict(summarize([], failed, wall_s), **top)
    return dict(top, protocol=ran[0], **per)


def tracking_row(doc: dict, rdir: Path, out_dir: Path) -> dict:
    """The study JSON's row of one recorded-protocol rollout (:data:`replay.protocol.recorded_protocol.TRACK_FIELDS`
    and its JSON path)."""
    row = {k: doc.get(k) for k in tracking.TRACK_FIELDS}
    row["json"] = os.path.relpath(rdir / f"{result_stem(doc['sequence'], 'recorded')}.json", out_dir)
    return row


def _lifts(rollouts: list[dict]) -> list[dict]:
    """The rollouts of lift recordings (intent ``lift`` or none stated): other intents are counted apart."""
    return [r for r in rollouts if r.get("intent") in (None, "lift")]


def _carry_p_lift(rows: list[dict], docs: list[dict]) -> list[dict]:
    """``rows`` with each recording's ``p_lift`` / ``p_lift_corrupted`` (the sampled verdict) where it has
    one, in place (the study's rows carry them; the CSV keeps its ROW_FIELDS columns); returned."""
    for row, doc in zip(rows, docs):
        row.update({k: doc[k] for k in ("p_lift", "p_lift_corrupted") if doc.get(k)})
    return rows


def _sampled_rollouts(rollouts: list[dict]) -> int:
    """Worlds the sampled verdict simulated over ``rollouts`` (every condition, real and corrupted)."""
    return sum(len(v) for r in rollouts for v in ((r.get("p_lift_samples") or {}).get("lifted") or {}).values())


def study_record(
    dataset: str,
    config: ReplayConfig,
    chash: str,
    ablation: bool,
    manosim_dir: Path,
    seqs: list[str],
    protocols: list[str],
    results: dict,
    failed: dict,
    wall_s: float,
    rdir: Path,
    out_dir: Path,
) -> StudyRecord:
    """The study record of the rollouts done so far: rows and counts in ``seqs`` order (lift
    results keyed by sequence, recorded ones by :func:`replay.study.job.result_key`), failures,
    config, versions and the inputs every rollout read; ``wall_s`` in s; paths relative to
    ``out_dir``; the counts' failures are per recording (:func:`replay.study.job.failed_recordings`), ``failed``
    keeps every key."""
    ordered = [results[s] for s in seqs if s in results]
    tracked = [results[k] for s in seqs if (k := result_key(s, "recorded")) in results]
    rows = [
        study_row(
            RolloutRecord.from_dict(r, nested=True),
            os.path.relpath(rdir / f"{result_stem(r['sequence'])}.json", out_dir),
        )
        for r in ordered
    ]
    _carry_p_lift(rows, ordered)
    oracle = [results[k] for s in seqs if (k := result_key(s, ORACLE)) in results]
    counts = study_counts(
        protocols, {"lift": ordered, "recorded": tracked, ORACLE: oracle}, failed_recordings(failed, seqs), wall_s
    )
    refined = refine_part(results, seqs, rdir, out_dir, counts, result_key, result_stem) if REFINE in protocols else []
    return StudyRecord(
        dataset=dataset,
        hand={
            "model": config.hand,
            "shape": physics.choice_value(config, "hand_shape"),
            "manosim_dir": str(manosim_dir),
            "mjcf": "per rollout (`hand_mjcf`: the hand side of its recording)",
        },
        config=config.to_dict(),
        config_hash=chash,
        ablation=ablation,
        versions=package_versions(),
        sequences=list(seqs),
        counts=counts,
        failed=dict(failed),
        rollouts=rows,
        inputs={k: v for r in ordered + tracked + oracle for k, v in (r.get("inputs") or {}).items()},
        protocols=list(protocols),
        recorded_rollouts=[tracking_row(r, rdir, out_dir) for r in tracked],
        refine_rollouts=refined,
        oracle_rollouts=_carry_p_lift(
            [
                study_row(
                    RolloutRecord.from_dict(r, nested=True),
                    os.path.relpath(rdir / f"{result_stem(r['sequence'], ORACLE)}.json", out_dir),
                )
                for r in oracle
            ],
            oracle,
        ),
    )
