"""The report's recordings table, one row per study row led by its verdict, sortable and filterable by inline JS (state
in the address, ``#verdict=fails&object=mug&sort=5:desc``; ``<body data-shown>`` counts the rows shown)."""

from __future__ import annotations

import html
from collections import Counter
from urllib.parse import quote

from replay.output.p_lift_section import WORD_CSS, class_word, conditions_of, entry_word
from replay.protocol.verdict import interval_text
from replay.results.outcomes import words as display_outcome
from replay.results.study_rows import StudyRow
from replay.results.verdict_record import PLiftEntry, Word


def href(path) -> str:
    """A relative path as an HTML attribute value: URL-quoted (a name's ``#``, ``?``, ``%``, spaces) then escaped."""
    return html.escape(quote(str(path), safe="/"))


OUTCOME_CSS = {"lifted": "#2e9e4f", "not lifted": "#d2473a", "unstable": "#e29a12", "stuck": "#8a4fbf"}

#: the verdict's columns (what every reader shows first): their row keys
VERDICT, INTERVAL, REASON = "verdict", "p_interval", "reason"
#: table columns: (header, row key, scale, decimals); rows are study rows (replay.results.records.ROW_FIELDS)
COLUMNS = (
    ("recording", "sequence", None, None),
    ("verdict", VERDICT, None, None),
    ("p_lift [95 %]", INTERVAL, None, None),
    ("reason", REASON, None, None),
    ("object", "object", None, None),
    ("intent", "intent", None, None),
    ("contact run", "outcome", None, None),
    ("contact run: diagnosis", "diagnosis", None, None),  # the contact run's, not the verdict's reason
    ("rise mm", "rise", 1000.0, 1),
    ("slip mm", "slip_mm", None, 1),
    ("separation mm", "separation_mm", None, 1),
    ("shake held", "shake_held", None, None),
    ("contacts at lift", "contacts_force_at_lift", None, 0),
    ("wrist err median mm", "wrist_err_median_mm", None, 1),
    ("wrist err peak mm (lift, hold)", "wrist_err_peak_mm", None, 1),
    ("friction budget kg", "friction_budget_peak_kg", None, 2),
    ("object kg", "object_mass", None, 3),
    ("ablation clean", "ablation_clean", None, None),
    ("ablation max disp mm", "ablation_max_disp_mm", None, 2),
    ("contact precision", "contact_agreement_precision", None, 2),
    ("contact recall", "contact_agreement_recall", None, 2),
)
#: the filters: (label, row key, id in the address) (the p_lift ones: per condition); the cause is the contact run's
FILTERS = (
    ("verdict", VERDICT, "verdict"),
    ("contact run", "outcome", "contact-run"),
    ("object", "object", "object"),
    ("contact run: cause", "diagnosis", "cause"),
)
#: a p_lift column's row key: this prefix and the condition (what it says shown, sorted by p)
P_LIFT_KEY = "p_lift:"

_WORD_ORDER = {w: i for i, w in enumerate(Word)}


def columns_for(rows: list[StudyRow]) -> tuple:
    """:data:`COLUMNS` with a ``P(lift) <condition>`` column per condition the rows have, after the outcome."""
    extra = tuple((f"P(lift) {c}", P_LIFT_KEY + c, None, None) for c in conditions_of(rows))
    if not extra:
        return COLUMNS
    k = [c[1] for c in COLUMNS].index("diagnosis")
    return COLUMNS[:k] + extra + COLUMNS[k:]


def value(row: StudyRow, key: str):
    """A row's value in column ``key``: its field, its verdict's part, or for a p_lift column the condition's entry."""
    if key.startswith(P_LIFT_KEY):
        return row.p_lift.get(key[len(P_LIFT_KEY) :])
    if key in (VERDICT, INTERVAL, REASON):
        return row.verdict
    return getattr(row, key) if hasattr(row, key) and key != "extra" else row.extra.get(key)


def cell(v, scale, dec, *, key: str = "") -> tuple[str, str]:
    if v is None:
        return "-", ""
    if key == VERDICT:
        return v.word.value + ("" if v.sampled else " (one run)"), str(_WORD_ORDER[v.word])
    if key == INTERVAL or isinstance(v, PLiftEntry):  # p and its 95 % interval, sorted by p
        return interval_text(v), repr(v.p)
    if key == REASON:
        return v.reason, v.reason
    if isinstance(v, bool):
        return ("yes" if v else "no"), str(int(v))
    if isinstance(v, (int, float)) and dec is not None:
        x = float(v) * (scale or 1.0)
        return f"{x:.{dec}f}", repr(x)
    return str(v), str(v)


def filter_value(row: StudyRow, key: str) -> str:
    """What a filter on column ``key`` matches: what a p_lift entry says (``holds``), else the text shown."""
    v = value(row, key)
    return class_word(v) if isinstance(v, PLiftEntry) else shown(row, key)[0]


def shown(row: StudyRow, key: str, *, scale=None, dec=None) -> tuple[str, str]:
    """What a row shows in column ``key`` (``not lifted`` for ``not_lifted``) and its sort key."""
    text, k = cell(value(row, key), scale, dec, key=key)
    return (display_outcome(text) if key == "outcome" else text), k


def _style(row: StudyRow, key: str, text: str) -> str:
    v = value(row, key)
    if key == VERDICT and v is not None:
        return f" style='color:{WORD_CSS[v.word]};font-weight:bold'"
    if key == "outcome" and text in OUTCOME_CSS:
        return f" style='color:{OUTCOME_CSS[text]}'"
    if isinstance(v, PLiftEntry):
        return f" style='color:{WORD_CSS[entry_word(v)]};text-align:left'"
    return ""


def table_html(rows: list[StudyRow], link) -> str:
    """The filter bar and the table; ``link(row)``: the address of the row's own page."""
    cols = columns_for(rows)
    head = "".join(f"<th data-key='{key}'>{html.escape(h)}</th>" for h, key, _, _ in cols)
    body = []
    for r in rows:
        cells = []
        for _, key, scale, dec in cols:
            text, k = shown(r, key, scale=scale, dec=dec)
            sort = "" if k == text else f" data-k='{html.escape(k)}'"  # the text is the key where they agree
            if key.startswith(P_LIFT_KEY):  # its filter matches what it says, not its numbers
                sort += f" data-f='{html.escape(filter_value(r, key))}'"
            text_html = f"<a href='{href(link(r))}'>{html.escape(text)}</a>" if key == "sequence" else html.escape(text)
            cells.append(f"<td{sort}{_style(r, key, text)}>{text_html}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f"{_filters_html(rows, cols)}<table id=rows><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _filters_html(rows: list[StudyRow], cols: tuple) -> str:
    """One ``<select>`` per filter and p_lift condition, values with their counts, most first."""
    keys = {c[1] for c in cols}
    wanted = [f for f in FILTERS if f[1] in keys]
    k = next((i for i, (_, key, _) in enumerate(wanted) if key == "diagnosis"), len(wanted)) + 1
    wanted[k:k] = [
        (f"P(lift) {key[len(P_LIFT_KEY) :]}", key, "p_lift-" + key[len(P_LIFT_KEY) :])
        for key in (c[1] for c in cols)
        if key.startswith(P_LIFT_KEY)
    ]
    parts = []
    for label, key, ident in wanted:
        counts = Counter(filter_value(r, key) for r in rows)
        opts = "".join(
            f"<option value='{html.escape(v)}'>{html.escape(v)} ({n})</option>"
            for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        parts.append(
            f"<label>{html.escape(label)} <select data-filter='{html.escape(key)}' "
            f"id='filter-{html.escape(ident)}'><option value=''>all</option>{opts}</select></label>"
        )
    return (
        f"<p id=filters>{' '.join(parts)} <span id=shown></span> "
        "<button id=clear-filters type=button>clear</button></p>"
    )


TABLE_JS = """
const T0 = performance.now();
const tb = document.querySelector('#rows tbody');
const heads = Array.from(document.querySelectorAll('#rows th'));
const colOf = k => heads.findIndex(h => h.dataset.key === k);
const keyOf = (r, c) => { const d = r.cells[c]; return d.dataset.k !== undefined ? d.dataset.k : d.textContent; };
const rowsAll = Array.from(tb.rows);
function sortBy(col, desc) {
  const rows = Array.from(tb.rows);
  const num = rows.every(r => { const k = keyOf(r, col); return k === '' || k === '-' || !isNaN(parseFloat(k)); });
  rows.sort((a, b) => {
    let x = keyOf(a, col), y = keyOf(b, col);
    const ex = x === '' || x === '-', ey = y === '' || y === '-';
    if (ex && ey) return 0; if (ex) return 1; if (ey) return -1;
    let c = num ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
    return desc ? -c : c;
  });
  rows.forEach(r => tb.appendChild(r));
  document.body.dataset.sorted = col + (desc ? ':desc' : ':asc');
  saveState();
}
function applyFilters() {
  const want = Array.from(document.querySelectorAll('select[data-filter]'))
    .filter(s => s.value !== '').map(s => [colOf(s.dataset.filter), s.value]);
  let n = 0;
  rowsAll.forEach(r => {
    const ok = want.every(([c, v]) => { const d = r.cells[c]; return (d.dataset.f ?? d.textContent) === v; });
    r.hidden = !ok; n += ok;
  });
  document.body.dataset.shown = n;
  document.getElementById('shown').textContent = n + ' of ' + rowsAll.length + ' shown';
  saveState();
}
function saveState() {
  const p = new URLSearchParams();
  document.querySelectorAll('select[data-filter]').forEach(s => { if (s.value) p.set(s.id.slice(7), s.value); });
  if (document.body.dataset.sorted) p.set('sort', document.body.dataset.sorted.replace(':asc', ''));
  history.replaceState(null, '', '#' + p.toString());
}
heads.forEach((th, i) => th.addEventListener('click', () => {
  const d = th.dataset.dir === 'asc'; th.dataset.dir = d ? 'desc' : 'asc'; sortBy(i, d);
}));
document.querySelectorAll('select[data-filter]').forEach(s => s.addEventListener('change', applyFilters));
document.getElementById('clear-filters').addEventListener('click', () => {
  document.querySelectorAll('select[data-filter]').forEach(s => { s.value = ''; }); applyFilters();
});
const T_SETUP = performance.now() - T0;
window.addEventListener('load', () => {
  const t1 = performance.now();
  const p = new URLSearchParams(location.hash.slice(1));
  document.querySelectorAll('select[data-filter]').forEach(s => {
    const v = p.get(s.id.slice(7));
    if (v !== null && Array.from(s.options).some(o => o.value === v)) s.value = v;
  });
  applyFilters();
  const m = /^(\\d+)(:desc)?$/.exec(p.get('sort') || '');
  if (m) sortBy(parseInt(m[1]), !!m[2]);
  const imgs = Array.from(document.images);
  document.body.dataset.imagesOk = imgs.filter(im => im.complete && im.naturalWidth > 0).length;
  document.body.dataset.imagesAll = imgs.length;
  document.body.dataset.loadMs = Math.round(performance.now());  // the page's load, for benchmarks/study_scale.py
  document.body.dataset.jsMs = Math.round(T_SETUP + performance.now() - t1);  // this script's own part of it
  document.body.dataset.ready = '1';
});
"""
