"""A recording's verdict as the result files hold it (made by :func:`replay.protocol.verdict.verdict_of` alone): the
sampled ``p_lift`` per condition, the :class:`Verdict` and cross-checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from enum import Enum


class Word(str, Enum):
    """A verdict: the recording holds, fails, or the samples cannot tell (its 95 % interval straddles 0.5)."""

    HOLDS = "holds"
    UNCERTAIN = "uncertain"
    FAILS = "fails"

    def __str__(self) -> str:
        return self.value


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _renamed(record, keys: dict) -> dict:
    """``record``'s fields by name, in order, each under ``keys[name]`` where ``keys`` renames it."""
    return {keys.get(f.name, f.name): getattr(record, f.name) for f in fields(record)}


@dataclass(frozen=True)
class Driver:
    """The sampled variable a p_lift depends on most: ``effect`` = ``high`` - ``low``, lift rates of its halves."""

    variable: str
    effect: float
    low: float | None = None
    high: float | None = None

    @classmethod
    def from_dict(cls, d) -> Driver | None:
        if not isinstance(d, dict) or d.get("variable") is None or _num(d.get("effect")) is None:
            return None
        return cls(str(d["variable"]), float(d["effect"]), _num(d.get("low")), _num(d.get("high")))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PLiftEntry:
    """One condition's ``p_lift`` = ``k`` / ``n`` lifted, its 95 % interval ``[lo, hi]``, class and driver."""

    p: float
    lo: float
    hi: float
    n: int
    k: int
    cls: str | None = None
    driver: Driver | None = None

    @classmethod
    def from_dict(cls, d) -> PLiftEntry | None:
        """The entry of a JSON object; None where it holds no ``p``, ``lo`` and ``hi``."""
        if not isinstance(d, dict) or any(_num(d.get(x)) is None for x in ("p", "lo", "hi")):
            return None
        n, k = d.get("n"), d.get("k")
        return cls(
            float(d["p"]),
            float(d["lo"]),
            float(d["hi"]),
            int(n) if isinstance(n, int) else 0,
            int(k) if isinstance(k, int) else 0,
            d.get("class"),
            Driver.from_dict(d.get("driver")),
        )

    def to_dict(self) -> dict:
        return {**_renamed(self, {"cls": "class"}), "driver": None if self.driver is None else self.driver.to_dict()}


def p_lift_entries(d) -> dict[str, PLiftEntry]:
    """``{condition: PLiftEntry}`` of a ``p_lift`` JSON object (``{}`` for None; unreadable entries left out)."""
    if not isinstance(d, dict):
        return {}
    return {str(c): e for c, v in d.items() if (e := PLiftEntry.from_dict(v)) is not None}


@dataclass(frozen=True)
class Verdict:
    """A recording's verdict: ``p`` with its 95 % interval ``[lo, hi]`` over ``k`` of ``n`` lifted (not ``sampled``:
    one contact run, n 1), ``cause`` (fails: a diagnosis class; uncertain: the driving variable; holds: held or shaken
    loose) shared by ``cause_samples`` (None for uncertain)."""

    word: Word
    reason: str
    p: float
    lo: float
    hi: float
    n: int
    k: int
    condition: str | None
    sampled: bool
    cause: str | None = None
    cause_samples: int | None = None

    @classmethod
    def from_dict(cls, d) -> Verdict | None:
        """The verdict of a study row's ``verdict`` object; None where there is none (an older study)."""
        if not isinstance(d, dict) or d.get("verdict") not in {w.value for w in Word}:
            return None
        num = {x: _num(d.get(x)) for x in ("p_lift", "p_lo", "p_hi")}
        return cls(
            Word(d["verdict"]),
            str(d.get("reason") or ""),
            num["p_lift"] or 0.0,
            num["p_lo"] or 0.0,
            num["p_hi"] or 0.0,
            int(d.get("n") or 0),
            int(d.get("k") or 0),
            d.get("condition"),
            bool(d.get("sampled")),
            d.get("cause"),
            d.get("cause_samples") if isinstance(d.get("cause_samples"), int) else None,
        )

    def to_dict(self) -> dict:
        """Keys ``verdict``, ``reason``, ``p_lift``, ``p_lo``, ``p_hi`` (study.csv's first columns) first."""
        keys = {"word": "verdict", "p": "p_lift", "lo": "p_lo", "hi": "p_hi"}
        return {**_renamed(self, keys), "verdict": self.word.value}


@dataclass(frozen=True)
class CrossCheck:
    """Another judgement beside the verdict; ``agrees`` None: no call (e.g. uncertain against a single run)."""

    check: str
    says: str
    agrees: bool | None

    @classmethod
    def from_dict(cls, d) -> CrossCheck | None:
        if not isinstance(d, dict) or not d.get("check"):
            return None
        a = d.get("agrees")
        return cls(str(d["check"]), str(d.get("says") or ""), a if isinstance(a, bool) else None)

    def to_dict(self) -> dict:
        return asdict(self)


def cross_checks(items) -> list[CrossCheck]:
    """The cross-checks of a study row's ``cross_checks`` list ([] for None)."""
    return [c for x in items or [] if (c := CrossCheck.from_dict(x)) is not None]


@dataclass(frozen=True)
class Tally:
    """``{word: (n, {cause: n})}`` in :class:`Word` order (cause None: none given)."""

    by_word: dict

    @classmethod
    def of(cls, verdicts) -> Tally:
        out: dict = {w: (0, {}) for w in Word}
        for v in verdicts:
            n, causes = out[v.word]
            causes[v.cause] = causes.get(v.cause, 0) + 1
            out[v.word] = (n + 1, causes)
        return cls({w: (n, dict(sorted(c.items(), key=lambda kv: -kv[1]))) for w, (n, c) in out.items()})

    @classmethod
    def from_dict(cls, d) -> Tally | None:
        """The tally of a counts' ``verdicts`` object (``{word: {n, causes}}``); None where there is none."""
        if not isinstance(d, dict) or not any(w.value in d for w in Word):
            return None
        out = {}
        for w in Word:
            e = d.get(w.value) if isinstance(d.get(w.value), dict) else {}
            causes = e.get("causes") if isinstance(e.get("causes"), dict) else {}
            out[w] = (int(e.get("n") or 0), {(None if k == "null" else k): int(v) for k, v in causes.items()})
        return cls(out)

    def to_dict(self) -> dict:
        return {
            w.value: {"n": n, "causes": {str(k) if k else "null": v for k, v in c.items()}}
            for w, (n, c) in self.by_word.items()
        }

    @property
    def total(self) -> int:
        return sum(n for n, _ in self.by_word.values())


@dataclass(frozen=True)
class Discrimination:
    """One row of a study's ``discrimination``; ``auc_lo`` / ``auc_hi`` None in an older study."""

    protocol: str
    condition: str
    corruption: str
    p_real: float | None
    p_corrupted: float | None
    auc: float | None
    auc_lo: float | None
    auc_hi: float | None
    ratio: float | None
    n_recordings: int | None
    reference_ratio: float | None
    reference_source: str | None
    interval: str | None = None

    @classmethod
    def from_dict(cls, d) -> Discrimination | None:
        if not isinstance(d, dict) or not d.get("corruption"):
            return None
        ref = d.get("reference") if isinstance(d.get("reference"), dict) else {}
        n = d.get("n_recordings")
        return cls(
            str(d.get("protocol") or "lift"),
            str(d.get("condition")),
            str(d["corruption"]),
            *(_num(d.get(k)) for k in ("p_real", "p_corrupted", "auc", "auc_lo", "auc_hi", "ratio")),
            int(n) if isinstance(n, int) else None,
            _num(ref.get("ratio")),
            None if ref.get("source") is None else str(ref.get("source")),
            d.get("auc_interval"),
        )


def discriminations(items) -> list[Discrimination]:
    """The rows of a study's ``discrimination`` list ([] for None)."""
    return [x for d in items or [] if (x := Discrimination.from_dict(d)) is not None]


@dataclass(frozen=True)
class Diagnosis:
    """A rollout's ``diagnosis`` (:mod:`replay.protocol.diagnosis`): its class and its figure."""

    cls: str | None
    figure: dict

    @classmethod
    def of(cls, d) -> Diagnosis:
        d = d if isinstance(d, dict) else {}
        fig = d.get("figure")
        return cls(d.get("class"), fig if isinstance(fig, dict) else {})
