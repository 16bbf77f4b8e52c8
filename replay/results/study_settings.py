"""A study's ``sampling``, ``judge`` and named ``config`` choices (:class:`~replay.results.records.StudyRecord`),
read once from JSON."""

from __future__ import annotations

from dataclasses import dataclass

from replay.results.json_record import JsonRecord, read_as
from replay.results.judge import Judge


@dataclass(frozen=True)
class Named(JsonRecord):
    """A named entry (a condition, a sampled variable)."""

    name: str | None = None


@dataclass(frozen=True)
class Classes(JsonRecord):
    """How p_lift is classed: its interval (``wilson95``) against ``threshold``."""

    threshold: float = 0.5
    interval: str = "wilson95"


@dataclass(frozen=True)
class Sampling(JsonRecord):
    """A study's ``sampling`` (:func:`replay.study.sampling_setup.sampling_record`)."""

    samples: int | None = None
    seed: int | None = None
    conditions: list[Named] = read_as(Named.many, factory=list)
    variables: list[Named] = read_as(Named.many, factory=list)
    classes: Classes = read_as(Classes.from_dict, factory=Classes)
    corruptions: list | None = None

    def condition_names(self) -> list[str]:
        return [str(c.name) for c in self.conditions]


@dataclass(frozen=True)
class StudyJudge(JsonRecord):
    physics: str | None = None
    condition: str | None = None
    default: Judge = read_as(Judge.from_dict, factory=lambda: Judge.from_dict(None))  # as the study recorded it


@dataclass(frozen=True)
class ConfigNames(JsonRecord):
    """The named choices of a study's ``config`` its readers show (the whole config:
    :meth:`replay.config.ReplayConfig.from_dict`); ``support_thickness`` m."""

    physics: str | None = None
    support_thickness: float | None = None


def judged_physics(study) -> str | None:
    """The physics a study's verdicts were read under: its judge's, else its config's; None: neither."""
    return StudyJudge.from_dict(study.judge).physics or ConfigNames.from_dict(study.config).physics
