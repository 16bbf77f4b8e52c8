"""The counts a study keeps of lift-judged rollouts (the lift and hug-oracle protocols): outcomes, the
ablation, the diagnosis, per intent, the sampled verdict's classes, medians (``counts`` in ``study.json``)."""

from __future__ import annotations

import numpy as np

from replay.checks.causes import count_causes
from replay.checks.intent import INTENT_LIFT
from replay.protocol.diagnosis import CLASSES as DIAGNOSIS_CLASSES
from replay.protocol.intent_counts import GROUPS, intent_counts, intent_group
from replay.protocol.p_lift_stats import p_lift_counts
from replay.protocol.verdict import verdict_of
from replay.results.outcomes import NOT_LIFTED, STUCK, UNSTABLE
from replay.results.verdict_record import Tally


def summarize(recs: list, failed: dict, wall_s: float) -> dict:
    """Outcome counts and timing of lift-judged records, ``by_intent``, ``causes`` (refusals and input flags), wrist
    error mm: ``median_wrist_err_mm`` (median of medians), ``median_wrist_err_peak_mm`` / ``max_wrist_err_peak_mm``."""
    ab = [r for r in recs if r.ablation is not None]
    g = [r.grasp for r in recs]
    rt = [r.timing.wall_s_total for r in recs if r.timing.wall_s_total]
    rtf = [r.timing.rtf for r in recs if r.timing.rtf]
    fl = [x.contacts_force_at_lift for x in g if x.contacts_force_at_lift is not None]
    we = [x.wrist_err_median_mm for x in g if x.wrist_err_median_mm is not None]
    wp = [x.wrist_err_peak_mm for x in g if x.wrist_err_peak_mm is not None]
    return {
        "rollouts": len(recs),
        "stable": sum(bool(r.stable) for r in recs),
        "lifted": sum(bool(r.lifted) for r in recs),
        "shake_held": sum(bool(r.lift.shake_held) for r in recs),
        "not_lifted": sum(r.outcome == NOT_LIFTED for r in recs),
        "unstable": sum(r.outcome == UNSTABLE for r in recs),
        "stuck": sum(r.outcome == STUCK for r in recs),
        "ablation_run": len(ab),
        "ablation_clean": sum(bool(r.ablation_clean) for r in ab),
        "ablation_no_rise": sum(bool(r.ablation_no_rise) for r in ab),
        "ablation_lifted": sum(bool(r.ablation.lifted) for r in ab),
        "ablation_max_disp_mm": max((r.ablation.grasp.max_object_disp_mm for r in ab), default=None),
        "diagnosis": {c: sum(1 for r in recs if (r.diagnosis or {}).get("class") == c) for c in DIAGNOSIS_CLASSES},
        "by_intent": intent_counts(recs),
        "failed_inputs": len(failed),
        "causes": count_causes([r.input_flags for r in recs], failed),
        "median_contacts_force_at_lift": float(np.median(fl)) if fl else None,
        "median_wrist_err_mm": float(np.median(we)) if we else None,
        "median_wrist_err_peak_mm": float(np.median(wp)) if wp else None,
        "max_wrist_err_peak_mm": float(np.max(wp)) if wp else None,
        "wall_s": wall_s,
        "mean_rollout_pair_s": float(np.mean(rt)) if rt else None,
        "median_rtf": float(np.median(rtf)) if rtf else None,
        **agreement_medians(recs),
    }


def agreement_medians(recs: list) -> dict:
    """``median_contact_agreement_precision`` / ``_recall`` over records with both recorded and simulated contact (None:
    none), ``contact_agreement_n`` of them, ``_no_simulated``, ``_no_recorded`` (or no per-contact forces); the three
    counts sum to ``contact_agreement_of``."""
    g = [r.grasp for r in recs]
    both = [x for x in g if x.contact_agreement_precision is not None and x.contact_agreement_recall is not None]
    no_rec = sum(x.contact_agreement_recall is None for x in g)
    return {
        "median_contact_agreement_precision": _median([x.contact_agreement_precision for x in both]),
        "median_contact_agreement_recall": _median([x.contact_agreement_recall for x in both]),
        "contact_agreement_n": len(both),
        "contact_agreement_of": len(recs),
        "contact_agreement_no_simulated": len(recs) - len(both) - no_rec,
        "contact_agreement_no_recorded": no_rec,
    }


def _median(v: list) -> float | None:
    return float(np.median(v)) if v else None


def lift_counts(recs: list, failed: dict, wall_s: float) -> dict:
    """:func:`summarize`, ``verdicts`` per intent group (``Tally``) and, with ``--samples``, ``p_lift`` (lift
    recordings only), ``p_lift_groups`` (per intent group) and ``p_lift_rollouts``."""
    counts = summarize(recs, failed, wall_s)
    verdicts = [(intent_group(r.intent), verdict_of(r)) for r in recs]
    counts["verdicts"] = {
        g: Tally.of(v for gg, v in verdicts if gg == g).to_dict() for g in GROUPS if any(gg == g for gg, _ in verdicts)
    }
    if (pl := p_lift_counts([r.sampled.p_lift for r in recs if r.intent in (None, INTENT_LIFT)])) is not None:
        counts["p_lift"] = pl
    groups = {
        g: c
        for g in GROUPS
        if (c := p_lift_counts([r.sampled.p_lift for r in recs if intent_group(r.intent) == g])) is not None
    }
    if groups:
        counts["p_lift_groups"] = groups
        counts["p_lift_rollouts"] = sum(
            len(v) for r in recs for v in ((r.sampled.p_lift_samples or {}).get("lifted") or {}).values()
        )
    return counts
