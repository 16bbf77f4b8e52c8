"""A recording's verdict, ``holds``, ``fails`` or ``uncertain``, with its reason and p_lift interval (docs/results.md):
95 % Wilson interval of the sampled ``p_lift`` under the judge's condition at or above 0.5 holds, at or below fails; a
study of single rollouts gives the one run's verdict."""

from __future__ import annotations

from collections import Counter

from replay.protocol.p_lift_stats import CLASSES, verdict_class, wilson
from replay.results.judge import DEFAULT_JUDGE
from replay.results.verdict_record import PLiftEntry, Tally, Verdict, Word

#: the verdict of each p_lift class (:data:`replay.protocol.p_lift_stats.CLASSES`, same order)
WORD_OF_CLASS = dict(zip(CLASSES, (Word.HOLDS, Word.UNCERTAIN, Word.FAILS)))
#: what ``cause`` holds for a lifted sample that held through the shake and fell when let go, and one shaken loose
HELD, SHAKEN_LOOSE = "held", "shaken_loose"


#: a cause as a reader is told it, where its name is not the words (:func:`words`)
CAUSE_WORDS = {HELD: "held through the shake and let go"}


#: the cause of a lift that held where no shake followed (the hug-oracle's protocol neither shakes nor releases)
LIFTED = "lifted"


def no_shake(rec) -> bool:
    """No shake followed the lift (protocol or run): a lift that held is then only lifted."""
    from replay.protocol.protocols.base import is_known, protocol_named  # the protocols import this module

    proto = protocol_named(rec.protocol) if rec.protocol and is_known(rec.protocol) else None
    if proto is not None and proto.judged_on_lift and not proto.shakes:
        return True
    return bool(rec.lifted) and not rec.lift.shake_ran


def words(name: str | None) -> str:
    """A cause, class or variable name as a reader is told it (``never_gripped`` -> ``never gripped``)."""
    return "-" if name is None else CAUSE_WORDS.get(name, str(name).replace("_", " "))


def judged_condition(conditions, judge=DEFAULT_JUDGE) -> str | None:
    """The condition a verdict is read under: the judge's where ``conditions`` hold it, else the first (None: none)."""
    conditions = list(conditions)
    return judge.condition if judge.condition in conditions else (conditions[0] if conditions else None)


def verdict_of(rec, judge=DEFAULT_JUDGE) -> Verdict:
    """The verdict of one ``RolloutRecord``: its sampled ``p_lift`` under :func:`judged_condition`, else its run."""
    entries = rec.sampled.entries()
    cond = judged_condition(entries, judge)
    if cond is None:
        return _one_run(rec)
    e = entries[cond]
    word = WORD_OF_CLASS[verdict_class(e.lo, e.hi)]
    lifted = rec.sampled.per_sample("lifted", cond)
    diag = rec.sampled.per_sample("diagnoses", cond)
    if lifted is None or diag is None or len(lifted) != len(diag):
        lifted = diag = None
    if word is Word.FAILS:
        reason, cause, m = _fails(e, lifted, diag)
    elif word is Word.UNCERTAIN:
        (reason, cause), m = _uncertain(e), None
    elif no_shake(rec):
        reason, cause, m = f"lifted in {e.k} of {e.n} samples", LIFTED, e.k
    else:
        reason, cause, m = _holds(e, lifted, diag)
    return Verdict(word, reason, e.p, e.lo, e.hi, e.n, e.k, cond, True, cause, m)


def _fails(e: PLiftEntry, lifted, diag) -> tuple[str, str | None, int | None]:
    """The diagnosis most failing samples share: ``never gripped, 27 of 32 samples``; the cause and its samples."""
    if diag is None:
        return (
            f"lifted in {e.k} of {e.n} samples (the samples' diagnoses not kept: a study before issue 56)",
            None,
            None,
        )
    fails = Counter(d for x, d in zip(lifted, diag) if not x)
    if not fails:
        return f"lifted in {e.k} of {e.n} samples", None, None
    cause, m = fails.most_common(1)[0]
    return f"{words(cause or 'not lifted')}, {m} of {e.n} samples", cause, m


def _uncertain(e: PLiftEntry) -> tuple[str, str | None]:
    """The sampled variable it depends on most and which way, with the lift rates of its halves."""
    d = e.driver
    if d is None or d.low is None or d.high is None:
        return f"lifted in {e.k} of {e.n} samples, no sampled variable explains which", None
    (way, rate), (other, rest) = sorted((("higher", d.high), ("lower", d.low)), key=lambda x: -x[1])
    return (
        f"depends on {words(d.variable)}: lifted {rate:.0%} of samples where it is {way}, {rest:.0%} where {other}",
        (d.variable),
    )


def _holds(e: PLiftEntry, lifted, diag) -> tuple[str, str | None, int | None]:
    """How many lifted samples also held through the shake (and fell when let go); the cause and its samples."""
    if diag is None:
        return f"lifted in {e.k} of {e.n} samples", None, None
    got = [d for x, d in zip(lifted, diag) if x]
    held = sum(d is None for d in got)
    if held == len(got):
        return f"lifted in {e.k} of {e.n} samples, each held through the shake and let go", HELD, held
    if 2 * held >= len(got):
        return f"lifted in {e.k} of {e.n} samples, {held} of them held through the shake and let go", HELD, held
    return f"lifted in {e.k} of {e.n} samples, {len(got) - held} of them shaken loose", SHAKEN_LOOSE, len(got) - held


def _one_run(rec) -> Verdict:
    k = int(bool(rec.lifted))
    lo, hi = wilson(k, 1)
    cause = (rec.diagnosis or {}).get("class")
    if k and no_shake(rec):
        reason, word, cause = "lifted", Word.HOLDS, LIFTED
    elif k:
        held = rec.diagnosis is None
        reason = "lifted, held through the shake and let go" if held else f"lifted, then {words(cause)}"
        word, cause = Word.HOLDS, HELD if held else cause
    else:
        reason, word = words(cause or rec.outcome), Word.FAILS
    return Verdict(word, f"one run, not sampled: {reason}", float(k), lo, hi, 1, k, None, False, cause, 1)


def interval_text(v: Verdict | PLiftEntry) -> str:
    """``0.03 [0.01, 0.16]``: p_lift and its 95 % interval (a verdict's, or one condition's entry)."""
    return f"{v.p:.2f} [{v.lo:.2f}, {v.hi:.2f}]"


def tally_text(t: Tally) -> str:
    """``holds 3: held through the shake and let go 3; uncertain 1: friction 1; fails 26: never gripped 13, ...``."""
    parts = []
    for w, (n, causes) in t.by_word.items():
        why = ", ".join(f"{words(k) if k else 'reason not kept'} {m}" for k, m in causes.items())
        parts.append(f"{w.value} {n}" + (f": {why}" if n else ""))
    return "; ".join(parts)


def tile_text(v: Verdict) -> str:
    """A montage tile's short verdict: ``fails: never gripped 27/32``, ``uncertain: friction, p_lift 0.41``,
    ``holds: held through the shake 30/32``, ``holds (one run): held through the shake``."""
    if not v.sampled:
        return f"{v.word.value} (one run): {words(v.cause) if v.cause else v.reason.rsplit(': ', 1)[-1]}"
    if v.word is Word.UNCERTAIN:
        return f"uncertain: {words(v.cause) if v.cause else 'no variable explains it'}, p_lift {v.p:.2f}"
    what = {HELD: "held through the shake", SHAKEN_LOOSE: "shaken loose"}.get(v.cause, words(v.cause))
    if not v.cause:
        return f"{v.word.value}: p_lift {v.p:.2f}"
    return f"{v.word.value}: {what}" + ("" if v.cause_samples is None else f" {v.cause_samples}/{v.n}")
