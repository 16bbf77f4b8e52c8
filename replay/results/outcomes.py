"""A rollout's outcome: the values the result files hold, the words a reader is shown, and the
mapping that reads files of an earlier format version.

The lift protocol's outcomes (:func:`replay.protocol.measures.rollout_metrics`): ``lifted`` (the
object rose the success height and cleared the support at the end of the hold), ``not_lifted``
(it did not: it never left the table, or rose and was lost before the hold ended; the diagnosis
says which), ``stuck`` (lifted, but it did not fall when the fingers opened), ``unstable`` (the
simulation stopped on a reason). The recorded protocol's: ``tracked``, ``lost``, ``unstable``.

Format 1 called ``not_lifted`` ``dropped`` (in ``outcome``, ``refine_outcome`` and the counts,
also per intent); :func:`replay.results.convert.upgrade_words` maps a format-1 file's object to this version's
words when it is read (issue #40: one word for one thing).
"""

from __future__ import annotations

from replay.results.convert import FORMAT_1_WORDS

#: the outcomes of a lift-judged rollout, then the recorded protocol's two of its own
LIFTED, NOT_LIFTED, STUCK, UNSTABLE, TRACKED, LOST = "lifted", "not_lifted", "stuck", "unstable", "tracked", "lost"
#: every outcome a rollout may hold
OUTCOMES = (LIFTED, NOT_LIFTED, STUCK, UNSTABLE, TRACKED, LOST)

#: what a reader is shown for an outcome value, where the value is not already a word
WORDS = {"not_lifted": "not lifted"}


def words(outcome: str | None) -> str | None:
    """The outcome as a reader is told it (``not_lifted`` -> ``not lifted``; a format-1 ``dropped`` too)."""
    outcome = FORMAT_1_WORDS.get(outcome, outcome) if isinstance(outcome, str) else outcome
    return WORDS.get(outcome, outcome)
