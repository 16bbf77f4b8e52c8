"""Counts per intent and the groups readers never add together: lifts, other intents (their motion after the grasp is
the protocol's, not theirs) and recordings naming no intent."""

from __future__ import annotations

from replay.checks.intent import INTENT_LIFT, INTENT_UNKNOWN
from replay.results.outcomes import NOT_LIFTED, UNSTABLE

#: outcome counts kept per intent (``counts["by_intent"]``, :func:`intent_counts`)
INTENT_COUNTS = ("rollouts", "lifted", "shake_held", "not_lifted", "unstable")

#: the groups of :func:`intent_groups`, in the order they are shown
GROUPS = (LIFTS, OTHER_INTENTS, NO_INTENT) = ("lifts", "other intents", "no intent named")


def intent_counts(recs: list) -> dict[str, dict[str, int]]:
    """``{intent: {rollouts, lifted, shake_held, not_lifted, unstable}}``, ``lift`` first, then by name (none named:
    ``unknown``)."""
    out: dict[str, dict[str, int]] = {}
    for r in recs:
        c = out.setdefault(str(r.intent or INTENT_UNKNOWN), dict.fromkeys(INTENT_COUNTS, 0))
        c["rollouts"] += 1
        c["lifted"] += bool(r.lifted)
        c["shake_held"] += bool(r.lift.shake_held)
        c["not_lifted"] += r.outcome == NOT_LIFTED
        c["unstable"] += r.outcome == UNSTABLE
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != INTENT_LIFT, kv[0])))


def intent_group(intent: str | None) -> str:
    """:data:`LIFTS` (``lift``), :data:`NO_INTENT` (``unknown`` or None) or :data:`OTHER_INTENTS`."""
    if intent == INTENT_LIFT:
        return LIFTS
    return NO_INTENT if intent in (None, "", INTENT_UNKNOWN) else OTHER_INTENTS


def intent_groups(by_intent: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """:func:`intent_counts` summed per :func:`intent_group` in :data:`GROUPS` order; empty groups left out."""
    groups: dict[str, dict[str, int]] = {}
    for intent, c in by_intent.items():
        g = groups.setdefault(intent_group(intent), dict.fromkeys(INTENT_COUNTS, 0))
        for k in INTENT_COUNTS:
            g[k] += int(c.get(k) or 0)
    return dict(sorted(groups.items(), key=lambda kv: GROUPS.index(kv[0])))


def group_words(group: str, n: int) -> str:
    """``30 lifts``, ``8 recordings of other intents``, ``2 recordings with no intent named``."""
    return (
        f"{n} lift" + ("" if n == 1 else "s")
        if group == LIFTS
        else f"{n} recording{'' if n == 1 else 's'} "
        + ("of other intents" if group == OTHER_INTENTS else "with no intent named")
    )
