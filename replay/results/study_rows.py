"""A study's rows read once from JSON as :class:`StudyRow` (``p_lift``, ``verdict``, ``cross_checks`` typed; other keys
in ``extra``)."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any

from replay.results.json_record import JsonRecord
from replay.results.records import REFINE_FIELDS, ROW_FIELDS
from replay.results.verdict_record import CrossCheck, PLiftEntry, Verdict, cross_checks, p_lift_entries

#: the typed keys a row may carry beyond :data:`ROW_FIELDS`
TYPED = ("p_lift", "p_lift_corrupted", "verdict", "cross_checks")
#: the prefix of an extra verdict pair's ``lifted`` column (``lifted_hug-oracle@authored``, replay.study.verdicts)
PAIR_PREFIX = "lifted_"


class _RowBase:
    @classmethod
    def from_dict(cls, d: dict) -> StudyRow:
        d = d if isinstance(d, dict) else {}
        kw = {k: d.get(k) for k in ROW_FIELDS}
        kw.update(
            p_lift=p_lift_entries(d.get("p_lift")),
            p_lift_corrupted=d.get("p_lift_corrupted") if isinstance(d.get("p_lift_corrupted"), dict) else {},
            verdict=Verdict.from_dict(d.get("verdict")),
            cross_checks=cross_checks(d.get("cross_checks")),
            extra={k: v for k, v in d.items() if k not in _NAMES},
        )
        return cls(**kw)

    @property
    def name(self) -> str:
        return str(self.sequence)


StudyRow = dataclasses.make_dataclass(
    "StudyRow",
    [(k, Any, field(default=None)) for k in ROW_FIELDS]
    + [
        ("p_lift", dict[str, PLiftEntry], field(default_factory=dict)),
        ("p_lift_corrupted", dict, field(default_factory=dict)),
        ("verdict", Verdict | None, field(default=None)),
        ("cross_checks", list[CrossCheck], field(default_factory=list)),
        ("extra", dict, field(default_factory=dict)),
    ],
    bases=(_RowBase,),
)
StudyRow.__module__ = __name__
StudyRow.__doc__ = "One row of a study (module doc): every ROW_FIELDS name an attribute, typed p_lift and verdict."

_NAMES = frozenset(ROW_FIELDS) | frozenset(TYPED)


def study_rows(rows) -> list:
    return [StudyRow.from_dict(r) for r in rows or [] if isinstance(r, dict)]


RefineRow = dataclasses.make_dataclass(
    "RefineRow", [(k, Any, field(default=None)) for k in REFINE_FIELDS], bases=(JsonRecord,), frozen=True
)
RefineRow.__module__ = __name__
RefineRow.__doc__ = "One row of a study's refine_rollouts: every REFINE_FIELDS name an attribute."
