"""A study's report: one static HTML page (no server) with the summary, a sortable table of every
recording, per-recording plots over time, the clips, and the study's config and versions.

Layout written by :func:`write_report` for ``--out out/grab/report.html``::

    out/grab/report.html           the page (inline CSS and a few lines of JS to sort the table)
    out/grab/report_files/<seq>.png   one figure per recording (matplotlib, Agg)

Plots (:func:`plot_rollout`, from the rollout's poses npz, :mod:`replay.results`): object
height above the support (mm, world z of the object origin minus ``support_height``; the
contact run and the contact ablation), hand-object contacts, wrist position error (mm),
with the protocol phases as bands. Clips are embedded with ``<video>`` and paths relative
to the page: the montage, and ``<clips>/<sequence>.mp4`` where such renders exist.
"""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

import numpy as np

from replay.checks.causes import cause_counts_text
from replay.fileio import atomic_path, atomic_write_bytes, atomic_write_text
from replay.output.attribution_section import attribution_section_for
from replay.output.gripper_section import gripper_section_for
from replay.output.oracle_section import oracle_section_html
from replay.output.envelope_section import envelope_section_html
from replay.output.export_section import exports_html
from replay.output.refine_section import refine_section_html
from replay.protocol.diagnosis import display_outcome
from replay.results.files import check_poses_version, read_rollout, read_study
from replay.results.records import Phase, ResultsFormatError, RolloutRecord, StudyRecord
from replay.study.console import INTENT_COUNTS, intent_counts, lifts_and_others

#: phase band colours of the plots (light, so the lines stay readable)
PHASE_COLOURS = {Phase.SETTLE: "#eeeeee", Phase.APPROACH: "#dde8f6", Phase.LIFT: "#dff2e1", Phase.HOLD: "#fff3d6",
                 Phase.SHAKE: "#f8dede", Phase.RECORDED: "#e9e2f4", Phase.RELEASE: "#e6e6f8"}
OUTCOME_CSS = {"lifted": "#2e9e4f", "not lifted": "#d2473a", "unstable": "#e29a12",
               "stuck": "#8a4fbf"}

#: table columns: (header, row key, scale, decimals); rows are study rows (replay.results.records.ROW_FIELDS)
COLUMNS = (
    ("recording", "sequence", None, None), ("object", "object", None, None), ("intent", "intent", None, None),
    ("outcome", "outcome", None, None),
    ("diagnosis", "diagnosis", None, None), ("rise mm", "rise", 1000.0, 1), ("slip mm", "slip_mm", None, 1),
    ("separation mm", "separation_mm", None, 1), ("shake held", "shake_held", None, None),
    ("contacts at lift", "contacts_force_at_lift", None, 0), ("wrist err median mm", "wrist_err_median_mm", None, 1),
    ("friction budget kg", "friction_budget_peak_kg", None, 2), ("object kg", "object_mass", None, 3),
    ("ablation clean", "ablation_clean", None, None), ("ablation max disp mm", "ablation_max_disp_mm", None, 2),
    ("contact precision", "contact_agreement_precision", None, 2), ("contact recall", "contact_agreement_recall", None, 2),
)


def _load_poses(path: Path) -> dict | None:
    """The poses npz as arrays (version checked), or None if it is missing."""
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as z:
        check_poses_version(path, z.files, z)
        return {k: np.asarray(z[k]) for k in z.files}


def plot_rollout(rec: RolloutRecord, study_dir: Path, out_png: Path) -> bool:
    """Write the recording's figure (height, contacts, wrist error over time, phase bands).

    Returns False (nothing written) when its poses npz is missing.

    Raises:
        ResultsFormatError: the npz is of another format version.
    """
    import matplotlib  # here: choosing the headless backend is this call's business, not an import's

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    main = _load_poses(study_dir / rec.poses) if rec.poses else None
    if main is None:
        return False
    abl = _load_poses(study_dir / rec.ablation.poses) if rec.ablation and rec.ablation.poses else None
    t = main["time"]
    k = list(main["body_names"]).index("object")
    base = rec.support_height or 0.0
    fig, axes = plt.subplots(3, 1, figsize=(6.4, 4.6), sharex=True, dpi=80)
    ax_h, ax_c, ax_w = axes
    ax_h.plot(t, (main["body_pos"][:, k, 2] - base) * 1000.0, color="#1f5fa8", label="contact run")
    if abl is not None:
        ka = list(abl["body_names"]).index("object")
        ax_h.plot(abl["time"], (abl["body_pos"][:, ka, 2] - base) * 1000.0, color="#888888", ls="--",
                  label="contact ablation")
    ax_h.set_ylabel("object z\nabove support mm", fontsize=8)
    ax_h.legend(fontsize=7, loc="upper left")
    ax_c.step(t, main["contact_count"], where="post", color="#6a3d9a")
    ax_c.set_ylabel("hand-object\ncontacts", fontsize=8)
    if "wrist_err" in main:
        ax_w.plot(t, main["wrist_err"] * 1000.0, color="#b15928")
    ax_w.set_ylabel("wrist error mm", fontsize=8)
    ax_w.set_xlabel("time s", fontsize=8)
    ph = main["phase"]
    edges = np.flatnonzero(np.diff(ph)) + 1
    starts, stops = np.r_[0, edges], np.r_[edges, len(ph)]
    dt = float(t[1] - t[0]) if len(t) > 1 else 1 / 30
    for a, b in zip(starts, stops):
        p = Phase(int(ph[a]))
        for ax in axes:
            ax.axvspan(t[a], t[b - 1] + dt, color=PHASE_COLOURS[p], zorder=0, lw=0)
        ax_h.text((t[a] + t[b - 1] + dt) / 2, 1.02, p.name.lower(), transform=ax_h.get_xaxis_transform(),
                  ha="center", va="bottom", fontsize=7)
    for ax in axes:
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{rec.sequence}: {rec.outcome}", fontsize=9, y=0.995)
    fig.tight_layout()
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write_bytes(out_png, buf.getvalue())
    return True


def _cell(v, scale, dec) -> tuple[str, str]:
    """(text, sort key) of one table cell."""
    if v is None:
        return "-", ""
    if isinstance(v, bool):
        return ("yes" if v else "no"), str(int(v))
    if isinstance(v, (int, float)) and dec is not None:
        x = float(v) * (scale or 1.0)
        return f"{x:.{dec}f}", repr(x)
    return str(v), str(v)


def _rel(path: Path, page_dir: Path) -> str:
    return Path(os.path.relpath(path, page_dir)).as_posix()


SORT_JS = """
function sortBy(col, desc) {
  const tb = document.querySelector('#rows tbody');
  const rows = Array.from(tb.rows);
  const num = rows.every(r => r.cells[col].dataset.k === '' || !isNaN(parseFloat(r.cells[col].dataset.k)));
  rows.sort((a, b) => {
    let x = a.cells[col].dataset.k, y = b.cells[col].dataset.k;
    if (x === '' && y === '') return 0; if (x === '') return 1; if (y === '') return -1;
    let c = num ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
    return desc ? -c : c;
  });
  rows.forEach(r => tb.appendChild(r));
  document.body.dataset.sorted = col + (desc ? ':desc' : ':asc');
}
document.querySelectorAll('#rows th').forEach((th, i) => th.addEventListener('click', () => {
  const d = th.dataset.dir === 'asc'; th.dataset.dir = d ? 'desc' : 'asc'; sortBy(i, d);
}));
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  document.body.dataset.imagesOk = imgs.filter(im => im.complete && im.naturalWidth > 0).length;
  document.body.dataset.imagesAll = imgs.length;
  const m = /sort=(\\d+)(:desc)?/.exec(location.hash);
  if (m) sortBy(parseInt(m[1]), !!m[2]);
});
"""

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
td:nth-child(-n+5),th{text-align:left}
th{background:#f0f0f0;cursor:pointer;user-select:none}
.card{display:inline-block;vertical-align:top;margin:0 1em 1em 0}
.card img{display:block;border:1px solid #ddd}
video.montage{display:block;max-width:100%;height:auto}
pre{background:#f6f6f6;padding:8px;font-size:12px;max-height:30em;overflow:auto}
.k{font-weight:bold}
"""


def _summary_html(study: StudyRecord, by_intent: dict) -> str:
    """The study's counts, the lifts and the other intents apart (``by_intent``:
    :func:`replay.study.console.intent_counts`)."""
    c = study.counts or {}
    if not c.get("rollouts") and "lift" not in (study.protocols or ["lift"]):  # e.g. a hug-oracle study alone
        return (f"<p id=summary>No lift-protocol rollouts in this study (protocols: "
                f"{html.escape(', '.join(study.protocols))}): their results are in the sections below.</p>")
    diag = ", ".join(f"{html.escape(k)} {v}" for k, v in (c.get("diagnosis") or {}).items() if v) or "-"
    refused = int(c.get("refused") or 0)
    items = [
        ("recordings", c.get("rollouts")), ("lifted", c.get("lifted")), ("held through the shake", c.get("shake_held")),
        ("not lifted", c.get("not_lifted")), ("unstable", c.get("unstable")),
        ("refused (bad input)", refused), ("failed", (c.get("failed_inputs") or 0) - refused),
        ("input causes (refused, flagged)", cause_counts_text(c.get("causes")) or "-"),
        ("contact ablation clean", f"{c.get('ablation_clean')} of {c.get('ablation_run')}"),
        ("ablation lifted", c.get("ablation_lifted")), ("diagnosis", diag),
        ("median wrist error mm", None if c.get("median_wrist_err_mm") is None else f"{c['median_wrist_err_mm']:.2f}"),
        (f"contact agreement with the recording, median precision / recall (bones), over the "
         f"{c.get('contact_agreement_n', 0)} of {c.get('contact_agreement_of', c.get('rollouts'))} recordings with "
         "recorded and simulated contact", _agreement_medians(c)),
        ("wall time s", None if c.get("wall_s") is None else f"{c['wall_s']:.1f}"),
    ]
    lis = "".join(f"<li><span class=k>{html.escape(k)}</span>: {v if k == 'diagnosis' else html.escape(str(v))}</li>"
                  for k, v in items)
    groups = lifts_and_others(by_intent)
    head = "".join(f"<th>{h}</th>" for h in ("", "recordings", "lifted", "held through the shake",
                                                "not lifted", "unstable"))
    body = "".join(f"<tr><td>{html.escape(k)}</td>" + "".join(f"<td>{g[f]}</td>" for f in INTENT_COUNTS) + "</tr>"
                   for k, g in groups.items())
    per = "".join(f"{html.escape(k)} {v['lifted']}/{v['rollouts']}" + (", " if n < len(by_intent) - 1 else "")
                  for n, (k, v) in enumerate(by_intent.items()))
    table = (f"<table id=by-intent><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
             f"<p>lifted per intent: {per}</p>") if groups else ""
    return f"<ul id=summary>{lis}</ul>{table}"


def _agreement_medians(c: dict) -> str:
    """The medians (:func:`replay.study.summary.agreement_medians`), and what the others lacked."""
    med = " / ".join("-" if c.get(f"median_contact_agreement_{k}") is None else f"{c[f'median_contact_agreement_{k}']:.2f}"
                     for k in ("precision", "recall"))
    if c.get("contact_agreement_of") is None:  # a study written before the counts were kept
        return med
    return (f"{med} (left out: {c.get('contact_agreement_no_simulated', 0)} with no bone carrying force, "
            f"{c.get('contact_agreement_no_recorded', 0)} with no recorded contact)")


def _table_html(rows: list[dict]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h, _, _, _ in COLUMNS)
    body = []
    for r in rows:
        cells = []
        for _, key, scale, dec in COLUMNS:
            text, k = _cell(r.get(key), scale, dec)
            text = display_outcome(text) if key == "outcome" else text  # "not lifted"
            style = f" style='color:{OUTCOME_CSS[text]};font-weight:bold'" if key == "outcome" and text in OUTCOME_CSS \
                else ""
            if key == "sequence":
                text_html = f"<a href='#rec-{html.escape(text)}'>{html.escape(text)}</a>"
            else:
                text_html = html.escape(text)
            cells.append(f"<td data-k='{html.escape(k)}'{style}>{text_html}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table id=rows><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _video(src: str) -> str:
    return f"<video controls muted preload=metadata width=480 src='{html.escape(src)}'></video>"


def build_report(study_path: str | Path, out: str | Path, montage: str | Path | None = None,
                 clips_dir: str | Path | None = None) -> dict:
    """Write the report page and its plots; returns ``{"rows", "plots", "clips", "montage"}``: the counts of
    recordings, plots and per-recording clips embedded, and whether the montage is.

    Args:
        study_path: the study JSON (:func:`replay.results.files.read_study`).
        out: the HTML file; plots go to ``<out stem>_files/``.
        montage: the study's montage video, embedded if it exists.
        clips_dir: folder of per-recording renders ``<sequence with / as __>.mp4``, embedded where present.

    Raises:
        ResultsFormatError: a study, rollout or npz file of another format version.
    """
    study_path, out = Path(study_path), Path(out)
    study = read_study(study_path)
    sdir, pdir = study_path.parent.resolve(), out.parent.resolve()
    fdir = pdir / f"{out.stem}_files"
    recs = {str(row.get("sequence")): _read(sdir, row) for row in study.rollouts}
    cards, n_plots, n_clips = [], 0, 0
    for row in study.rollouts:
        card, plotted, clipped = _card(str(row.get("sequence")), recs[str(row.get("sequence"))], sdir, fdir, pdir,
                                       clips_dir, study_file=study_path)
        cards.append(card)
        n_plots, n_clips = n_plots + plotted, n_clips + clipped
    mont = _montage_html(Path(montage), study, pdir, fdir) if montage is not None and Path(montage).is_file() else ""
    atomic_write_text(out, _page(study, study_path, pdir, fdir, cards, mont, recs))
    return {"rows": len(study.rollouts), "plots": n_plots, "clips": n_clips, "montage": bool(mont)}


def _read(sdir: Path, row: dict) -> RolloutRecord | ResultsFormatError:
    """A row's rollout record, or the error that says why it cannot be read."""
    try:
        return read_rollout(sdir / str(row.get("json")))
    except ResultsFormatError as e:
        return e


def beside(path: Path, pdir: Path, fdir: Path) -> str:
    """A link from the page in ``pdir`` to ``path`` that survives moving the output folder:
    relative where ``path`` is inside ``pdir``; otherwise ``path`` is copied into ``fdir`` (the
    page's files, when it changed) and linked there."""
    path = path.resolve()
    if path.is_relative_to(pdir):
        return _rel(path, pdir)
    dst = fdir / path.name
    st = path.stat()
    if not (dst.is_file() and dst.stat().st_size == st.st_size and dst.stat().st_mtime >= st.st_mtime):
        with atomic_path(dst, suffix=".tmp" + path.suffix) as tmp:
            shutil.copyfile(path, tmp)
    return _rel(dst, pdir)


def _montage_html(montage: Path, study: StudyRecord, pdir: Path, fdir: Path) -> str:
    """The montage at its own size (at most the page's width), copied beside the page when it is
    elsewhere, and the recordings it has no tile for (from its record, ``montage.mp4.json``)."""
    record = montage.with_name(montage.name + ".json")
    try:
        meta = json.loads(record.read_text())
    except (OSError, ValueError):
        meta = {}
    size = meta.get("size") if isinstance(meta.get("size"), list) else None
    width = f" width={int(size[0])}" if size else ""
    shown = meta.get("rollouts") if isinstance(meta.get("rollouts"), list) else None
    if shown is None:
        note = "<p>(no record of its tiles beside it: montage.mp4.json)</p>"
    else:
        missing = [str(r.get("sequence")) for r in study.rollouts if str(r.get("sequence")) not in shown]
        note = (f"<p id=montage-tiles>{len(shown)} tiles, one per recording.</p>" if not missing else
                f"<p id=montage-tiles>{len(shown)} tiles; no tile for {len(missing)} recording(s): "
                f"{html.escape(', '.join(missing))} (render_montage.py --max-clips, --objects, or a montage older "
                "than the study)</p>")
    src = html.escape(beside(montage, pdir, fdir))
    return (f"<h2>Montage</h2>{note}<video class=montage controls muted preload=metadata{width} "
            f"src='{src}'></video>")


def _card(seq: str, rec: RolloutRecord | ResultsFormatError, sdir: Path, fdir: Path, pdir: Path,
          clips_dir, study_file: Path | None = None) -> tuple[str, bool, bool]:
    """(HTML, plotted, clip found) of one recording's card: title and outcome, its figure over
    time (written to ``fdir``), its clip from ``clips_dir`` where one exists, its diagnosis, its
    exports (:func:`replay.output.export_section.exports_html`; ``study_file`` the study JSON)."""
    stem = seq.replace("/", "__")
    if isinstance(rec, ResultsFormatError):
        return (f"<div class=card id='rec-{html.escape(seq)}'><h3>{html.escape(seq)}</h3>"
                f"<p>{html.escape(str(rec))}</p></div>"), False, False
    png = fdir / f"{stem}.png"
    parts = [f"<h3>{html.escape(seq)} ({html.escape(str(rec.object))}): "
             f"<span style='color:{OUTCOME_CSS.get(rec.outcome, '#222')}'>{html.escape(str(rec.outcome))}</span></h3>"]
    plotted = plot_rollout(rec, sdir, png)
    if plotted:
        parts.append(f"<img alt='{html.escape(seq)} over time' width=512 src='{_rel(png, pdir)}'>")
    else:
        parts.append("<p>no saved poses</p>")
    # render_montage.py --clips names a clip by its object; by sequence where objects repeat
    found = [c for c in (Path(clips_dir) / f"{stem}.mp4", Path(clips_dir) / f"{rec.object}.mp4")
             if c.is_file()] if clips_dir else []
    clip = found[0] if found else None
    if clip is not None:
        parts.append(_video(beside(clip, pdir, fdir)))
    if rec.diagnosis:
        fig = ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in (rec.diagnosis.get("figure") or {}).items())
        parts.append(f"<p>diagnosis: <b>{html.escape(str(rec.diagnosis.get('class')))}</b>"
                     + (f" ({html.escape(fig)})" if fig else "") + "</p>")
    parts.append(exports_html(sdir / "study.json" if study_file is None else study_file, seq, pdir))
    return f"<div class=card id='rec-{html.escape(seq)}'>{''.join(parts)}</div>", plotted, clip is not None


def _page(study: StudyRecord, study_path: Path, pdir: Path, fdir: Path, cards: list[str], mont: str,
          recs: dict) -> str:
    """The whole HTML page (``pdir``: its folder, the base of its relative links; the study's
    CSV linked where it survives moving the folder, :func:`beside`)."""
    refused = set((study.counts or {}).get("refused_keys") or [])
    failed = "".join(f"<li>{'refused' if k in refused else 'failed'}: {html.escape(k)}: {html.escape(str(v))}</li>"
                     for k, v in (study.failed or {}).items())
    title = f"grasp-replay study: {study.dataset}"
    intent = {s: getattr(r, "intent", None) for s, r in recs.items()}
    rows = [dict(r, intent=intent.get(str(r.get("sequence")))) for r in study.rollouts]
    by_intent = (study.counts or {}).get("by_intent") or intent_counts(
        [r.to_dict() for r in recs.values() if isinstance(r, RolloutRecord)])
    csv_path = study_path.with_suffix(".csv")
    csv_link = (f" &middot; <a href='{html.escape(beside(csv_path, pdir, fdir))}'>study.csv</a>"
                if csv_path.is_file() else "")
    return f"""<!doctype html>
<html><head><meta charset=utf-8><title>{html.escape(title)}</title><style>{CSS}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(str(study_path))} &middot; config {html.escape(str(study.config_hash))} &middot; format version
{study.format_version}{csv_link}</p>
<h2>Summary</h2>{_summary_html(study, by_intent)}
{f"<h2>Refused or failed recordings</h2><ul id=failed>{failed}</ul>" if failed else ""}
<h2>Recordings</h2><p>Click a column header to sort. Fields: docs/results.md.</p>
{_table_html(rows)}
{gripper_section_for(study_path, study.rollouts)}{attribution_section_for(study_path)}
{refine_section_html(study)}
{oracle_section_html(study)}
{envelope_section_html(study, study_path)}
{mont}
<h2>Over time</h2>
<p>Object height above the support (contact run, and the contact ablation dashed), hand-object contacts and
wrist position error, with the protocol phases as bands.</p>
{''.join(cards)}
<h2>Config</h2><pre id=config>{html.escape(json.dumps(study.config, indent=1, sort_keys=True))}</pre>
<h2>Versions</h2><pre id=versions>{html.escape(json.dumps(study.versions, indent=1, sort_keys=True))}</pre>
<script>{SORT_JS}</script>
</body></html>
"""
