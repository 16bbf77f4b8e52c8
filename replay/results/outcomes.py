"""A rollout's outcome values and the words a reader is shown (docs/results.md): lift ``lifted``, ``not_lifted``,
``stuck`` (did not fall when let go), ``unstable``; recorded ``tracked``, ``lost``, ``unstable``."""

from __future__ import annotations

from replay.results.convert import FORMAT_1_WORDS

#: the outcomes of a lift-judged rollout, then the recorded protocol's two of its own
LIFTED, NOT_LIFTED, STUCK, UNSTABLE, TRACKED, LOST = "lifted", "not_lifted", "stuck", "unstable", "tracked", "lost"

OUTCOMES = (LIFTED, NOT_LIFTED, STUCK, UNSTABLE, TRACKED, LOST)

#: what a reader is shown for an outcome value, where the value is not already a word
WORDS = {"not_lifted": "not lifted"}


def words(outcome: str | None) -> str | None:
    """The outcome as a reader is told it (``not_lifted`` -> ``not lifted``; a format-1 ``dropped`` too)."""
    outcome = FORMAT_1_WORDS.get(outcome, outcome) if isinstance(outcome, str) else outcome
    return WORDS.get(outcome, outcome)
