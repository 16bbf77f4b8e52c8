"""The report's view of the sampled verdict (``run_study.py --samples N``, issue #46): per recording
and condition ``p_lift``, the fraction of N joint physics / data samples lifted, with its 95 %
interval and its class (robust lift: the interval at or above 0.5; robust failure: at or below;
uncertain: across it), and per study the discrimination of real from corrupted recordings.

The fields are those of ``docs/results.md`` (the study's ``sampling``, ``discrimination`` and
``counts["p_lift"]``; a rollout's ``p_lift`` = ``{condition: {p, lo, hi, n, k, class, driver}}``).
A results file without them (an older study, ``--samples 0``) gets no chart and no section: every
function here returns ``""`` for it.

* :func:`p_lift_svg`: a small inline SVG chart, one line per condition: the interval as a bar on
  0-1, ``p`` as a dot, 0.5 dashed, coloured by class;
* :func:`verdicts_html`: a recording's page part: its sampled verdict per protocol side by side (lift,
  hug-oracle; the study's own physics), the ones the study lacks named (every (protocol, physics) pair's
  single verdict: :mod:`replay.output.verdicts_section`);
* :func:`p_lift_summary_html`: the main page's counts per condition (robust lift / uncertain /
  robust failure, lifts and other intents apart), and :func:`discrimination_html` the study's
  discrimination table.
"""

from __future__ import annotations

import html

from replay.checks.intent import INTENT_LIFT
from replay.protocol.protocols.base import all_protocols, primary_protocol
from replay.results.records import RolloutRecord

#: the classes in headline order, and as a reader is told them
CLASS_WORDS = {"robust_lift": "robust lift", "uncertain": "uncertain", "robust_failure": "robust failure"}
#: their colours (the outcome colours of the table: lifted green, not lifted red; uncertain amber)
CLASS_CSS = {"robust_lift": "#2e9e4f", "uncertain": "#e29a12", "robust_failure": "#d2473a"}
#: the protocols whose verdict a study may carry per recording, and the named physics (replay.sim.physics)
PHYSICS_NAMES = ("replay", "authored", "calibrated")

_W, _ROW, _X0, _X1 = 470, 18, 150, 340  # chart width px, row height, the 0-1 axis from _X0 to _X1


def p_lift_of(obj) -> dict | None:
    """The ``p_lift`` dict of a study row, a rollout record (its sampled verdict) or a row-like object; None where
    it has none (an older file, ``--samples 0``)."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        v = obj.get("p_lift")
    elif isinstance(obj, RolloutRecord):
        v = obj.sampled.p_lift
    else:
        v = getattr(obj, "p_lift", None)
    return v if isinstance(v, dict) and v else None


def study_field(study, name: str):
    """A study record's top-level field ``name`` (``sampling``, ``discrimination``): declared, or kept in
    ``extra`` by a reader of an earlier format; None where absent."""
    v = getattr(study, name, None)
    return v if v is not None else (getattr(study, "extra", None) or {}).get(name)


def conditions_of(rows: list[dict], study=None) -> list[str]:
    """The conditions in order: the study's ``sampling.conditions`` first, then any other a row has."""
    names = (
        [
            str(c.get("name"))
            for c in ((study_field(study, "sampling") or {}).get("conditions") or [])
            if isinstance(c, dict)
        ]
        if study is not None
        else []
    )
    for r in rows:
        for c in p_lift_of(r) or {}:
            if c not in names:
                names.append(c)
    return names


def class_word(entry) -> str:
    """An entry's class as a reader is told it (``robust lift``), ``-`` for none."""
    if not isinstance(entry, dict):
        return "-"
    c = entry.get("class")
    return CLASS_WORDS.get(c, str(c) if c is not None else "-")


def entry_text(e: dict) -> str:
    """``0.41 [0.26, 0.57] (13/32)``: p, its 95 % interval, lifted of sampled."""

    def f(x):
        return "-" if x is None else f"{float(x):.2f}"

    kn = (
        f" ({e['k']}/{e['n']})"
        if e.get("k") is not None and e.get("n") is not None
        else (f" (n {e['n']})" if e.get("n") is not None else "")
    )
    return f"{f(e.get('p'))} [{f(e.get('lo'))}, {f(e.get('hi'))}]{kn}"


def driver_text(e: dict) -> str:
    """The sampled variable the verdict depends on most, with its effect, or ``-``."""
    d = e.get("driver") if isinstance(e, dict) else None
    if not isinstance(d, dict) or d.get("variable") is None:
        return "-"
    eff = d.get("effect")
    lo, hi = d.get("low"), d.get("high")
    tail = (
        f" (lift rate {lo:.2f} in its lower half, {hi:.2f} in its upper)" if lo is not None and hi is not None else ""
    )
    return f"{d['variable']} {eff:+.2f}{tail}" if isinstance(eff, (int, float)) else f"{d['variable']}{tail}"


def _x(p) -> float:
    return _X0 + (_X1 - _X0) * min(max(float(p), 0.0), 1.0)


def p_lift_svg(p_lift: dict | None, conditions: list[str] | None = None, title: str = "") -> str:
    """An inline SVG chart of one recording's ``p_lift`` (module doc), one line per condition in
    ``conditions`` order (default: the dict's); ``""`` for None or empty."""
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
        e, y = p_lift[c] or {}, _ROW * i + _ROW // 2 + 3
        col = CLASS_CSS.get(e.get("class"), "#555")
        tip = html.escape(f"{c}: {class_word(e)}, p_lift {entry_text(e)}; depends most on {driver_text(e)}", quote=True)
        parts.append(
            f"<g><title>{tip}</title><text x='{_X0 - 6}' y='{y + 4}' text-anchor='end'>{html.escape(c)}</text>"
            f"<line x1='{_X0}' y1='{y}' x2='{_X1}' y2='{y}' stroke='#e4e4e4' stroke-width='6'/>"
        )
        if e.get("lo") is not None and e.get("hi") is not None:
            parts.append(
                f"<line x1='{_x(e['lo']):.1f}' y1='{y}' x2='{_x(e['hi']):.1f}' y2='{y}' stroke='{col}' "
                "stroke-width='6' stroke-opacity='0.45'/>"
            )
        if e.get("p") is not None:
            parts.append(f"<circle cx='{_x(e['p']):.1f}' cy='{y}' r='4' fill='{col}'/>")
        pv = "" if e.get("p") is None else f" {float(e['p']):.2f}"
        parts.append(f"<text x='{_X1 + 8}' y='{y + 4}' fill='{col}'>{html.escape(class_word(e))}{pv}</text></g>")
    parts.append("</svg>")
    return "".join(parts)


def verdicts_html(by_protocol: dict[str, dict | None], study_physics: str | None, conditions: list[str]) -> str:
    """A recording's verdicts side by side: one row per protocol the study ran with a ``p_lift``
    (``by_protocol``: {protocol: p_lift or None}), one column per condition (class, p, interval),
    its chart, and a line naming the protocols and physics this study has no verdict for; ``""``
    where no protocol has one."""
    have = {k: v for k, v in by_protocol.items() if v}
    if not have:
        return ""
    phys = study_physics or "replay"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in conditions)
    body = []
    for proto, pl in have.items():
        cells = "".join(
            f"<td style='color:{CLASS_CSS.get((pl.get(c) or {}).get('class'), '#222')}' "
            f"title='{html.escape('depends most on ' + driver_text(pl.get(c) or {}), quote=True)}'>"
            f"<b>{html.escape(class_word(pl.get(c)))}</b><br>{html.escape(entry_text(pl[c]) if pl.get(c) else '-')}</td>"
            for c in conditions
        )
        body.append(f"<tr><th>{html.escape(proto)} / {html.escape(phys)}</th>{cells}</tr>")
    charts = "".join(
        f"<p>{html.escape(proto)} protocol, {html.escape(phys)} physics:</p>"
        f"{p_lift_svg(pl, conditions, f'{proto} / {phys}')}"
        for proto, pl in have.items()
    )
    absent_p = [p.name for p in all_protocols() if p.sampled and p.name not in have]
    absent_ph = [p for p in PHYSICS_NAMES if p != phys]
    missing = (
        f"Not in this study: the {', '.join(absent_p)} protocol ({'--protocol ' + absent_p[0]}); "
        if absent_p
        else "Not in this study: "
    )
    missing += (
        f"the {' and '.join(absent_ph)} physics sampled (a study of its own: run_study.py --physics NAME "
        "--samples N; their single-rollout verdicts beside this study's: --verdicts, above)."
    )
    return (
        f"<h2>P(lift) per condition</h2><p>The outcome above is the study's single contact run, under its "
        "own physics; P(lift) is over the samples: the fraction of the sampled physics and data variations "
        f"under which the protocol lifted, with its 95 % interval (bar) and p (dot); dashed: 0.5. "
        f"robust lift: the interval at or above 0.5; robust failure: at or below; uncertain: across it.</p>"
        f"<table id=verdicts><tr><th>protocol / physics</th>{head}</tr>{''.join(body)}</table>"
        f"{charts}<p id=verdicts-absent>{html.escape(missing)}</p>"
    )


def class_counts(rows: list[dict], conditions: list[str]) -> dict[str, dict[str, int]]:
    """``{condition: {robust_lift, uncertain, robust_failure}}`` over the rows with a ``p_lift``."""
    out = {c: dict.fromkeys(CLASS_WORDS, 0) for c in conditions}
    for r in rows:
        for c, e in (p_lift_of(r) or {}).items():
            if c in out and isinstance(e, dict) and e.get("class") in CLASS_WORDS:
                out[c][e["class"]] += 1
    return out


def p_lift_summary_html(rows: list[dict], study, side_rows: dict[str, list[dict]] | None = None) -> str:
    """The main page's headline of the sampled verdict: per protocol and condition robust lift /
    uncertain / robust failure, the lifts and the other intents apart (rows' ``intent``), with the
    sampling's size; ``rows``: the primary (lift) protocol's; ``side_rows``: ``{protocol: rows}`` of the other
    sampled protocols (``p_lift``, ``intent``); ``""`` for a study without ``p_lift``."""
    side_rows = side_rows or {}
    conds = conditions_of(rows + [r for rs in side_rows.values() for r in rs], study)
    if not conds:
        return ""
    head = "".join(f"<th>{w}</th>" for w in CLASS_WORDS.values())
    body = []
    for proto, prow in ((primary_protocol().name, rows), *side_rows.items()):
        groups = {
            "lifts": [r for r in prow if r.get("intent") in (INTENT_LIFT, None)],
            "other intents": [r for r in prow if r.get("intent") not in (INTENT_LIFT, None)],
        }
        for g, rs in groups.items():
            counts = class_counts(rs, conds)
            for c in conds:
                n = sum(counts[c].values())
                if n:
                    body.append(
                        f"<tr><td>{proto}</td><td>{html.escape(g)}</td><td>{html.escape(c)}</td>"
                        + "".join(f"<td style='color:{CLASS_CSS[k]}'>{counts[c][k]}</td>" for k in CLASS_WORDS)
                        + f"<td>{n}</td></tr>"
                    )
    s = study_field(study, "sampling") or {}
    size = (
        f"{s.get('samples')} samples per recording and condition (seed {s.get('seed')})"
        if s.get("samples") is not None
        else "the study's samples"
    )
    return (
        f"<p>What a verdict is worth: each recording replayed under {html.escape(size)} of the declared "
        "physics and data uncertainty, per condition (an assumption about what the recording means, never "
        "mixed with the others). robust lift: the 95 % interval of p_lift at or above 0.5; robust failure: at "
        "or below; uncertain: across it.</p><table id=p-lift-counts><thead><tr><th>protocol</th><th>recordings</th>"
        f"<th>condition</th>{head}<th>of</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def discrimination_html(study) -> str:
    """The study's discrimination table (``--corruptions``): per condition and corruption p_lift of the
    real and the corrupted recordings, the AUC of p_lift separating them, success(corrupted) /
    success(real) beside the published figure; ``""`` without one."""
    rows = study_field(study, "discrimination")
    if not rows:
        return ""

    def f(x, spec=".2f"):
        return "-" if x is None else format(float(x), spec)

    body, sources = [], {}
    for d in rows:
        ref = d.get("reference") or {}
        body.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (
                    d.get("protocol", "lift"),
                    d.get("condition"),
                    d.get("corruption"),
                    f(d.get("p_real")),
                    f(d.get("p_corrupted")),
                    f(d.get("auc")),
                    f(d.get("ratio")),
                    f"{f(ref.get('ratio'))} [{sources.setdefault(str(ref.get('source')), len(sources) + 1)}]"
                    if ref
                    else "-",
                    d.get("n_recordings", "-"),
                )
            )
            + "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "protocol",
            "condition",
            "corruption",
            "p_lift real",
            "p_lift corrupted",
            "AUC",
            "success corrupted / real",
            "published ratio",
            "recordings",
        )
    )
    return (
        "<h2>Does the verdict tell a real grasp from a corrupted one?</h2><p>Each recording replayed as "
        "recorded and under each declared corruption; AUC 0.5: the verdict cannot tell them apart, 1: it "
        "always can. A judge is worth something when it lifts what people lifted and fails what is broken.</p>"
        f"<table id=discrimination><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        + "".join(f"<p class=ref>[{i}] {html.escape(src)}</p>" for src, i in sources.items())
    )
