"""The one reader of older result files: a study or rollout JSON object of format 1-6 as format 7's (docs/results.md);
older configs through :func:`replay.results.legacy_physics.legacy_config`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from replay.errors import DataError
from replay.results import protocol_results  # noqa: F401  (registers the protocols' result types)
from replay.results.rollout_parts import RESULT_TYPES, GraspMeasures, LiftMeasures, SceneReadback, Timing, _empty
from replay.results.sampled_fields import SampledVerdict

#: the result files' layout versions this grasp-replay reads (the last is the one it writes)
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7)
#: the last version whose rollouts were flat
FLAT_UNTIL = 5
#: format 1's outcome values (and count keys) and this version's
FORMAT_1_WORDS = {"dropped": "not_lifted"}
#: keys of a flat rollout dropped when null (``verdict_envelope``: format 3's, kept where it holds one)
DROPPED = frozenset({"verdict_envelope"})
#: the parts every rollout has, in the order a file holds them
PARTS = (SceneReadback, GraspMeasures, LiftMeasures, Timing, SampledVerdict)


class ResultsFormatError(DataError):
    """A result file of another (or no) format version, or without a required field."""


def check_version(version, source: str | Path | None) -> int:
    """The file's version; ResultsFormatError unless in :data:`READABLE_VERSIONS`."""
    if version is None:
        raise ResultsFormatError(
            source,
            "format_version",
            "missing: written by an older grasp-replay; re-run the study "
            "(scripts/run_study.py, without --resume) to rewrite it",
        )
    try:
        v = int(np.asarray(version).item())
    except (TypeError, ValueError):
        v = None
    if v not in READABLE_VERSIONS:
        raise ResultsFormatError(
            source,
            "format_version",
            f"{version!r} is not a version this grasp-replay reads "
            f"({', '.join(map(str, READABLE_VERSIONS))}); re-run the study or use "
            "the matching release",
        )
    return v


def upgrade_rollout(doc: dict, source: str | Path | None = None) -> dict:
    """A rollout JSON object (version checked) in format 6's layout."""
    v = check_version(doc.get("format_version"), source)
    if v > FLAT_UNTIL:
        return doc
    return dict(nest(upgrade_words(doc, v)), format_version=READABLE_VERSIONS[-1])


def upgrade_study(doc: dict, source: str | Path | None = None) -> dict:
    """A study JSON object (version checked) with format 1's words read, as format 6; in place, returned."""
    v = check_version(doc.get("format_version"), source)
    upgrade_words(doc, v)
    doc["format_version"] = READABLE_VERSIONS[-1]
    return doc


def nest(flat: dict) -> dict:
    """A flat rollout object (format <= 5, or a rollout's metrics) in format 6's layout: each part and the protocol's
    result under its key (empty parts left out; a format-5 ``oracle`` object as it was), ``ablation`` nested alike."""
    out, used = {}, set(DROPPED & {k for k, v in flat.items() if v is None})
    for part in (*PARTS, *RESULT_TYPES.values()):
        if part.key in flat and part.key not in part.names():  # nested already (a format-5 oracle object)
            used.add(part.key)
            if isinstance(flat[part.key], dict):
                out[part.key] = flat[part.key]
            continue
        vals = {n: flat[n] for n in part.names() if n in flat}
        used |= set(vals)
        if any(not _empty(v) for v in vals.values()):
            out[part.key] = vals
    rest = {k: v for k, v in flat.items() if k not in used}
    if isinstance(rest.get("ablation"), dict):
        rest["ablation"] = nest(rest["ablation"])
    return {**rest, **out}


def upgrade_words(doc, version: int | None = None):
    """``doc`` with :data:`FORMAT_1_WORDS` replaced at any depth, in place; ``version`` None: read from ``doc``."""
    if version is None and isinstance(doc, dict):
        version = doc.get("format_version")
    if version is None or int(version) != 1:
        return doc
    _rename(doc)
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
