"""The protocol registry: a :class:`Protocol` per replay protocol, registered under its CLI word; no other module
compares a protocol's name. A new protocol is one module and :func:`register`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from replay.config import PARTS
from replay.results.outcomes import LIFTED
from replay.results.records import ROW_FIELDS, study_row
from replay.results.rollout_parts import RESULT_TYPES, register_result

_REGISTRY: dict[str, Protocol] = {}


class Protocol:
    """A replay protocol. ``name``: the ``--protocol`` word and results' ``protocol``; ``primary``: files under the bare
    sequence (lift); ``rows_field``: its rows' list in the study JSON (a ``StudyRecord`` field, else ``extra``);
    ``csv_suffix``: rows CSV ``<study stem><suffix>.csv`` (None: none; a shared one is written by the first
    registered); ``ablation`` / ``sampled``: takes the contact ablation / sampled verdict; ``judged_on_lift``: verdict
    is ``lifted``; ``shakes``: shake and release follow its lift; ``result_type``: its ``ProtocolResult`` subclass;
    ``config_part``: its :data:`replay.config.PARTS` entry (None: none)."""

    name: ClassVar[str]
    primary: ClassVar[bool] = False
    rows_field: ClassVar[str]
    row_fields: ClassVar[tuple[str, ...]] = ROW_FIELDS
    csv_suffix: ClassVar[str | None] = None
    ablation: ClassVar[bool] = False
    sampled: ClassVar[bool] = False
    judged_on_lift: ClassVar[bool] = False
    shakes: ClassVar[bool] = False
    success: ClassVar[str] = LIFTED
    outcome_field: ClassVar[str] = "outcome"
    result_type: ClassVar[type | None] = None
    config_part: ClassVar[str | None] = None

    def config(self, cfg):
        """The config a rollout runs with (its part applied, validated); raises DataError for a value out of range."""
        return cfg.validate()

    def plan(self, rec, coords, mjcf, *, cfg):
        """The :class:`replay.protocol.plan.Plan` of ``rec`` with ``coords`` (T, 67, Newton joint_q order, xyzw);
        raises DataError on bad input."""
        raise NotImplementedError

    def judge(self, rec, plan, scene, *, extent, cfg, trace, poses: dict, metrics: dict) -> dict:
        """Metric updates of one world beyond the common measures (its own test); may add arrays to ``poses``."""
        return {}

    def window_end(self, rec, settings: dict | None) -> int:
        """The last recorded frame this protocol replays (the recording is cropped after it)."""
        return int(rec.grasp_frame)

    def run(self, run_contact, rec, coords, *, mjcf: str, cfg, settings: dict | None, ablation: bool) -> tuple:
        """One study job: ``(contact RolloutResult, ablation RolloutResult or None, extra fields)``."""
        contact, ab = run_contact(rec, coords, mjcf, cfg=cfg, ablation=ablation, protocol=self)
        return contact, ab, {}

    def settings(self, given: dict | None) -> dict | None:
        """Its study settings, checked and completed (``Job.settings``); raises UsageError for a value out of range."""
        return given

    def record_fields(self, settings: dict | None) -> dict:
        """Fields its settings add to every rollout record (e.g. ``recorded_max_s``)."""
        return {}

    def same_settings(self, rec, settings: dict | None) -> bool:
        """Whether a rollout record ``rec`` on disk ran with ``settings`` (``--resume`` keeps it)."""
        return True

    def row(self, rec, json_rel: str) -> dict:
        """The study's row of one rollout record (:attr:`row_fields`; ``json``: its file, relative)."""
        return study_row(rec, json_rel)

    def counts(self, recs: list, failed: dict, wall_s: float) -> dict:
        """The study's counts of this protocol's rollout records (``failed``: the study's, per recording)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<protocol {self.name}>"


def register(cls: type[Protocol]) -> type[Protocol]:
    """Class decorator registering a :class:`Protocol` under its ``name``; ValueError if another class holds it."""
    have = _REGISTRY.get(cls.name)
    if have is not None and type(have) is not cls:
        raise ValueError(f"protocol {cls.name!r} is registered already ({type(have).__name__})")
    if cls.config_part is not None and cls.config_part not in PARTS:
        raise ValueError(f"protocol {cls.name!r}: config part {cls.config_part!r} is not one of {sorted(PARTS)}")
    if cls.result_type is not None:
        register_result(cls.result_type)
    _REGISTRY[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    """Remove a registered protocol and its result type (tests)."""
    proto = _REGISTRY.pop(name, None)
    if proto is not None and proto.result_type is not None:
        RESULT_TYPES.pop(proto.result_type.key, None)


def protocol_named(name: str | Protocol) -> Protocol:
    """The registered protocol of ``name`` (a :class:`Protocol` passes through); KeyError if none."""
    if isinstance(name, Protocol):
        return name
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown protocol {name!r}; choose from {', '.join(_REGISTRY)}") from None


def protocol_names() -> tuple[str, ...]:
    """In registration order (lift, hug-oracle, recorded, refine, ...)."""
    return tuple(_REGISTRY)


def all_protocols() -> tuple[Protocol, ...]:
    return tuple(_REGISTRY.values())


def primary_protocol() -> Protocol:
    """The protocol whose results carry the bare sequence (lift)."""
    return next(p for p in _REGISTRY.values() if p.primary)


def is_known(name: str) -> bool:
    return name in _REGISTRY


@dataclass(frozen=True, order=True)
class ResultKey:
    """One (recording, protocol) of a study; ``physics`` an extra ``--verdicts`` pair's (None: the study's). Text
    ``<sequence>`` (primary) or ``<sequence> [<protocol>@<physics>]``; file stem ``<sequence>.<protocol>``."""

    sequence: str
    protocol: str
    physics: str | None = None

    @property
    def unit(self) -> str:
        """``<protocol>`` or ``<protocol>@<physics>``: what runs (an extra verdict pair runs as a protocol)."""
        return self.protocol if self.physics is None else f"{self.protocol}@{self.physics}"

    @property
    def bare(self) -> bool:
        """Keyed and filed by the sequence alone (the primary protocol, the study's own physics)."""
        return self.physics is None and protocol_named(self.protocol).primary

    @property
    def text(self) -> str:
        return self.sequence if self.bare else f"{self.sequence} [{self.unit}]"

    @property
    def stem(self) -> str:
        base = self.sequence.replace("/", "__")
        return base if self.bare else f"{base}.{self.unit}"

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(cls, text: str, sequences) -> ResultKey:
        """The key of ``text`` among ``sequences`` (a name may hold `` [``); no fit: a primary key of ``text``."""
        text = str(text)
        if text in sequences or not text.endswith("]"):
            return cls(text, primary_protocol().name)
        at = text.rfind(" [")
        while at > 0:
            if text[:at] in sequences:
                proto, _, phys = text[at + 2 : -1].partition("@")
                return cls(text[:at], proto, phys or None)
            at = text.rfind(" [", 0, at)
        return cls(text, primary_protocol().name)
