"""The verdicts of one study side by side: each recording judged by each (protocol, physics) pair
``<protocol>@<physics>`` (no ``@``: the study's own physics); main and extra pairs, their files: docs/results.md."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from replay.config import ReplayConfig
from replay.errors import UsageError, did_you_mean
from replay.protocol.protocols.base import ResultKey, all_protocols, is_known, primary_protocol, protocol_named
from replay.protocol.protocols.hug_oracle import HugOracle
from replay.protocol.protocols.lift import Lift
from replay.results.json_record import JsonRecord
from replay.results.judge import DEFAULT_JUDGE
from replay.results.study_rows import PAIR_PREFIX, StudyRow, study_rows
from replay.sim import physics
from replay.sim.hand_assets import resolve_hand_variant
from replay.study.job import config_hash, job_config
from replay.study.resume import PriorStudy
from replay.study.summary import Rollouts

#: the pairs the report asks for where a study lacks one (docs/oracle.md)
DEFAULT_VERDICTS = tuple(
    f"{p}@{phys}"
    for p, phys in (
        (Lift.name, DEFAULT_JUDGE.physics),
        (HugOracle.name, DEFAULT_JUDGE.physics),
        (HugOracle.name, "authored"),
    )
)


def verdict_protocols() -> tuple[str, ...]:
    """The protocols a verdict pair may name: those judged on a lift."""
    return tuple(p.name for p in all_protocols() if p.judged_on_lift)


def pair_name(protocol: str, physics_name: str) -> str:
    """``<protocol>@<physics>``."""
    return f"{protocol}@{physics_name}"


@dataclass(frozen=True)
class VerdictPair:
    """One (protocol, physics) pair of a study; ``main``: the study's own protocol under its own physics. JSON:
    ``{name, protocol, physics, main, config_hash}``."""

    protocol: str
    physics: str
    main: bool
    config_hash: str | None = None

    @property
    def name(self) -> str:
        return pair_name(self.protocol, self.physics)

    def key(self, sequence: str) -> ResultKey:
        """The result key of ``sequence`` under this pair (an extra pair's carries its physics)."""
        return ResultKey(sequence, self.protocol, None if self.main else self.physics)

    def to_dict(self) -> dict:
        out = {"name": self.name, "protocol": self.protocol, "physics": self.physics, "main": self.main}
        return out if self.config_hash is None else dict(out, config_hash=self.config_hash)

    @classmethod
    def read(cls, items) -> list[VerdictPair]:
        """The pairs of a study JSON's ``verdicts`` (those without a name or protocol left out)."""
        return [
            cls(str(v.protocol), str(v.physics), bool(v.main), v.config_hash)
            for v in _PairDoc.many(items)
            if v.name and v.protocol
        ]


@dataclass(frozen=True)
class _PairDoc(JsonRecord):
    """A pair as a study JSON's ``verdicts`` holds it."""

    name: str | None = None
    protocol: str | None = None
    physics: str | None = None
    main: bool | None = None
    config_hash: str | None = None


def parse_verdicts(text: str | list[str] | None, protocols: list[str], study_physics: str) -> list[VerdictPair]:
    """The study's verdict pairs: the main ones (``protocols`` judged on a lift, under ``study_physics``), then each
    extra of ``text`` (comma-separated or a list; no ``@``: ``study_physics``) once, in order. Raises UsageError: an
    unknown protocol (or one not judged on a lift: ``recorded``) or physics."""
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text or []) if t.strip()]
    main = [VerdictPair(p, study_physics, True) for p in protocols if is_known(p) and protocol_named(p).judged_on_lift]
    out = {v.name: v for v in main}
    for t in items:
        proto, _, phys = t.partition("@")
        phys = phys or study_physics
        if not (is_known(proto) and protocol_named(proto).judged_on_lift):
            known = verdict_protocols()
            raise UsageError(
                "--verdicts",
                f"{t!r}: the protocol must be one judged on a lift ({', '.join(known)})"
                f"; {did_you_mean(proto, known)}e.g. hug-oracle@authored",
            )
        if phys not in physics.NAMES:
            raise UsageError(
                "--verdicts",
                f"{t!r}: unknown physics {phys!r}; {did_you_mean(phys, physics.NAMES)}"
                f"choose from {', '.join(physics.NAMES)}",
            )
        out.setdefault(pair_name(proto, phys), VerdictPair(proto, phys, False))
    return list(out.values())


def extras(verdicts: list[VerdictPair] | None) -> list[VerdictPair]:
    """The extra pairs of ``verdicts`` (those that are not the study's own rollouts)."""
    return [v for v in verdicts or [] if not v.main]


def verdict_config(cfg: ReplayConfig, physics_name: str, dataset: str | None = None) -> ReplayConfig:
    """``cfg`` under the physics ``physics_name`` as ``run_study.py --physics NAME`` with the study's other flags makes
    it (the same ``config_hash``; ``--physics-set`` departures kept, the hand shape resolved for ``dataset``). Raises
    DataError: the physics ``calibrated`` without its results file."""
    if physics_name == cfg.physics:
        return cfg
    if cfg.physics == "authored":
        cfg = cfg.replace(oracle={"contact": ReplayConfig().oracle.contact})
    if dataset is not None and "hand_shape" in (cfg.physics_overrides or {}):
        bare = dataclasses.replace(
            cfg, physics_overrides={k: v for k, v in cfg.physics_overrides.items() if k != "hand_shape"}
        )
        if resolve_hand_variant(bare, dataset) == cfg:  # resolved by the study's physics, not a departure
            return resolve_hand_variant(physics.apply_physics(bare, physics_name), dataset)
    return physics.apply_physics(cfg, physics_name)


def with_hashes(
    verdicts: list[VerdictPair], cfg: ReplayConfig, dataset: str | None = None
) -> tuple[list[VerdictPair], dict[str, ReplayConfig]]:
    """``verdicts`` each with its ``config_hash``, and the extra pairs' ``{name: config}`` (:func:`verdict_config`)."""
    cfgs = {v.name: verdict_config(cfg, v.physics, dataset) for v in extras(verdicts)}
    return [dataclasses.replace(v, config_hash=config_hash(cfgs.get(v.name, cfg))) for v in verdicts], cfgs


def study_verdicts(
    text, protocols: list[str], cfg: ReplayConfig, *, prior: PriorStudy | None, chash: str, dataset: str | None = None
) -> tuple[list[VerdictPair] | None, dict[str, tuple[dict, str]]]:
    """(the pairs of ``text`` with their hashes, plus those of a study an ``--objects`` subset merges into, ``{extra
    pair: (job config dict, config hash)}``); ``(None, {})`` where none is asked. Raises UsageError: a pair of an
    unknown protocol or physics."""
    had = VerdictPair.read(prior and prior.verdicts)
    if text is None and not (prior and prior.config_hash == chash and extras(had)):
        return None, {}
    pairs = parse_verdicts(text, protocols, cfg.physics)
    pairs, cfgs = with_hashes(merged(prior, pairs, chash), cfg, dataset)
    return pairs, {n: (job_config(c), config_hash(c)) for n, c in cfgs.items()}


def record_verdicts(rec, verdicts: list[VerdictPair] | None, ro: Rollouts, *, prior: PriorStudy | None) -> None:
    """Put the pairs into the study record ``rec`` in place (:func:`verdict_part`); ``prior``: under
    ``--ablation-only``, the study as it was, whose extra verdicts are kept."""
    if verdicts is not None:
        rec.verdicts = [v.to_dict() for v in verdicts]
        lead = lead_protocol(rec.protocols)
        rec.verdict_rollouts = verdict_part(ro, verdicts, lead=(lead, rec.rows_of(lead.rows_field)), counts=rec.counts)
    elif prior and prior.verdicts:
        rec.verdicts, rec.verdict_rollouts = prior.verdicts, prior.verdict_rollouts
        kept = extras(VerdictPair.read(rec.verdicts))
        rec.counts.update({v.name: (prior.counts or {}).get(v.name) for v in kept})
        rows = prior.verdict_rollouts or {}
        lifted = {v.name: {r.sequence: r.lifted for r in study_rows(rows.get(v.name))} for v in kept}
        for row in rec.rows_of(lead_protocol(rec.protocols).rows_field):
            seq = StudyRow.from_dict(row).sequence
            row.update({f"{PAIR_PREFIX}{n}": by.get(seq) for n, by in lifted.items()})


def merged(prior: PriorStudy | None, verdicts: list[VerdictPair], chash: str) -> list[VerdictPair]:
    """``verdicts`` plus the extra pairs of ``prior`` (of this config ``chash``) it does not name."""
    if not prior or prior.config_hash != chash:
        return verdicts
    names = {v.name for v in verdicts}
    return verdicts + [v for v in extras(VerdictPair.read(prior.verdicts)) if v.name not in names]


def verdict_part(ro: Rollouts, verdicts: list[VerdictPair], *, lead: tuple, counts: dict) -> dict:
    """The study's ``verdict_rollouts`` ``{name: rows}`` of the extra pairs; in place: each extra's
    ``counts[name]``, and a ``lifted_<name>`` per other pair on each row of ``lead`` ``(protocol, its rows)``."""
    out: dict[str, list[dict]] = {}
    lifted: dict[str, dict[str, bool]] = {}
    for v in verdicts:
        proto = protocol_named(v.protocol)
        docs = [ro.results[k] for s in ro.seqs if (k := v.key(s)) in ro.results]
        lifted[v.name] = {d.sequence: bool(d.lifted) for d in docs}
        if v.main:
            continue
        out[v.name] = [proto.row(d, ro.json_path(v.key(d.sequence))) for d in docs]
        mine = {k.sequence: why for k, why in ro.failed.items() if v.key(k.sequence) == k}
        counts[v.name] = proto.counts(docs, mine, ro.wall_s)
    own = next((v.name for v in verdicts if v.main and protocol_named(v.protocol) is lead[0]), None)
    for row in lead[1]:
        seq = StudyRow.from_dict(row).sequence
        for name, by_seq in lifted.items():
            if name != own:
                row[f"{PAIR_PREFIX}{name}"] = by_seq.get(seq)
    return out


def lead_protocol(protocols: list[str] | None):
    """The protocol whose rows lead study.csv: the first of ``protocols`` in registry order with ``csv_suffix``
    "", else the primary one."""
    names = protocols or [primary_protocol().name]
    return next((p for p in all_protocols() if p.name in names and p.csv_suffix == ""), primary_protocol())
