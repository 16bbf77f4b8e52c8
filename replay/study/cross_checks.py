"""Cross-checks of a recording's verdict: every other judgement a study holds of it, as agree, disagree or no call
(None: either is uncertain); never a second verdict (docs/results.md)."""

from __future__ import annotations

from pathlib import Path

from replay.protocol.intent_counts import intent_group
from replay.protocol.p_lift_stats import verdict_class
from replay.protocol.protocols.base import all_protocols, is_known, primary_protocol, protocol_named
from replay.protocol.verdict import SHAKEN_LOOSE, WORD_OF_CLASS, judged_condition, verdict_of, words
from replay.results.convert import ResultsFormatError
from replay.results.files import read_rollout
from replay.results.judge import DEFAULT_JUDGE
from replay.results.outcomes import words as outcome_words
from replay.results.study_rows import StudyRow, study_rows
from replay.results.study_settings import ConfigNames
from replay.results.verdict_record import CrossCheck, Tally, Verdict, Word
from replay.study.verdicts import VerdictPair, lead_protocol

#: the checks that are not a condition or a pair
CONTACT_RUN, ABLATION = "contact run", "contact ablation"


def agreement(verdict: Word, other: Word) -> bool | None:
    """Whether ``other`` agrees with ``verdict``: None where either is uncertain."""
    return None if Word.UNCERTAIN in (verdict, other) else verdict is other


def _run_word(row: StudyRow) -> Word:
    return Word.HOLDS if row.lifted else Word.FAILS


def run_video(row: StudyRow) -> tuple[bool, str]:
    """(whether the contact run ended with the object in the hand, the same in words)."""
    said = str(outcome_words(row.outcome) or "-")
    if row.lifted and row.shake_held is False:
        return False, f"{said}, then {words(SHAKEN_LOOSE)}"
    return bool(row.lifted), said


def video_disagreement(row: StudyRow) -> str | None:
    """``the contact run, not lifted``: what a sampled verdict's contact run shows where it disagrees with the
    verdict; None where it agrees, is uncertain or is not sampled."""
    v: Verdict | None = row.verdict
    if v is None or not v.sampled:
        return None
    held, says = run_video(row)
    against = (v.word is Word.HOLDS and not held) or (v.word is Word.FAILS and bool(row.lifted))
    return f"the contact run, {says}" if against else None


def _run_says(row: StudyRow) -> str:
    said = str(outcome_words(row.outcome) or "-")
    return f"{said} ({words(row.diagnosis)})" if row.diagnosis else said


def recording_checks(row: StudyRow, pairs: dict[str, dict[str, StudyRow]]) -> list[CrossCheck]:
    """The cross-checks of one lead row with a verdict; ``pairs``: ``{pair name: {sequence: row}}``."""
    v: Verdict = row.verdict
    out = []
    if v.sampled:
        out.append(CrossCheck(CONTACT_RUN, _run_says(row), agreement(v.word, _run_word(row))))
    for cond, e in row.p_lift.items():
        if cond != v.condition:
            w = WORD_OF_CLASS[verdict_class(e.lo, e.hi)]
            out.append(CrossCheck(f"condition {cond}", f"{w.value}, p_lift {e.p:.2f}", agreement(v.word, w)))
    for name, by_seq in pairs.items():
        other = by_seq.get(row.name)
        if other is None:
            continue
        if other.verdict is not None and other.verdict.sampled:
            w, says = other.verdict.word, f"{other.verdict.word.value}, p_lift {other.verdict.p:.2f}"
        else:
            w, says = _run_word(other), f"one run: {_run_says(other)}"
        out.append(CrossCheck(name, says, agreement(v.word, w)))
    if row.ablation_no_rise is not None:
        says = "stayed down" if row.ablation_no_rise else "rose without contact"
        out.append(CrossCheck(ABLATION, says, bool(row.ablation_no_rise)))
    return out


def other_pairs(study) -> dict[str, dict[str, StudyRow]]:
    """``{pair name: {sequence: row}}`` of every judgement pair of ``study`` but the lead protocol's own."""
    lead = lead_protocol(study.protocols)
    phys = ConfigNames.from_dict(study.config).physics
    pairs = VerdictPair.read(study.verdicts) or [
        VerdictPair(p, str(phys), True)
        for p in study.protocols or [primary_protocol().name]
        if is_known(p) and protocol_named(p).judged_on_lift
    ]
    out = {}
    for p in pairs:
        if p.main and (not is_known(p.protocol) or protocol_named(p.protocol) is lead):
            continue
        rows = (
            study.rows_of(protocol_named(p.protocol).rows_field)
            if p.main
            else (study.verdict_rollouts or {}).get(p.name)
        )
        out[p.name] = {r.name: r for r in study_rows(rows)}
    return out


def add_cross_checks(study) -> None:
    """Put each lead row's ``cross_checks`` and the counts' into ``study``, in place (none without a verdict)."""
    lead = lead_protocol(study.protocols)
    raw = study.rows_of(lead.rows_field)
    rows = study_rows(raw)
    if not any(r.verdict for r in rows):
        return
    pairs = other_pairs(study)
    tallies: dict[str, dict[str, list[int]]] = {}
    for d, r in zip(raw, rows):
        if r.verdict is None:
            continue
        checks = recording_checks(r, pairs)
        d["cross_checks"] = [c.to_dict() for c in checks]
        group = tallies.setdefault(intent_group(r.intent), {})
        for c in checks:
            t = group.setdefault(c.check, [0, 0, 0])
            t[0 if c.agrees else (2 if c.agrees is None else 1)] += 1
    study.counts["cross_checks"] = {
        g: [{"check": k, "agree": a, "disagree": b, "no_call": n, "of": a + b + n} for k, (a, b, n) in t.items()]
        for g, t in tallies.items()
    }


def study_judge(cfg, names: list[str]) -> dict:
    """The study's ``judge``; ``names``: the sampling's conditions ([]: single rollouts)."""
    return {"physics": cfg.physics, "condition": judged_condition(names), "default": DEFAULT_JUDGE.to_dict()}


def recompute_verdicts(study, sdir: Path) -> None:
    """Give an older study's rows (no ``verdict``) the verdicts of their rollout records (none where unreadable),
    the counts' ``verdicts`` and the cross-checks, in place."""
    for p in all_protocols():
        if not p.judged_on_lift:
            continue
        got = []
        for d in study.rows_of(p.rows_field):
            try:
                rec = read_rollout(sdir / str(StudyRow.from_dict(d).json))
            except ResultsFormatError:
                continue
            v = verdict_of(rec)
            d["verdict"] = v.to_dict()
            got.append((intent_group(rec.intent), v))
        if got:
            tally = {g: Tally.of(v for gg, v in got if gg == g).to_dict() for g in dict.fromkeys(g for g, _ in got)}
            study.counts.setdefault(p.name, {})["verdicts"] = tally
            if p is lead_protocol(study.protocols):
                study.counts["verdicts"] = tally
    add_cross_checks(study)
