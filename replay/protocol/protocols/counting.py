"""The counts a study keeps of lift-judged rollouts (the lift and hug-oracle protocols): outcomes, the
ablation, the diagnosis, per intent, the sampled verdict's classes, medians (``counts`` in ``study.json``)."""

from __future__ import annotations

import numpy as np

from replay.checks.causes import count_causes
from replay.checks.intent import INTENT_LIFT
from replay.protocol.diagnosis import CLASSES as DIAGNOSIS_CLASSES
from replay.protocol.intent_counts import LIFTS, NO_INTENT, OTHER_INTENTS, intent_counts, intent_group
from replay.protocol.p_lift_stats import p_lift_counts


def summarize(rollouts: list[dict], failed: dict, wall_s: float) -> dict:
    """Outcome counts and timing of lift-judged rollouts; ``by_intent``:
    :func:`replay.protocol.intent_counts.intent_counts`; ``causes``: refusals and input flags per cause
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
        "causes": count_causes(rollouts, failed),
        "median_contacts_force_at_lift": float(np.median(fl)) if fl else None,
        "median_wrist_err_mm": float(np.median(we)) if we else None,
        "median_wrist_err_peak_mm": float(np.median(wp)) if wp else None,
        "max_wrist_err_peak_mm": float(np.max(wp)) if wp else None,
        "wall_s": wall_s,
        "mean_rollout_pair_s": float(np.mean(rt)) if rt else None,
        "median_rtf": float(np.median(rtf)) if rtf else None,
        **agreement_medians(rollouts),
    }


def agreement_medians(rollouts: list[dict]) -> dict:
    """Contact agreement over the recordings that have both recorded contact (a recall) and simulated
    contact (a precision) (:mod:`replay.protocol.contact_agreement`): ``median_contact_agreement_precision`` /
    ``_recall`` over those (None if none), ``contact_agreement_n`` (how many), ``contact_agreement_of`` (all
    the rollouts), ``contact_agreement_no_simulated`` (recorded contact, no bone carrying force) and
    ``contact_agreement_no_recorded`` (no recorded contact, or an engine without per-contact forces); the
    three counts sum to ``_of``."""
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
    """Counts of a lift-judged protocol: :func:`summarize` and, with ``--samples``, ``p_lift``
    (:func:`replay.protocol.p_lift_stats.p_lift_counts`, lift recordings only), ``p_lift_groups`` (the same
    per :func:`replay.protocol.intent_counts.intent_group`, each apart) and ``p_lift_rollouts``."""
    counts = summarize(rollouts, failed, wall_s)
    if (pl := p_lift_counts([r for r in rollouts if r.get("intent") in (None, INTENT_LIFT)])) is not None:
        counts["p_lift"] = pl
    groups = {
        g: c
        for g in (LIFTS, OTHER_INTENTS, NO_INTENT)
        if (c := p_lift_counts([r for r in rollouts if intent_group(r.get("intent")) == g])) is not None
    }
    if groups:
        counts["p_lift_groups"] = groups
        counts["p_lift_rollouts"] = sum(
            len(v) for r in rollouts for v in ((r.get("p_lift_samples") or {}).get("lifted") or {}).values()
        )
    return counts
