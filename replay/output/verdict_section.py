"""What the report says first: each recording's verdict, and every other judgement as a cross-check that agrees or not,
never a second verdict."""

from __future__ import annotations

import html
from collections import Counter

from replay.output.p_lift_section import WORD_CSS
from replay.protocol.intent_counts import group_words
from replay.protocol.verdict import interval_text, judged_condition, no_shake, words
from replay.results.judge import DEFAULT_JUDGE
from replay.results.records import RolloutRecord
from replay.results.study_counts import Counts
from replay.results.study_rows import StudyRow
from replay.results.study_settings import judged_physics
from replay.results.verdict_record import Word
from replay.study.cross_checks import ABLATION, CONTACT_RUN
from replay.study.end_table import judge_text
from replay.study.verdicts import DEFAULT_VERDICTS, VerdictPair


def verdict_summary_html(study, c: Counts) -> str:
    """The verdicts counted per intent group with their shared reasons, and what they were read under; ``""`` without
    verdicts."""
    if not c.verdicts:
        return ""
    head = "".join(f"<th colspan=2>{html.escape(group_words(g, t.total))}</th>" for g, t in c.verdicts.items())
    body = []
    for w in Word:
        cells = []
        for t in c.verdicts.values():
            n, causes = t.by_word[w]
            why = ", ".join(f"{html.escape(words(k) if k else 'reason not kept')} {m}" for k, m in causes.items())
            cells.append(f"<td>{n}</td><td>{why or '-'}</td>")
        body.append(f"<tr><td style='color:{WORD_CSS[w]}'><b>{w.value}</b></td>{''.join(cells)}</tr>")
    other = (  # where the default judge comes from, and how to read a recording under another
        f"The default judge ({DEFAULT_JUDGE.physics} physics, condition {DEFAULT_JUDGE.condition}): "
        f"{DEFAULT_JUDGE.source}. Another physics: a study of its own, run_study.py --physics NAME (authored, replay, "
        "calibrated); another condition: --conditions NAME,... (the first listed is read where the default's is "
        "not among them)."
    )
    return (
        f"<p id=judge>Each recording's verdict, read under {html.escape(judge_text(study))}: holds where the 95 % "
        "interval of p_lift lies at or above 0.5, fails where at or below, uncertain otherwise; why: for fails the "
        "diagnosis most failing samples share, for uncertain the sampled variable it depends on most, for holds "
        "whether the lifted samples also held through the shake and fell when let go (where the protocol shakes: "
        "the hug-oracle lifts and holds, no shake, no release).</p>"
        f"<table id=verdict-counts><thead><tr><th>verdict</th>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
        f"</table><p class=note>{html.escape(other)}</p>"
    )


def missing_pairs_text(study) -> str:
    """The :data:`replay.study.verdicts.DEFAULT_VERDICTS` pairs the study lacks and the command adding them; ``""``:
    none."""
    have = [v.name for v in VerdictPair.read(study.verdicts)] or [
        f"{p}@{judged_physics(study) or DEFAULT_JUDGE.physics}" for p in study.protocols
    ]
    lack = [n for n in DEFAULT_VERDICTS if n not in have]
    if not lack:
        return ""
    return (
        f"Not in this study: {', '.join(lack)}. Add {'it' if len(lack) == 1 else 'them'}: the study's own command "
        f"(scripts/run_study.py --dataset {study.dataset} ..., the same flags) with --verdicts "
        f"{','.join(have + lack)} --resume: the rollouts it holds are kept, each new pair is one single rollout per "
        "recording."
    )


def cross_check_summary_html(c: Counts, study=None) -> str:
    """The cross-checks table per group and check (agree, disagree, no call); ``""`` without cross-checks."""
    body = [
        f"<tr><td>{html.escape(group_words(g, x.of))}</td><td>{html.escape(x.check)}</td><td>{x.agree}</td>"
        f"<td>{x.disagree}</td><td>{x.no_call}</td><td>{x.of}</td></tr>"
        for g, checks in c.cross_checks.items()
        for x in checks
    ]
    if not body:
        return ""
    return (
        "<h2>Cross-checks</h2><p>Every other judgement the study holds of a recording, set beside its verdict: the "
        f"{CONTACT_RUN} (one run at the study's physics), the other conditions, the other protocols and physics "
        f"(--verdicts), the {ABLATION} (agrees where nothing rose without contact). No call: the verdict or the "
        "check is uncertain.</p><table id=cross-checks><thead><tr><th>recordings</th><th>check</th><th>agrees</th>"
        f"<th>disagrees</th><th>no call</th><th>of</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
        + (
            f"<p id=pairs-absent>{html.escape(miss)}</p>"
            if (miss := missing_pairs_text(study) if study else "")
            else ""
        )
    )


def recording_verdict_html(row: StudyRow, study) -> str:
    """A recording page's headline: its verdict, reason, p_lift [95 %] and what it was read under."""
    v = row.verdict
    if v is None:
        return "<p id=verdict>No verdict in this study (a study before issue 56: rerun it).</p>"
    one = "" if v.sampled else " (one run)"
    return (
        f"<p id=verdict style='font-size:1.3em'><b style='color:{WORD_CSS[v.word]}'>{v.word.value}{one}</b>: "
        f"{html.escape(v.reason)}; p_lift "
        f"{html.escape(interval_text(v))} ({v.k} of {v.n} {'samples' if v.sampled else 'run'} lifted)</p>"
        f"<p>Read under {html.escape(judge_text(study))}.</p>"
    )


def recording_checks_html(row: StudyRow) -> str:
    """A recording's cross-checks; ``""`` without any."""
    if not row.cross_checks:
        return ""
    said = {True: ("agrees", "#222"), False: ("disagrees", "#d2473a"), None: ("no call", "#888")}
    body = "".join(
        f"<tr><td>{html.escape(x.check)}</td><td>{html.escape(x.says)}</td>"
        f"<td style='color:{said[x.agrees][1]}'>{said[x.agrees][0]}</td></tr>"
        for x in row.cross_checks
    )
    return (
        "<h2>Cross-checks</h2><table id=recording-checks><thead><tr><th>check</th><th>says</th><th>with the verdict"
        f"</th></tr></thead><tbody>{body}</tbody></table>"
    )


def samples_html(rec: RolloutRecord | None, condition: str | None) -> str:
    """What the verdict's samples did, with how many; ``""`` without per-sample diagnoses."""
    if not isinstance(rec, RolloutRecord):
        return ""
    cond = condition or judged_condition(rec.sampled.entries())
    lifted = rec.sampled.per_sample("lifted", cond) if cond else None
    diag = rec.sampled.per_sample("diagnoses", cond) if cond else None
    if not lifted or not diag or len(lifted) != len(diag):
        return ""
    held = "lifted" if no_shake(rec) else "lifted, held through the shake and let go"
    what = Counter(
        (held if d is None else f"lifted, {words(d)}") if x else words(d or "not lifted") for x, d in zip(lifted, diag)
    )
    items = "".join(f"<li>{html.escape(k)}: {n} of {len(lifted)}</li>" for k, n in what.most_common())
    return f"<h3>The samples under {html.escape(cond)}</h3><ul id=samples>{items}</ul>"
