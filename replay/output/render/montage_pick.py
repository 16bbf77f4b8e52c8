"""Which rollouts a montage shows when a study has more than it can tile, and the rule in words (drawn on the
montage, kept in its record): every class (the verdict; without verdicts the displayed outcome) gets one tile, the
rest shared by the classes' counts (largest remainder); within a class one object at a time in turn, so a class of
1,000 mugs and a few others is not all mugs; grouped by class, in study order within it.
"""

from __future__ import annotations

from collections import defaultdict

from replay.output.render.clip import StudyRollout
from replay.results.outcomes import words as display_outcome
from replay.results.study_rows import StudyRow
from replay.results.verdict_record import Word

#: the order classes are tiled in (others after these, as they first appear)
CLASS_ORDER = (*(w.value for w in Word), "lifted", "not lifted", "unstable", "stuck")


def outcome_class(row: StudyRow) -> str:
    """A study row's class: its verdict, else its outcome as the report says it."""
    return row.verdict.word.value if row.verdict is not None else str(display_outcome(row.outcome))


def _quotas(sizes: dict[str, int], k: int) -> dict[str, int]:
    """Tiles per class: one each (the largest classes first when there are more classes than
    tiles), the rest in proportion to size, largest remainder first, never more than a class holds."""
    names = sorted(sizes, key=lambda c: -sizes[c])  # stable: ties keep their order
    if k <= len(names):
        return {c: int(c in names[:k]) for c in sizes}
    q = {c: 1 for c in sizes}
    spare, rest = k - len(names), sum(sizes.values()) - len(names)
    if rest <= 0:
        return q
    share = {c: spare * (sizes[c] - 1) / rest for c in sizes}
    for c in sizes:
        q[c] += int(share[c])
    left = k - sum(q.values())
    for c in sorted(sizes, key=lambda c: -(share[c] - int(share[c]))):
        if left <= 0:
            break
        if q[c] < sizes[c]:
            q[c], left = q[c] + 1, left - 1
    return q


def _by_object_in_turn(items: list[tuple[int, StudyRollout]]) -> list[tuple[int, StudyRollout]]:
    """``items`` reordered one object at a time: each object's first, then each one's second, ..."""
    per: dict[str, list] = defaultdict(list)
    for it in items:
        per[str(it[1].record.object)].append(it)
    out, depth = [], 0
    while len(out) < len(items):
        out += [lst[depth] for lst in per.values() if depth < len(lst)]
        depth += 1
    return out


def pick_tiles(
    rolls: list[tuple[int, StudyRollout]], max_tiles: int | None
) -> tuple[list[tuple[int, StudyRollout]], str]:
    """(the chosen of ``rolls`` ((index, rollout) in study order), at most ``max_tiles`` (None: all), grouped by
    class; the rule as one sentence with the counts)."""
    n = len(rolls)
    if max_tiles is None or n <= max_tiles:
        return list(rolls), f"every recording ({n})"
    groups: dict[str, list] = defaultdict(list)
    for it in rolls:
        groups[outcome_class(it[1].row)].append(it)
    order = [c for c in CLASS_ORDER if c in groups] + [c for c in groups if c not in CLASS_ORDER]
    q = _quotas({c: len(groups[c]) for c in order}, max_tiles)
    chosen = []
    for c in order:
        chosen += sorted(_by_object_in_turn(groups[c])[: q[c]], key=lambda it: it[0])
    counts = ", ".join(f"{c} {q[c]} of {len(groups[c])}" for c in order)
    return chosen, (
        f"{len(chosen)} of {n} recordings: one tile per {'verdict' if set(order) <= _WORDS else 'outcome class'}, "
        "the rest in proportion to "
        f"each class's count; within a class one object at a time, in study order ({counts})"
    )


_WORDS = {w.value for w in Word}
