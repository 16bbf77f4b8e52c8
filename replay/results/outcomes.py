"""A rollout's outcome: the values the result files hold, the words a reader is shown, and the
mapping that reads files of an earlier format version.

The lift protocol's outcomes (:func:`replay.protocol.measures.rollout_metrics`): ``lifted`` (the
object rose the success height and cleared the support at the end of the hold), ``not_lifted``
(it did not: it never left the table, or rose and was lost before the hold ended; the diagnosis
says which), ``stuck`` (lifted, but it did not fall when the fingers opened), ``unstable`` (the
simulation stopped on a reason). The recorded protocol's: ``tracked``, ``lost``, ``unstable``.

Format 1 called ``not_lifted`` ``dropped`` (in ``outcome``, ``refine_outcome`` and the counts,
also per intent); :func:`upgrade` maps a format-1 file's object to this version's words when it
is read (issue #40: one word for one thing).
"""

from __future__ import annotations

#: every outcome a rollout may hold (lift protocol, then the recorded protocol's two of its own)
OUTCOMES = ("lifted", "not_lifted", "stuck", "unstable", "tracked", "lost")

#: what a reader is shown for an outcome value, where the value is not already a word
WORDS = {"not_lifted": "not lifted"}

#: format 1's outcome values (and count keys) and this version's
FORMAT_1_WORDS = {"dropped": "not_lifted"}

#: the result files' layout versions this grasp-replay reads (:data:`replay.results.records.FORMAT_VERSION`
#: is the last)
READABLE_VERSIONS = (1, 2, 3, 4, 5)


def words(outcome: str | None) -> str | None:
    """The outcome as a reader is told it (``not_lifted`` -> ``not lifted``; a format-1 ``dropped`` too)."""
    outcome = FORMAT_1_WORDS.get(outcome, outcome) if isinstance(outcome, str) else outcome
    return WORDS.get(outcome, outcome)


def upgrade(doc, version: int | None = None):
    """``doc`` (a rollout or study JSON object, or a part of one) with format 1's words replaced
    (:data:`FORMAT_1_WORDS`: the values of ``outcome`` / ``refine_outcome`` and the counts' keys, at
    any depth), in place; returned. ``version``: the file's ``format_version`` (read from ``doc``
    when None); a doc of any later version is returned as it is."""
    if version is None and isinstance(doc, dict):
        version = doc.get("format_version")
    if version is None or int(version) != 1:
        return doc
    _rename(doc)
    if isinstance(doc, dict) and "format_version" in doc:
        doc["format_version"] = READABLE_VERSIONS[-1]
    return doc


def _rename(x) -> None:
    if isinstance(x, list):
        for v in x:
            _rename(v)
    elif isinstance(x, dict):
        for k in [k for k in x if k in FORMAT_1_WORDS and isinstance(x[k], int) and not isinstance(x[k], bool)]:
            x[FORMAT_1_WORDS[k]] = x.pop(k)
        for k, v in x.items():
            if k in ("outcome", "refine_outcome") and isinstance(v, str) and v in FORMAT_1_WORDS:
                x[k] = FORMAT_1_WORDS[v]
            else:
                _rename(v)
