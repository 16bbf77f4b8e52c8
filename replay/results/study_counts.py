"""A study's ``counts`` read once from JSON as :class:`Counts` (other protocols' and verdict pairs' through
:meth:`Counts.of`; undeclared keys in ``extra``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from replay.results.verdict_record import Tally

#: the counts' plain fields (numbers, lists, dicts read as they are)
PLAIN = tuple(
    "rollouts stable lifted shake_held not_lifted unstable stuck tracked lost ablation_run ablation_clean "
    "ablation_no_rise ablation_lifted ablation_max_disp_mm diagnosis by_intent failed_inputs causes "
    "median_contacts_force_at_lift median_wrist_err_mm median_wrist_err_peak_mm max_wrist_err_peak_mm wall_s "
    "mean_rollout_pair_s median_rtf median_contact_agreement_precision median_contact_agreement_recall "
    "contact_agreement_n contact_agreement_of contact_agreement_no_simulated contact_agreement_no_recorded p_lift "
    "p_lift_groups p_lift_rollouts protocol wall_s_this_run resumed_wall_s resumed refused refused_keys "
    "ablation_only_keys".split()
)


@dataclass(frozen=True)
class CheckCount:
    """One cross-check over a group of recordings (:mod:`replay.study.cross_checks`)."""

    check: str
    agree: int
    disagree: int
    no_call: int
    of: int

    @classmethod
    def from_dict(cls, d) -> CheckCount | None:
        if not isinstance(d, dict) or not d.get("check"):
            return None
        n = {k: int(d.get(k) or 0) for k in ("agree", "disagree", "no_call", "of")}
        return cls(str(d["check"]), **n)


class _CountsBase:
    @classmethod
    def from_dict(cls, d) -> Counts:
        """The counts of a ``counts`` object ({} for None)."""
        d = d if isinstance(d, dict) else {}
        kw = {k: d.get(k) for k in PLAIN}
        ver = d.get("verdicts") if isinstance(d.get("verdicts"), dict) else {}
        chk = d.get("cross_checks") if isinstance(d.get("cross_checks"), dict) else {}
        kw["verdicts"] = {g: t for g, v in ver.items() if (t := Tally.from_dict(v)) is not None}
        kw["cross_checks"] = {
            g: [c for x in v or [] if (c := CheckCount.from_dict(x)) is not None] for g, v in chk.items()
        }
        return cls(**kw, extra={k: v for k, v in d.items() if k not in _NAMES})

    def of(self, name: str) -> Counts | None:
        """The counts under ``name`` (another protocol's, a verdict pair's); None: none."""
        got = self.extra.get(name)
        return Counts.from_dict(got) if isinstance(got, dict) else None


Counts = dataclasses.make_dataclass(
    "Counts",
    [(k, Any, field(default=None)) for k in PLAIN]
    + [
        ("verdicts", dict, field(default_factory=dict)),
        ("cross_checks", dict, field(default_factory=dict)),
        ("extra", dict, field(default_factory=dict)),
    ],
    bases=(_CountsBase,),
)
Counts.__module__ = __name__
Counts.__doc__ = "A protocol's counts (module doc): every PLAIN name an attribute; verdicts {group: Tally}."

_NAMES = frozenset(PLAIN) | {"verdicts", "cross_checks"}


@dataclass(frozen=True)
class GroupCount:
    """The outcome counts of a group of recordings (:data:`replay.protocol.intent_counts.INTENT_COUNTS`)."""

    rollouts: int = 0
    lifted: int = 0
    shake_held: int = 0
    not_lifted: int = 0
    unstable: int = 0

    @classmethod
    def of(cls, d) -> GroupCount:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: int(v or 0) for k, v in (d or {}).items() if k in names})
