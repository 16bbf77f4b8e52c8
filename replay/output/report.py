"""A study's report: one static HTML page (no server, no network) with the summary, a table of
every recording that sorts and filters (:mod:`replay.output.report_table`), the montage and its
selection rule, and the study's config and versions; each recording's figure over time, clip,
diagnosis and exports on a page of its own (:mod:`replay.output.report_recording`), so the main
page stays small at thousands of recordings.

Layout written by :func:`build_report` for ``--out out/grab/report.html``::

    out/grab/report.html                the page (inline CSS and JS: sort, filter)
    out/grab/report_files/<seq>.html    one page per recording, linked from the table
    out/grab/report_files/<seq>.png     its figure (matplotlib, Agg; kept while its inputs are unchanged)

Clips are embedded with ``<video>`` and paths relative to the page (copied beside it when they
are elsewhere): the montage on the main page, ``<clips>/<sequence>.mp4`` on a recording's page.
"""

from __future__ import annotations

import html
import json
import re
import shlex
from pathlib import Path

from replay.checks.causes import cause_counts_text
from replay.fileio import atomic_write_text
from replay.output.attribution_section import attribution_section_for
from replay.output.envelope_section import envelope_section_html
from replay.output.gripper_section import gripper_section_for
from replay.output.oracle_section import oracle_section_html
from replay.output.p_lift_section import (
    conditions_of,
    discrimination_html,
    p_lift_of,
    p_lift_summary_html,
    verdicts_html,
)
from replay.output.refine_section import refine_section_html
from replay.output.report_recording import beside, page_name, write_recording_page
from replay.output.report_table import COLUMNS, TABLE_JS, table_html  # noqa: F401  (COLUMNS: the table's, for callers)
from replay.output.verdicts_section import pairs_summary_html, recording_pairs_html, study_pairs
from replay.protocol.intent_counts import INTENT_COUNTS, LIFTS, group_words, intent_counts, intent_groups
from replay.protocol.protocols.base import all_protocols, primary_protocol
from replay.results.convert import ResultsFormatError
from replay.results.files import read_rollout, read_study
from replay.results.records import RolloutRecord, StudyRecord

#: recordings a montage's note names one by one when it has no tile for them (more: counted)
MAX_NAMED_MISSING = 20

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
td:nth-child(-n+5),th{text-align:left}
th{background:#f0f0f0;cursor:pointer;user-select:none}
#rows tr[hidden]{display:none}
#filters select{margin-right:1em}
#filters label{white-space:nowrap;display:inline-block;margin-bottom:3px}
video.montage{display:block;max-width:100%;height:auto}
pre{background:#f6f6f6;padding:8px;font-size:12px;max-height:30em;overflow:auto}
.k{font-weight:bold}
"""


def _summary_html(study: StudyRecord, by_intent: dict) -> str:
    """The study's counts, led by the lifts' (``by_intent``: :func:`replay.protocol.intent_counts.intent_counts`,
    grouped by :func:`replay.protocol.intent_counts.intent_groups`): the other intents and the recordings with no
    intent named on lines of their own, never added to the lifts."""
    c = study.counts or {}
    lift = primary_protocol().name
    if c.get("protocol", lift) != lift or (not c.get("rollouts") and lift not in (study.protocols or [lift])):
        return (
            f"<p id=summary>No lift-protocol rollouts in this study (protocols: "
            f"{html.escape(', '.join(study.protocols))}): their results are in the sections below.</p>"
        )
    diag = ", ".join(f"{html.escape(k)} {v}" for k, v in (c.get("diagnosis") or {}).items() if v) or "-"
    refused = int(c.get("refused") or 0)
    groups = intent_groups(by_intent)
    lead = next(iter(groups), LIFTS)
    g = groups.get(lead) or {k: c.get(k) for k in INTENT_COUNTS}
    items = [
        (group_words(lead, int(g.get("rollouts") or 0)), "replayed"),
        ("lifted", g.get("lifted")),
        ("held through the shake", g.get("shake_held")),
        ("not lifted", g.get("not_lifted")),
        ("unstable", g.get("unstable")),
    ]
    items += [
        (
            group_words(k, o["rollouts"]),
            f"lifted {o['lifted']} (not a lift: the protocol replaced the motion after the grasp; counted apart)",
        )
        for k, o in groups.items()
        if k != lead
    ]
    we = {
        k: None if c.get(k) is None else f"{c[k]:.1f}"
        for k in ("median_wrist_err_mm", "median_wrist_err_peak_mm", "max_wrist_err_peak_mm")
    }
    items += [
        ("refused (bad input)", refused),
        ("failed", (c.get("failed_inputs") or 0) - refused),
        ("input causes (refused, flagged)", cause_counts_text(c.get("causes")) or "-"),
        ("contact ablation clean", f"{c.get('ablation_clean')} of {c.get('ablation_run')}"),
        ("ablation lifted", c.get("ablation_lifted")),
        ("diagnosis", diag),
        ("wrist tracking error mm, median of the recordings' medians", we["median_wrist_err_mm"]),
        (
            "wrist tracking error mm, peak over the lift and hold: median / largest",
            f"{we['median_wrist_err_peak_mm'] or '-'} / {we['max_wrist_err_peak_mm'] or '-'}",
        ),
        (
            f"contact agreement with the recording, median precision / recall (bones), over the "
            f"{c.get('contact_agreement_n', 0)} of {c.get('contact_agreement_of', c.get('rollouts'))} recordings with "
            "recorded and simulated contact",
            _agreement_medians(c),
        ),
        ("wall time s", None if c.get("wall_s") is None else f"{c['wall_s']:.1f}"),
    ]
    lis = "".join(
        f"<li><span class=k>{html.escape(k)}</span>: {v if k == 'diagnosis' else html.escape(str(v))}</li>"
        for k, v in items
    )
    head = "".join(
        f"<th>{h}</th>" for h in ("", "recordings", "lifted", "held through the shake", "not lifted", "unstable")
    )
    body = "".join(
        f"<tr><td>{html.escape(k)}</td>" + "".join(f"<td>{g[f]}</td>" for f in INTENT_COUNTS) + "</tr>"
        for k, g in groups.items()
    )
    per = "".join(
        f"{html.escape(k)} {v['lifted']}/{v['rollouts']}" + (", " if n < len(by_intent) - 1 else "")
        for n, (k, v) in enumerate(by_intent.items())
    )
    table = (
        (
            f"<table id=by-intent><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<p>lifted per intent: {per}</p>"
        )
        if groups
        else ""
    )
    return f"<ul id=summary>{lis}</ul>{table}"


def _agreement_medians(c: dict) -> str:
    """The medians (:func:`replay.protocol.protocols.counting.agreement_medians`), and what the others lacked."""
    med = " / ".join(
        "-" if c.get(f"median_contact_agreement_{k}") is None else f"{c[f'median_contact_agreement_{k}']:.2f}"
        for k in ("precision", "recall")
    )
    if c.get("contact_agreement_of") is None:  # a study written before the counts were kept
        return med
    return (
        f"{med} (left out: {c.get('contact_agreement_no_simulated', 0)} with no bone carrying force, "
        f"{c.get('contact_agreement_no_recorded', 0)} with no recorded contact)"
    )


def build_report(
    study_path: str | Path, out: str | Path, montage: str | Path | None = None, clips_dir: str | Path | None = None
) -> dict:
    """Write the report page, one page per recording and their plots; returns ``{"rows", "plots",
    "clips", "montage"}``: the counts of recordings, plots and per-recording clips embedded, and
    whether the montage is.

    Args:
        study_path: the study JSON (:func:`replay.results.files.read_study`).
        out: the HTML file; the recordings' pages and plots go to ``<out stem>_files/``.
        montage: the study's montage video, embedded if it exists.
        clips_dir: folder of per-recording renders ``<sequence with / as __>.mp4``, embedded where present.

    Raises:
        ResultsFormatError: a study, rollout or npz file of another format version.
    """
    study_path, out = Path(study_path), Path(out)
    study = read_study(study_path)
    sdir, pdir = study_path.parent.resolve(), out.parent.resolve()
    fdir = pdir / f"{out.stem}_files"
    fdir.mkdir(parents=True, exist_ok=True)
    recs = {str(row.get("sequence")): _read(sdir, row) for row in study.rollouts}
    rows = [_with_record(row, recs[str(row.get("sequence"))]) for row in study.rollouts]
    n_plots = n_clips = 0
    lift = primary_protocol().name
    side = {  # the other sampled protocols' p_lift per recording (the hug-oracle's)
        p.name: {str(r.get("sequence")): _row_p_lift(sdir, r) for r in study.rows_of(p.rows_field)}
        for p in all_protocols()
        if p.sampled and not p.primary
    }
    intent = {str(r.get("sequence")): r.get("intent") for r in rows}
    side_rows = {
        n: [{"sequence": k, "intent": intent.get(k), "p_lift": v} for k, v in by.items() if v] for n, by in side.items()
    }
    conds = conditions_of(rows + [r for rs in side_rows.values() for r in rs], study)
    phys = (study.config or {}).get("physics")
    pairs = study_pairs(study, rows, side)  # replay.output.verdicts_section: every (protocol, physics)
    for row in rows:
        seq = str(row.get("sequence"))
        verdicts = recording_pairs_html(study, pairs, seq) + verdicts_html(
            {lift: p_lift_of(row), **{n: by.get(seq) for n, by in side.items()}}, phys, conds
        )
        plotted, clipped = write_recording_page(
            row, recs[seq], sdir, fdir, out.resolve(), clips_dir, study_path, verdicts
        )
        n_plots, n_clips = n_plots + plotted, n_clips + clipped
    mont = _montage_html(Path(montage), study, pdir, fdir) if montage is not None and Path(montage).is_file() else ""
    link = lambda r: f"{fdir.name}/{page_name(str(r.get('sequence')))}"  # noqa: E731
    atomic_write_text(
        out, _page(study, study_path, pdir, fdir, rows, mont, recs, link, side_rows, pairs_summary_html(study, pairs))
    )
    return {"rows": len(study.rollouts), "plots": n_plots, "clips": n_clips, "montage": bool(mont)}


def _with_record(row: dict, rec: RolloutRecord | ResultsFormatError) -> dict:
    """A study row with what the table shows from its rollout record: the intent, and the
    verdict envelope and ``p_lift`` where the record has them and the row does not."""
    if not isinstance(rec, RolloutRecord):
        return dict(row, intent=None)
    env = row.get("verdict_envelope")
    if env is None:
        env = getattr(rec, "verdict_envelope", None) or rec.extra.get("verdict_envelope")
    more = {"verdict_envelope": env} if env is not None else {}
    if p_lift_of(row) is None and p_lift_of(rec) is not None:
        more["p_lift"] = p_lift_of(rec)
    return dict(row, intent=getattr(rec, "intent", None), **more)


def _row_p_lift(sdir: Path, row: dict) -> dict | None:
    """A row's ``p_lift``: the row's, else its rollout record's; None where neither has one."""
    if p_lift_of(row) is not None:
        return p_lift_of(row)
    rec = _read(sdir, row)
    return p_lift_of(rec) if isinstance(rec, RolloutRecord) else None


def _read(sdir: Path, row: dict) -> RolloutRecord | ResultsFormatError:
    """A row's rollout record, or the error that says why it cannot be read."""
    try:
        return read_rollout(sdir / str(row.get("json")))
    except ResultsFormatError as e:
        return e


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
    rule = f" Selection: {html.escape(str(meta['rule']))}" if meta.get("rule") else ""
    if shown is None:
        note = "<p>(no record of its tiles beside it: montage.mp4.json)</p>"
    else:
        have = set(shown)
        missing = [str(r.get("sequence")) for r in study.rollouts if str(r.get("sequence")) not in have]
        named = ", ".join(missing[:MAX_NAMED_MISSING]) + (
            f" and {len(missing) - MAX_NAMED_MISSING} more" if len(missing) > MAX_NAMED_MISSING else ""
        )
        note = (
            f"<p id=montage-tiles>{len(shown)} tiles, one per recording.{rule}</p>"
            if not missing
            else f"<p id=montage-tiles>{len(shown)} tiles; no tile for {len(missing)} recording(s): "
            f"{html.escape(named)} ("
            + ("the montage's selection; " if rule else "")
            + f"render_montage.py --max-clips, --objects, or a montage older than the study).{rule}</p>"
        )
    src = html.escape(beside(montage, pdir, fdir))
    made = html.escape(
        str(montage.resolve())
    )  # the montage as rendered (with its record beside it): what a refresh embeds
    return (
        f"<h2>Montage</h2>{note}<video class=montage controls muted preload=metadata{width} "
        f"src='{src}' data-montage='{made}'></video>"
    )


def embedded_montage(page: Path) -> Path | None:
    """The montage a report page was made with (its ``data-montage``: the rendered file, absolute), where
    it still exists, else None: what :func:`refresh_report` embeds again."""
    try:
        m = re.search(r"data-montage='([^']+)'", page.read_text())
    except OSError:
        return None
    path = Path(html.unescape(m.group(1))) if m else None
    return path if path is not None and path.is_file() else None


def refresh_report(study_path: Path) -> str | None:
    """Remake the report page beside ``study_path`` (``report.html``) where one exists, with the montage it
    embeds (:func:`embedded_montage`); returns the line that says so (None where there is no page).
    A study it cannot read leaves the page as it was, said stale with the command that remakes it."""
    page = Path(study_path).with_name("report.html")
    if not page.is_file():
        return None
    montage = embedded_montage(page)
    try:
        build_report(study_path, page, montage=montage)
    except (ResultsFormatError, OSError) as e:
        cmd = ["python", "scripts/report.py", "--study", str(study_path), "--out", str(page)]
        return f"report: {page} is stale ({str(e).splitlines()[0]}); remake it with " + shlex.join(
            cmd + (["--montage", str(montage)] if montage else [])
        )
    return f"report: refreshed {page}" + (f" (montage {montage} as before)" if montage else "")


def _page(
    study: StudyRecord,
    study_path: Path,
    pdir: Path,
    fdir: Path,
    rows: list[dict],
    mont: str,
    recs: dict,
    link,
    side_rows: dict[str, list[dict]] | None = None,
    pairs: str = "",
) -> str:
    """The whole HTML page (``pdir``: its folder, the base of its relative links; the study's
    CSV linked where it survives moving the folder, :func:`beside`; ``link(row)``: a recording's page;
    ``side_rows``: ``{protocol: rows with a p_lift}`` of the other sampled protocols (the hug-oracle), for the
    sampled verdict's counts; ``pairs``: the
    verdicts side by side, :func:`replay.output.verdicts_section.pairs_summary_html`)."""
    refused = set((study.counts or {}).get("refused_keys") or [])
    failed = "".join(
        f"<li>{'refused' if k in refused else 'failed'}: {html.escape(k)}: {html.escape(str(v))}</li>"
        for k, v in (study.failed or {}).items()
    )
    title = f"grasp-replay study: {study.dataset}"
    by_intent = (study.counts or {}).get("by_intent") or intent_counts(
        [r for r in recs.values() if isinstance(r, RolloutRecord)]
    )
    csv_path = study_path.with_suffix(".csv")
    csv_link = (
        f" &middot; <a href='{html.escape(beside(csv_path, pdir, fdir))}'>study.csv</a>" if csv_path.is_file() else ""
    )
    return f"""<!doctype html>
<html><head><meta charset=utf-8><title>{html.escape(title)}</title><style>{CSS}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(str(study_path))} &middot; config {html.escape(str(study.config_hash))} &middot; format version
{study.format_version}{csv_link}</p>
<h2>Summary</h2>{p_lift_summary_html(rows, study, side_rows)}{_summary_html(study, by_intent)}
{pairs}
{f"<h2>Refused or failed recordings</h2><ul id=failed>{failed}</ul>" if failed else ""}
<h2>Recordings</h2><p>Click a column header to sort; choose a value to show only those rows. A recording's
name opens its page: its figure over time (object height, contacts, wrist error, phases), clip, diagnosis and
exports. Fields: docs/results.md.</p>
{table_html(rows, link)}
{gripper_section_for(study_path, study.rollouts)}{attribution_section_for(study_path)}
{refine_section_html(study)}
{oracle_section_html(study)}
{discrimination_html(study)}
{envelope_section_html(study, study_path)}
{mont}
<h2>Config</h2><pre id=config>{html.escape(json.dumps(study.config, indent=1, sort_keys=True))}</pre>
<h2>Versions</h2><pre id=versions>{html.escape(json.dumps(study.versions, indent=1, sort_keys=True))}</pre>
<script>{TABLE_JS}</script>
</body></html>
"""
