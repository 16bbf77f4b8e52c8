"""What ``run_study.py`` prints when a study ends: a row per recording led by its verdict, the counts, the
cross-checks, the discrimination, the other protocols, and each failed recording once."""

from __future__ import annotations

from replay.checks.causes import cause_counts_text
from replay.checks.intent import INTENT_LIFT
from replay.protocol.intent_counts import LIFTS, group_words, intent_groups
from replay.protocol.p_lift_stats import verdict_class
from replay.protocol.protocols.base import ResultKey, all_protocols, is_known, primary_protocol, protocol_named
from replay.protocol.verdict import WORD_OF_CLASS, interval_text, tally_text, words
from replay.results.outcomes import words as outcome_words
from replay.results.records import StudyRecord
from replay.results.study_counts import Counts, GroupCount
from replay.results.study_rows import StudyRow, study_rows
from replay.results.study_settings import Sampling, StudyJudge, judged_physics
from replay.results.verdict_record import Word, discriminations
from replay.study.discrimination import auc_text
from replay.study.verdicts import VerdictPair, lead_protocol

#: longest reason a row of the table shows (the whole reason: study.csv, the report)
REASON_CHARS = 70


def as_record(study) -> StudyRecord:
    """A study dict or record as a record."""
    return study if isinstance(study, StudyRecord) else StudyRecord.view(dict(study or {}))


def _text_table(head: list[str], rows: list[list[str]]) -> list[str]:
    w = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * x for x in w))
    return lines


def _run_text(r: StudyRow) -> str:
    said = str(outcome_words(r.outcome) or "-")
    return f"{said} ({words(r.diagnosis)})" if r.diagnosis else said


def _groups(c: Counts) -> dict[str, GroupCount]:
    """``c``'s counts per intent group (:func:`replay.protocol.intent_counts.intent_groups`)."""
    return {k: GroupCount.of(v) for k, v in intent_groups(c.by_intent or {}).items()}


def _cut(text: str, n: int = REASON_CHARS) -> str:
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


def verdict_table(rows: list[StudyRow]) -> list[str]:
    """The recordings, each led by its verdict, p_lift [95 %] and reason, then its contact run and ablation."""
    head = ["recording", "intent", "verdict", "p_lift [95 %]", "reason", "contact run", "ablation"]
    body = []
    for r in rows:
        v = r.verdict
        abl = {True: "stayed down", False: "rose"}.get(r.ablation_no_rise, "-")
        cells = [v.word.value, interval_text(v), _cut(v.reason)] if v is not None else ["-", "-", "-"]
        body.append([r.name, str(r.intent or "-"), *cells, _run_text(r), abl])
    return _text_table(head, body)


def judge_text(study: StudyRecord) -> str:
    """``physics replay, condition as_replayed, 32 samples each (the default judge)`` or ``one run each``."""
    j = StudyJudge.from_dict(study.judge)
    phys, cond = judged_physics(study), j.condition
    n = Sampling.from_dict(study.sampling).samples
    how = f"condition {cond}, {n} samples each" if cond else "one run each (not sampled: --samples N for p_lift)"
    ran = [protocol_named(p) for p in study.protocols or [] if is_known(p)]
    other = None if not ran or any(p.primary for p in ran) else ran[0]
    dflt = other is None and phys == j.default.physics and (cond is None or cond == j.default.condition)
    head = f"protocol {other.name}, " if other is not None else ""
    return f"{head}physics {phys}, {how}" + (" (the default judge)" if dflt else " (not the default judge)")


def verdict_lines(study: StudyRecord, c: Counts) -> list[str]:
    """One line per intent group: how many recordings each verdict, and why (the lifts first)."""
    out = []
    groups = intent_groups(c.by_intent or {})
    for g, t in c.verdicts.items():
        n = GroupCount.of(groups.get(g)).rollouts or t.total
        apart = "" if g == LIFTS else " (not a lift: the protocol replaced the motion after the grasp)"
        out.append(f"verdict of the {group_words(g, n)}{apart}, {judge_text(study)}: {tally_text(t)}")
    return out


def cross_check_lines(c: Counts) -> list[str]:
    """The cross-checks of each group in one line: agree / disagree / no call per check."""
    out = []
    for g, checks in c.cross_checks.items():
        if checks:
            n = max(x.of for x in checks)
            each = ", ".join(f"{x.check} {x.agree}/{x.disagree}/{x.no_call}" for x in checks)
            out.append(f"cross-checks of the {group_words(g, n)} (agree / disagree / no call with the verdict): {each}")
    return out


def contact_run_lines(c: Counts, held: bool = True) -> list[str]:
    """The contact run's counts per group: the diagnosis, the wrist, the ablation."""
    out = []
    for k, g in _groups(c).items():
        shake = f" (held through the shake {g.shake_held})" if held else ""
        out.append(
            f"contact run, {group_words(k, g.rollouts)}: lifted {g.lifted} of {g.rollouts}{shake}, not lifted "
            f"{g.not_lifted}, unstable {g.unstable}"
        )
    if not out:
        out.append(f"contact run, {c.rollouts or 0} recordings: lifted {c.lifted or 0}")
    diag = ", ".join(f"{words(k)} {v}" for k, v in (c.diagnosis or {}).items() if v)
    if diag:
        out.append(f"contact run's diagnosis (all {c.rollouts or 0}): {diag}")
    if c.median_wrist_err_mm is not None:
        out.append(wrist_line(c))
    if c.ablation_run:
        out.append(
            f"contact ablation: {c.ablation_clean or 0} of {c.ablation_run} clean, {c.ablation_lifted or 0} lifted "
            "without contact"
        )
    return out


def wrist_line(c: Counts) -> str:
    """The study's wrist tracking error, mm: the median of medians, the median and largest peak (lift and hold)."""

    def f(x):
        return "-" if x is None else f"{x:.1f}"

    return (
        f"wrist tracking error: median {f(c.median_wrist_err_mm)} mm (median of the recordings' medians); "
        f"peak over the lift and hold: median {f(c.median_wrist_err_peak_mm)} mm, largest "
        f"{f(c.max_wrist_err_peak_mm)} mm"
    )


def condition_lines(study: StudyRecord, rows: list[StudyRow], lead: str) -> list[str]:
    """Per condition of the lift recordings, how many hold / are uncertain / fail (the verdict's condition named)."""
    conds = list(dict.fromkeys(k for r in rows for k in r.p_lift))
    if len(conds) < 2:
        return []
    lifts = [r for r in rows if r.intent in (None, INTENT_LIFT)]
    cond = StudyJudge.from_dict(study.judge).condition
    parts = []
    for k in conds:
        got = [WORD_OF_CLASS[verdict_class(r.p_lift[k].lo, r.p_lift[k].hi)] for r in lifts if k in r.p_lift]
        mark = " (the verdict's)" if k == cond else ""
        parts.append(f"{k}{mark} {'/'.join(str(got.count(w)) for w in Word)}")
    return [f"per condition, {lead} protocol, lifts (holds/uncertain/fails): {', '.join(parts)}"]


def discrimination_lines(study: StudyRecord) -> list[str]:
    """The discrimination table: per condition and corruption p_lift real -> corrupted, the AUC, the ratio."""
    rows = discriminations(study.discrimination)
    if not rows:
        return []
    out = [
        "discrimination, real vs corrupted recordings: p = mean p_lift real -> corrupted; AUC = how well p_lift "
        "separates them (0.5 chance, 1 perfect), its 95 % interval over recordings; ratio = success corrupted / "
        "real (HUG: the HUG paper's ratio for the same corruption)"
    ]
    for d in rows:
        ratio = "n/a" if d.ratio is None else f"{d.ratio:.2f}"
        ref = f" (HUG: {d.reference_ratio:g})" if d.reference_ratio is not None else ""
        pr = "-" if d.p_real is None else f"{d.p_real:.2f}"
        pc = "-" if d.p_corrupted is None else f"{d.p_corrupted:.2f}"
        out.append(f"  {d.protocol} {d.condition} vs {d.corruption}: p {pr} -> {pc}, {auc_text(d)}, ratio {ratio}{ref}")
    return out


def wall_line(c: Counts) -> str:
    """The study's wall time, s: this run's, an ``--ablation-only`` rerun's, or with the resumed runs'."""
    this = c.wall_s if c.wall_s_this_run is None else c.wall_s_this_run
    if c.ablation_only_keys is not None:
        return (
            f"wall time {this:.1f} s (--ablation-only: the contact ablation of {len(c.ablation_only_keys)} "
            f"recording(s) rerun; the study's rollouts took {c.wall_s:.1f} s in all)"
        )
    if (c.resumed_wall_s or 0.0) > 0.0:
        kept = f"{c.wall_s:.1f} s with the earlier run(s) whose {c.resumed or 0} rollout(s) it kept"
        return f"wall time {this:.1f} s ({kept})"
    return f"wall time {this:.1f} s"


def oracle_lines(study: StudyRecord, oc: Counts) -> list[str]:
    """The hug-oracle protocol's counts where it is one of the study's own protocols."""
    groups = [f"{group_words(k, g.rollouts)}: lifted {g.lifted} of {g.rollouts}" for k, g in _groups(oc).items()] or [
        f"{oc.rollouts or 0} recordings: lifted {oc.lifted or 0}"
    ]
    out = [f"hug-oracle protocol, lifted (off the table), {g}" for g in groups]
    diag = ", ".join(f"{k} {v}" for k, v in (oc.diagnosis or {}).items() if v) or "none"
    out.append(
        f"hug-oracle protocol: contact ablation rose {(oc.ablation_run or 0) - (oc.ablation_no_rise or 0)}/"
        f"{oc.ablation_run or 0}; diagnosis (all {oc.rollouts or 0}): {diag}"
    )
    for r in study_rows(study.oracle_rollouts):
        rise = f", end rise {1000.0 * r.rise:.1f} mm" if isinstance(r.rise, (int, float)) else ""
        ab = {True: ", ablation stayed down", False: ", ablation rose"}.get(r.ablation_no_rise, "")
        out.append(f"  {r.name}: {_run_text(r)}{rise}{ab}")
    return out


def recorded_line(rc: Counts) -> str:
    """The recorded protocol's counts."""
    per = _groups(rc)
    split = f" ({', '.join(group_words(k, g.rollouts) for k, g in per.items())})" if len(per) > 1 else ""
    return (
        f"recorded protocol: {rc.rollouts or 0} recordings{split}: tracked {rc.tracked or 0}, lost {rc.lost or 0}, "
        f"unstable {rc.unstable or 0} (per recording below: within 2 cm / 30 deg, errors over the frames simulated, "
        "when lost)"
    )


def end_lines(study) -> list[str]:
    """Every line of the study's end (module doc), for stdout."""
    study = as_record(study)
    c = Counts.from_dict(study.counts)
    lead = lead_protocol(study.protocols)
    rows = study_rows(study.rows_of(lead.rows_field))
    rerun = c.ablation_only_keys
    if rerun is not None:  # --ablation-only: the rows it reran, their ablation, its time
        shown = [r for r in rows if r.name in set(rerun)]
        clean = sum(bool(r.ablation_clean) for r in shown)
        return [
            *verdict_table(shown),
            "",
            f"contact ablation rerun: {clean} of {len(shown)} clean, "
            f"{sum(bool(r.ablation_lifted) for r in shown)} lifted without contact",
            wall_line(c),
        ]
    lc = c.of(lead.name) or c
    lines = [*verdict_table(rows), ""] if rows or lead.judged_on_lift else []
    if lead.judged_on_lift:
        lines += verdict_lines(study, lc) + cross_check_lines(c) + contact_run_lines(lc, held=lead.shakes)
        lines += condition_lines(study, rows, lead.name)
    lines += discrimination_lines(study)
    for p in all_protocols():  # the study's other own protocols, each apart
        pc = c.of(p.name)
        if pc is None or p is lead or p.name not in (study.protocols or []):
            continue
        if p.judged_on_lift:
            lines += oracle_lines(study, pc)
        elif pc.tracked is not None:
            lines.append(recorded_line(pc))
    lines += pair_lines(study, c)
    if c.refused:
        lines.append(f"refused: {c.refused} recording(s) (bad input; listed below with the reasons)")
    failed = len(failure_lines(study)) - (c.refused or 0)
    if failed > 0:
        lines.append(f"failed: {failed} (listed below)")
    if (per_cause := cause_counts_text(c.causes)) is not None:
        lines.append(f"input causes: {per_cause}")
    if c.wall_s is not None:
        lines.append(wall_line(c))
    return lines


def pair_lines(study: StudyRecord, c: Counts) -> list[str]:
    """One line per extra (protocol, physics) pair: lifted per group, its ablation."""
    out = []
    for v in VerdictPair.read(study.verdicts):
        pc = c.of(v.name)
        if v.main or pc is None:
            continue
        groups = _groups(pc)
        lifts = groups.get(LIFTS)
        parts = [f"lifted {lifts.lifted}/{lifts.rollouts} lifts"] if lifts else []
        parts += [f"{group_words(g, n.rollouts)}: lifted {n.lifted}" for g, n in groups.items() if g != LIFTS]
        out.append(
            f"cross-check {v.name} (one run each): {'; '.join(parts) or 'no recording'}; contact ablation clean "
            f"{pc.ablation_clean or 0}/{pc.ablation_run or 0}"
        )
    return out


def failure_lines(study) -> list[str]:
    """Each refused or failed recording once, with its first reason's first line."""
    study = as_record(study)
    refused = set(Counts.from_dict(study.counts).refused_keys or [])
    seqs = list(study.sequences or [])
    out, seen = [], set()
    for text, why in (study.failed or {}).items():
        key = ResultKey.parse(text, seqs)
        if key.sequence in seen:
            continue
        seen.add(key.sequence)
        first, *trace = str(why).splitlines()
        what = "refused" if text in refused else "failed"
        out.append(f"{what}: {key.sequence}: {first}" + (" (traceback in the study's records.jsonl)" if trace else ""))
    return out


def input_flag_lines(rows: list[StudyRow]) -> list[str]:
    """The rows' ``input_flags``, one line per flag: the recordings that carry it and what it says."""
    by_flag: dict[str, list[tuple[str, str]]] = {}
    for r in rows:
        for k, v in (r.input_flags or {}).items():
            by_flag.setdefault(k, []).append((r.name, str(v)))
    lines = []
    for k, hits in by_flag.items():
        why = {v.split(": ", 1)[-1] for _, v in hits}  # "drink: the recorded motion ...": the part after its name
        if len(why) == 1 and all(": " in v for _, v in hits):
            names = ", ".join(f"{s} ({v.split(': ', 1)[0]})" for s, v in hits)
            lines.append(f"input flags: {k} on {len(hits)} recording(s): {names}: {why.pop()}")
        else:
            lines.append(f"input flags: {k} on {len(hits)} recording(s): " + "; ".join(f"{s}: {v}" for s, v in hits))
    return lines


def primary_rows(study) -> list[StudyRow]:
    """The typed rows of the primary protocol (``rollouts``)."""
    return study_rows(as_record(study).rows_of(primary_protocol().rows_field))
