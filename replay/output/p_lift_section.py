"""The report's evidence of the sampled verdict (``--samples N``): ``p_lift`` per recording and condition with its 95 %
interval, and the discrimination of real from corrupted recordings; ``""`` for a study without them."""

from __future__ import annotations

import html

from replay.checks.intent import INTENT_LIFT
from replay.output.p_lift_table import num
from replay.protocol.p_lift_stats import verdict_class
from replay.protocol.verdict import WORD_OF_CLASS, words
from replay.results.study_rows import StudyRow
from replay.results.study_settings import Sampling
from replay.results.verdict_record import PLiftEntry, Word, discriminations
from replay.study.discrimination import INTERVAL_METHOD, MIN_RECORDINGS, auc_text

#: each verdict's colour (the outcome colours of the table: lifted green, not lifted red; uncertain amber)
WORD_CSS = {Word.HOLDS: "#2e9e4f", Word.UNCERTAIN: "#e29a12", Word.FAILS: "#d2473a"}

_W, _ROW, _X0, _X1 = 470, 18, 150, 340  # chart width px, row height, the 0-1 axis from _X0 to _X1


def entry_word(e: PLiftEntry) -> Word:
    """What a p_lift entry says (its interval against 0.5)."""
    return WORD_OF_CLASS[verdict_class(e.lo, e.hi)]


def conditions_of(rows: list[StudyRow], study=None) -> list[str]:
    """The conditions in order: the study's ``sampling.conditions`` first, then any other a row has."""
    names = Sampling.from_dict(None if study is None else study.sampling).condition_names()
    for r in rows:
        names += [c for c in r.p_lift if c not in names]
    return names


def class_word(e: PLiftEntry | None) -> str:
    return "-" if e is None else entry_word(e).value


def entry_text(e: PLiftEntry) -> str:
    """``0.41 [0.26, 0.57] (13/32)``: p, its 95 % interval, lifted of sampled."""
    return f"{e.p:.2f} [{e.lo:.2f}, {e.hi:.2f}] ({e.k}/{e.n})"


def driver_text(e: PLiftEntry | None) -> str:
    d = None if e is None else e.driver
    if d is None:
        return "-"
    tail = (
        f" (lift rate {d.low:.2f} in its lower half, {d.high:.2f} in its upper)" if None not in (d.low, d.high) else ""
    )
    return f"{words(d.variable)} {d.effect:+.2f}{tail}"


def _x(p) -> float:
    return _X0 + (_X1 - _X0) * min(max(float(p), 0.0), 1.0)


def p_lift_svg(p_lift: dict[str, PLiftEntry], conditions: list[str] | None = None, title: str = "") -> str:
    """An inline SVG chart of one recording's ``p_lift``, a line per condition; ``""`` for an empty one."""
    if not p_lift:
        return ""
    names = [c for c in (conditions or list(p_lift)) if c in p_lift]
    h = _ROW * (len(names) + 1) + 6
    parts = [
        f"<svg class='p-lift' xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{h}' role='img' "
        f"aria-label='{html.escape(title or 'P(lift) per condition', quote=True)}' font-size='11' "
        "font-family='system-ui,sans-serif'>"
    ]
    for t in (0.0, 0.5, 1.0):
        parts.append(f"<text x='{_x(t):.0f}' y='{h - 4}' text-anchor='middle' fill='#666'>{t:g}</text>")
    parts.append(
        f"<line x1='{_x(0.5):.0f}' y1='2' x2='{_x(0.5):.0f}' y2='{h - _ROW + 2}' stroke='#999' stroke-dasharray='3,3'/>"
    )
    for i, c in enumerate(names):
        e, y = p_lift[c], _ROW * i + _ROW // 2 + 3
        col = WORD_CSS[entry_word(e)]
        tip = html.escape(f"{c}: {class_word(e)}, p_lift {entry_text(e)}; depends most on {driver_text(e)}", quote=True)
        parts.append(
            f"<g><title>{tip}</title><text x='{_X0 - 6}' y='{y + 4}' text-anchor='end'>{html.escape(c)}</text>"
            f"<line x1='{_X0}' y1='{y}' x2='{_X1}' y2='{y}' stroke='#e4e4e4' stroke-width='6'/>"
            f"<line x1='{_x(e.lo):.1f}' y1='{y}' x2='{_x(e.hi):.1f}' y2='{y}' stroke='{col}' "
            "stroke-width='6' stroke-opacity='0.45'/>"
            f"<circle cx='{_x(e.p):.1f}' cy='{y}' r='4' fill='{col}'/>"
            f"<text x='{_X1 + 8}' y='{y + 4}' fill='{col}'>{html.escape(class_word(e))} {e.p:.2f}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def conditions_html(by_protocol: dict[str, dict[str, PLiftEntry]], study_physics: str, conditions: list[str]) -> str:
    """A recording's p_lift, a row per protocol and a column per condition, and its chart; ``""`` where none."""
    have = {k: v for k, v in by_protocol.items() if v}
    if not have:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in conditions)
    body = []
    for proto, pl in have.items():
        cells = "".join(_condition_cell(pl[c]) if c in pl else "<td>-</td>" for c in conditions)
        body.append(f"<tr><th>{html.escape(proto)} / {html.escape(study_physics)}</th>{cells}</tr>")
    charts = "".join(
        f"<p>{html.escape(proto)} protocol, {html.escape(study_physics)} physics:</p>"
        f"{p_lift_svg(pl, conditions, f'{proto} / {study_physics}')}"
        for proto, pl in have.items()
    )
    return (
        "<h3>P(lift) per condition</h3><p>Each condition is an assumption about what the recording means; p_lift is "
        "the fraction of the sampled physics and data variations under which the protocol lifted, with its 95 % "
        "interval (bar) and p (dot); dashed: 0.5. The verdict above is one condition's; the others are "
        "cross-checks.</p>"
        f"<table id=verdicts><tr><th>protocol / physics</th>{head}</tr>{''.join(body)}</table>{charts}"
    )


def _condition_cell(e: PLiftEntry) -> str:
    dep = f"<br><small>depends most on {html.escape(driver_text(e))}</small>" if e.driver else ""
    return f"<td style='color:{WORD_CSS[entry_word(e)]}'><b>{class_word(e)}</b> {html.escape(entry_text(e))}{dep}</td>"


def condition_counts_html(rows: list[StudyRow], study, side_rows: dict[str, list[StudyRow]] | None = None) -> str:
    """Recordings that hold, are uncertain, fail per protocol, intent group and condition; ``side_rows``
    ``{protocol: rows}`` of the other sampled protocols; ``""`` without ``p_lift``."""
    side_rows = side_rows or {}
    conds = conditions_of(rows + [r for rs in side_rows.values() for r in rs], study)
    if not conds:
        return ""
    head = "".join(f"<th>{w.value}</th>" for w in Word)
    body = []
    for proto, prow in (("lift", rows), *side_rows.items()):
        for g, rs in (
            ("lifts", [r for r in prow if r.intent in (INTENT_LIFT, None)]),
            ("other intents", [r for r in prow if r.intent not in (INTENT_LIFT, None)]),
        ):
            for c in conds:
                got = [entry_word(r.p_lift[c]) for r in rs if c in r.p_lift]
                if got:
                    body.append(
                        f"<tr><td>{html.escape(proto)}</td><td>{g}</td><td>{html.escape(c)}</td>"
                        + "".join(f"<td style='color:{WORD_CSS[w]}'>{got.count(w)}</td>" for w in Word)
                        + f"<td>{len(got)}</td></tr>"
                    )
    raw = None if study is None else study.sampling
    s = Sampling.from_dict(raw)
    size = f"{s.samples} samples per recording and condition (seed {s.seed})" if raw else "the samples"
    return (
        f"<h3>Per condition</h3><p>Each recording replayed under {html.escape(size)} of the declared physics and "
        "data uncertainty, per condition (an assumption about what the recording means, never mixed with the "
        "others): what the 95 % interval of p_lift says against 0.5.</p><table id=p-lift-counts><thead><tr>"
        f"<th>protocol</th><th>recordings</th><th>condition</th>{head}<th>of</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def discrimination_html(study) -> str:
    """The study's discrimination table (``--corruptions``); ``""`` without one."""
    rows = discriminations(getattr(study, "discrimination", None))
    if not rows:
        return ""

    body, sources = [], {}
    for d in rows:
        ref = f"{num(d.reference_ratio)} [{sources.setdefault(str(d.reference_source), len(sources) + 1)}]"
        cells = (
            d.protocol,
            d.condition,
            d.corruption,
            num(d.p_real),
            num(d.p_corrupted),
            auc_text(d).removeprefix("AUC "),
            num(d.ratio),
            ref if d.reference_ratio is not None else "-",
        )
        body.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in cells) + "</tr>")
    heads = ("protocol", "condition", "corruption", "p_lift real", "p_lift corrupted", "AUC [95 %], recordings")
    heads += ("success corrupted / real", "published ratio")
    return (
        "<h2>Does the verdict tell a real grasp from a corrupted one?</h2><p>Each recording replayed as recorded and "
        "under each declared corruption; AUC 0.5: the verdict cannot tell them apart, 1: it always can; its 95 % "
        f"interval: {html.escape(INTERVAL_METHOD)}. Over fewer than {MIN_RECORDINGS} recordings an AUC means little."
        "</p><table id=discrimination><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in heads)
        + f"</tr></thead><tbody>{''.join(body)}</tbody></table>"
        + "".join(f"<p class=ref>[{i}] {html.escape(src)}</p>" for src, i in sources.items())
    )
