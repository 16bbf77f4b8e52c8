"""Agreement between rollout sets (a protocol's rows of a study JSON): per pair of sets the recordings that
succeeded in both / only A / only B / neither."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from replay.errors import UsageError
from replay.protocol.protocols.base import (
    ResultKey,
    all_protocols,
    is_known,
    primary_protocol,
    protocol_named,
    protocol_names,
)
from replay.results.files import read_study
from replay.results.json_record import JsonRecord, read_as
from replay.results.records import StudyRecord

#: format of the agreement JSON (``scripts/agreement.py``); 2: sets of any protocol, ``paired`` and ``left_out``
AGREEMENT_FORMAT = 2
#: a key the config does not hold
_ABSENT = object()


@dataclass(frozen=True)
class _Row(JsonRecord):
    """A row's sequence and rise (m; the lift-judged protocols')."""

    sequence: str | None = None
    rise: float | None = None


@dataclass(frozen=True)
class _Overrides(JsonRecord):
    hand_shape: object = None
    finger_effort_limit: object = None


@dataclass(frozen=True)
class _LabelConfig(JsonRecord):
    """What a set's label names of its study's config (older studies' fields among them)."""

    hand: object = None
    hand_variant: object = None
    engine: object = None
    solver_backend: object = None
    effort_limit: object = _ABSENT
    physics_overrides: _Overrides = read_as(_Overrides.from_dict)


@dataclass(frozen=True)
class _Hand(JsonRecord):
    model: object = None
    shape: object = None


@dataclass
class RolloutSet:
    """One protocol's rows of one study: ``rows`` {sequence: row}, ``failed`` {sequence: reason}, ``sequences``
    every recording the study selected."""

    path: Path
    protocol: str
    label: str
    rows: dict = field(default_factory=dict)
    failed: dict = field(default_factory=dict)
    sequences: list = field(default_factory=list)
    config_hash: str | None = None

    def rise_mm(self, sequence: str) -> float | None:
        """The row's rise, mm to 0.01 (None: none)."""
        rise = _Row.from_dict(self.rows[sequence]).rise
        return None if rise is None else round(1000.0 * float(rise), 2)

    def outcome(self, sequence: str) -> str | None:
        return self.rows[sequence].get(protocol_named(self.protocol).outcome_field)

    def succeeded(self, sequence: str) -> bool:
        return self.outcome(sequence) == protocol_named(self.protocol).success

    def why_not(self, sequence: str) -> str:
        """Why ``sequence`` has no row here (one phrase naming the set)."""
        if sequence in self.failed:
            return f"{self.label}: could not be replayed ({self.failed[sequence]})"
        if sequence in self.sequences:
            return f"{self.label}: no {self.protocol} rollout"
        return f"{self.label}: not one of its recordings"


def _label(path: Path, study: StudyRecord, protocol: str) -> str:
    cfg, hand = _LabelConfig.from_dict(study.config), _Hand.from_dict(study.hand)
    shape = hand.shape or cfg.hand_variant or cfg.physics_overrides.hand_shape
    effort = cfg.physics_overrides.finger_effort_limit if cfg.effort_limit is _ABSENT else cfg.effort_limit
    bits = [
        study.dataset or "?",
        str(hand.model or cfg.hand or "?"),
        str(shape or "?"),
        str(cfg.solver_backend or cfg.engine or "?"),  # the engine (older studies: the backend)
        f"effort {effort}",
    ] + ([] if protocol_named(protocol).primary else [protocol])
    return f"{path.parent.name}/{path.name} ({', '.join(bits)})"


def _failures(study: StudyRecord, protocol: str) -> dict[str, str]:
    """``{sequence: reason}`` of ``study.failed`` for ``protocol`` under the study's own physics."""
    out = {}
    seqs = set(study.sequences or [])
    for text, reason in (study.failed or {}).items():
        key = ResultKey.parse(text, seqs)
        if key.physics is None and is_known(key.protocol) and protocol_named(key.protocol) is protocol_named(protocol):
            out[key.sequence] = str(reason)
    return out


def rollout_set(path: str | Path, protocol: str | None = None, label: str | None = None) -> RolloutSet:
    """The rollout set of ``protocol`` in the study at ``path``; None: the first in registry order it has rows of.

    Raises:
        UsageError: an unknown protocol, or one the study did not run.
        ResultsFormatError: a study that cannot be read.
    """
    path = Path(path)
    study = read_study(path)
    if protocol is None:
        protocol = next((p.name for p in all_protocols() if study.rows_of(p.rows_field)), primary_protocol().name)
    if not is_known(protocol):
        raise UsageError("--protocols", f"{protocol!r} is not one of {', '.join(protocol_names())}")
    rows = study.rows_of(protocol_named(protocol).rows_field)
    ran = study.protocols or [primary_protocol().name]
    if not rows and protocol not in ran:
        raise UsageError("--protocols", f"{path} has no {protocol} rollouts (its protocols: {', '.join(ran)})")
    return RolloutSet(
        path,
        protocol,
        label or _label(path, study, protocol),
        {_Row.from_dict(r).sequence: r for r in rows},
        _failures(study, protocol),
        list(study.sequences or []),
        study.config_hash,
    )


def _pair(a: RolloutSet, b: RolloutSet, common: list[str]) -> dict:
    both = [q for q in common if a.succeeded(q) and b.succeeded(q)]
    only_a = [q for q in common if a.succeeded(q) and not b.succeeded(q)]
    only_b = [q for q in common if b.succeeded(q) and not a.succeeded(q)]
    return {
        "a": a.label,
        "b": b.label,
        "both": len(both),
        "only_a": len(only_a),
        "only_b": len(only_b),
        "neither": len(common) - len(both) - len(only_a) - len(only_b),
        "flipped": only_a + only_b,
        "only_a_list": only_a,
        "only_b_list": only_b,
    }


def agreement(paths: list[str | Path], labels: list[str] | None = None, protocols: list[str] | None = None) -> dict:
    """The agreement table of the rollout sets at ``paths`` (a study may be given twice, with two protocols).

    Args:
        labels: one per set (default: folder/file, hand, shape, engine, effort and non-lift protocol).
        protocols: one per set (default: the first the study has rows of).

    Returns:
        ``{"format", "studies": [{label, path, protocol, config_hash}], "recordings": [{sequence, outcomes,
        rises_mm}], "pairs": [{a, b, both, only_a, only_b, neither, flipped}], "common": n, "paired": [sequence],
        "left_out": [{sequence, reasons}], "missing": {label: [sequence]}}``; only recordings with a row in every
        set are paired; success is the protocol's (``lifted``, ``tracked``).

    Raises:
        UsageError: fewer than two sets, labels or protocols of another count, a protocol a study did not run.
        ResultsFormatError: a study that cannot be read.
    """
    if len(paths) < 2:
        raise UsageError(
            "--studies",
            "agreement needs at least two rollout sets (--studies A.json B.json; "
            "one study twice with --protocols lift hug-oracle)",
        )
    for name, given in (("--labels", labels), ("--protocols", protocols)):
        if given is not None and len(given) != len(paths):
            raise UsageError(name, f"{len(given)} {name[2:]} for {len(paths)} studies")
    none = [None] * len(paths)
    sets = [rollout_set(*a) for a in zip(paths, protocols or none, labels or none)]
    if len({s.label for s in sets}) < len(sets):
        raise UsageError("--labels", "two sets have the same label: give --labels")
    common = sorted(set.intersection(*(set(s.rows) for s in sets)))
    everything = sorted(set().union(*(set(s.rows) | set(s.failed) | set(s.sequences) for s in sets)))
    left_out = [
        {"sequence": q, "reasons": [s.why_not(q) for s in sets if q not in s.rows]}
        for q in everything
        if q not in common
    ]
    recs = [
        {
            "sequence": q,
            "outcomes": [s.outcome(q) for s in sets],
            "rises_mm": [s.rise_mm(q) for s in sets],
        }
        for q in common
    ]
    missing = {s.label: sorted(extra) for s in sets if (extra := set(s.rows) - set(common))}
    return {
        "format": AGREEMENT_FORMAT,
        "common": len(common),
        "paired": common,
        "left_out": left_out,
        "missing": missing,
        "studies": [
            {"label": s.label, "path": str(s.path), "protocol": s.protocol, "config_hash": s.config_hash} for s in sets
        ],
        "recordings": recs,
        "pairs": [_pair(sets[i], sets[j], common) for i, j in combinations(range(len(sets)), 2)],
    }


@dataclass(frozen=True)
class _PairCounts(JsonRecord):
    a: str | None = None
    b: str | None = None
    both: int | None = None
    only_a: int | None = None
    only_b: int | None = None
    neither: int | None = None
    flipped: list = read_as(lambda d: d or [])


@dataclass(frozen=True)
class _LeftOut(JsonRecord):
    sequence: str | None = None
    reasons: list = read_as(lambda d: d or [])


@dataclass(frozen=True)
class _Table(JsonRecord):
    """An agreement table (:func:`agreement`) as its readers show it."""

    pairs: list[_PairCounts] = read_as(_PairCounts.many)
    paired: list = read_as(lambda d: d or [])
    left_out: list[_LeftOut] = read_as(_LeftOut.many)


def markdown(table: dict) -> str:
    """The pair counts as a Markdown table (what the README shows)."""
    lines = [
        "| A | B | succeeded in both | only in A | only in B | neither | flipped |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in _Table.from_dict(table).pairs:
        lines.append(
            f"| {p.a} | {p.b} | {p.both} | {p.only_a} | {p.only_b} | {p.neither} | "
            f"{', '.join(q.removesuffix('_lift') for q in p.flipped) or '-'} |"
        )
    return "\n".join(lines)


def pairing_lines(table: dict) -> list[str]:
    """What was paired and what was left out, and why: one console line each."""
    t = _Table.from_dict(table)
    paired = t.paired
    out = [f"paired {len(paired)} recording(s) present in every set" + (f": {', '.join(paired)}" if paired else "")]
    for item in t.left_out:
        out.append(f"left out {item.sequence}: {'; '.join(item.reasons)}")
    return out
