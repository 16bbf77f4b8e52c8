"""A study's report: one static HTML page (no server, no network) with the summary, a sortable table of every
recording, the montage, config and versions; each recording's own page in ``<out stem>_files/``."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import shlex
from pathlib import Path

from replay.checks.causes import cause_counts_text
from replay.fileio import atomic_write_text
from replay.output.attribution_section import attribution_section_for
from replay.output.gripper_section import gripper_section_for
from replay.output.oracle_section import oracle_section_html
from replay.output.p_lift_section import condition_counts_html, conditions_html, conditions_of, discrimination_html
from replay.output.p_lift_table import num
from replay.output.refine_section import refine_section_html
from replay.output.report_recording import beside, page_name, write_recording_page
from replay.output.report_table import TABLE_JS, table_html
from replay.output.verdict_section import (
    cross_check_summary_html,
    recording_checks_html,
    recording_verdict_html,
    samples_html,
    verdict_summary_html,
)
from replay.protocol.intent_counts import intent_counts, intent_groups
from replay.protocol.protocols.base import all_protocols
from replay.protocol.verdict import words
from replay.results.convert import ResultsFormatError
from replay.results.files import read_rollout, read_study
from replay.results.records import RolloutRecord, StudyRecord
from replay.results.study_counts import Counts, GroupCount
from replay.results.study_rows import StudyRow, study_rows
from replay.results.study_settings import judged_physics
from replay.study.cross_checks import recompute_verdicts
from replay.study.end_table import failure_lines
from replay.study.verdicts import lead_protocol

#: recordings a montage's note names one by one when it has no tile for them (more: counted)
MAX_NAMED_MISSING = 20

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
td:nth-child(-n+5),th{text-align:left}
#rows td:nth-child(3){white-space:nowrap}
#rows td:nth-child(4){min-width:22em}
.note{font-size:13px;color:#555}
th{background:#f0f0f0;cursor:pointer;user-select:none}
#rows tr[hidden]{display:none}
#filters select{margin-right:1em}
#filters label{white-space:nowrap;display:inline-block;margin-bottom:3px}
video.montage{display:block;max-width:100%;height:auto}
pre{background:#f6f6f6;padding:8px;font-size:12px;max-height:30em;overflow:auto}
.k{font-weight:bold}
"""


def _summary_html(study: StudyRecord, c: Counts, recs: dict) -> str:
    """The contact run's counts: the lifts', then the other intents' and no-intent recordings on lines of their own."""
    lead = lead_protocol(study.protocols)
    if not lead.judged_on_lift or lead.name not in (study.protocols or [lead.name]):
        return (
            f"<p id=summary>No lift-protocol rollouts in this study (protocols: "
            f"{html.escape(', '.join(study.protocols))}): their results are in the sections below.</p>"
        )
    lc = c.of(lead.name) or c
    by_intent = lc.by_intent or intent_counts([r for r in recs.values() if isinstance(r, RolloutRecord)])
    groups = {k: GroupCount.of(v) for k, v in intent_groups(by_intent).items()}
    refused = int(c.refused or 0)

    items = [
        ("refused (bad input)", refused),
        ("failed", (lc.failed_inputs or 0) - refused),
        ("input causes (refused, flagged)", cause_counts_text(lc.causes) or "-"),
        ("contact ablation clean", f"{lc.ablation_clean or 0} of {lc.ablation_run or 0}"),
        ("ablation lifted", lc.ablation_lifted),
        ("diagnosis of the contact run", ", ".join(f"{words(k)} {v}" for k, v in (lc.diagnosis or {}).items() if v)),
        ("wrist tracking error mm, median of the recordings' medians", num(lc.median_wrist_err_mm, ".1f")),
        (
            "wrist tracking error mm, peak over the lift and hold: median / largest",
            f"{num(lc.median_wrist_err_peak_mm, '.1f')} / {num(lc.max_wrist_err_peak_mm, '.1f')}",
        ),
        (
            f"contact agreement with the recording, median precision / recall (bones), over the "
            f"{lc.contact_agreement_n or 0} of {lc.contact_agreement_of or lc.rollouts} recordings with recorded and "
            "simulated contact",
            _agreement_medians(lc),
        ),
        ("wall time s", num(c.wall_s, ".1f")),
    ]
    lis = "".join(f"<li><span class=k>{html.escape(k)}</span>: {html.escape(str(v or '-'))}</li>" for k, v in items)
    shake = ("held through the shake",) if lead.shakes else ()  # the hug-oracle neither shakes nor releases
    head = "".join(f"<th>{h}</th>" for h in ("", "recordings", "lifted", *shake, "not lifted", "unstable"))
    body = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{g.rollouts}</td><td>{g.lifted}</td>"
        + (f"<td>{g.shake_held}</td>" if shake else "")
        + f"<td>{g.not_lifted}</td><td>{g.unstable}</td></tr>"
        for k, g in groups.items()
    )
    table = f"<table id=by-intent><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>" if groups else ""
    return (
        "<h3>The contact run</h3><p>One run per recording at the study's physics, with its contact ablation: a "
        f"cross-check of the verdicts above, and what the recordings' pages plot.</p>{table}<ul id=summary>{lis}</ul>"
    )


def _agreement_medians(c: Counts) -> str:
    """The medians (:func:`replay.protocol.protocols.counting.agreement_medians`), and what the others lacked."""
    med = f"{num(c.median_contact_agreement_precision)} / {num(c.median_contact_agreement_recall)}"
    if c.contact_agreement_of is None:  # a study written before the counts were kept
        return med
    return (
        f"{med} (left out: {c.contact_agreement_no_simulated or 0} with no bone carrying force, "
        f"{c.contact_agreement_no_recorded or 0} with no recorded contact)"
    )


def build_report(
    study_path: str | Path, out: str | Path, montage: str | Path | None = None, *, clips_dir: str | Path | None = None
) -> dict:
    """Write the report page ``out`` and a page and plot per recording (clips ``<sequence with / as __>.mp4``); returns
    ``{"rows", "plots", "clips", "montage"}``. ResultsFormatError: a file of another format version."""
    study_path, out = Path(study_path), Path(out)
    study = read_study(study_path)
    if not study.judge and not any(isinstance(r, dict) and "verdict" in r for r in study.rollouts):
        recompute_verdicts(study, study_path.parent)  # a study before issue 56: its verdicts from its records
    sdir, pdir = study_path.parent.resolve(), out.parent.resolve()
    fdir = pdir / f"{out.stem}_files"
    fdir.mkdir(parents=True, exist_ok=True)
    lead = lead_protocol(study.protocols)
    rows = study_rows(study.rows_of(lead.rows_field))
    recs = {r.name: _read(sdir, r) for r in rows}
    rows = [_with_record(r, recs[r.name]) for r in rows]
    side = {  # the other sampled protocols' rows (the hug-oracle's), their p_lift from their records where missing
        p.name: [_with_record(r, _read(sdir, r)) for r in study_rows(study.rows_of(p.rows_field))]
        for p in all_protocols()
        if p.sampled and p is not lead
    }
    conds = conditions_of(rows + [r for rs in side.values() for r in rs], study)
    phys = str(judged_physics(study))
    n_plots = n_clips = 0
    for row in rows:
        by_proto = {
            lead.name: row.p_lift,
            **{n: next((r.p_lift for r in rs if r.name == row.name), {}) for n, rs in side.items()},
        }
        head = recording_verdict_html(row, study) + recording_checks_html(row)
        evidence = samples_html(recs[row.name], row.verdict.condition if row.verdict else None)
        evidence += conditions_html(by_proto, phys, conds)
        plotted, clipped = write_recording_page(
            row,
            recs[row.name],
            sdir,
            fdir=fdir,
            report=out.resolve(),
            clips_dir=clips_dir,
            study_file=study_path,
            verdict=(head, evidence),
        )
        n_plots, n_clips = n_plots + plotted, n_clips + clipped
    mont = _montage_html(Path(montage), rows, pdir, fdir) if montage is not None and Path(montage).is_file() else ""
    link = lambda r: f"{fdir.name}/{page_name(r.name)}"  # noqa: E731
    atomic_write_text(out, _page(study, study_path, pdir, fdir, rows, mont, recs, link, side))
    return {"rows": len(rows), "plots": n_plots, "clips": n_clips, "montage": bool(mont)}


def _with_record(row: StudyRow, rec: RolloutRecord | ResultsFormatError) -> StudyRow:
    """A study row with what the table shows from its rollout record: the intent, and ``p_lift`` where the record
    has it and the row does not."""
    if not isinstance(rec, RolloutRecord):
        return dataclasses.replace(row, intent=None)
    return dataclasses.replace(row, intent=rec.intent, p_lift=row.p_lift or rec.sampled.entries())


def _read(sdir: Path, row: StudyRow) -> RolloutRecord | ResultsFormatError:
    try:
        return read_rollout(sdir / str(row.json))
    except ResultsFormatError as e:
        return e


def _montage_html(montage: Path, rows: list[StudyRow], pdir: Path, fdir: Path) -> str:
    """The montage (copied beside the page when elsewhere) and the recordings it has no tile for
    (``montage.mp4.json``)."""
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
        missing = [r.name for r in rows if r.name not in have]
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
    # the montage as rendered (with its record beside it): what a refresh embeds
    made = html.escape(str(montage.resolve()))
    return (
        f"<h2>Montage</h2>{note}<video class=montage controls muted preload=metadata{width} "
        f"src='{src}' data-montage='{made}'></video>"
    )


def embedded_montage(page: Path) -> Path | None:
    """The montage file a report page embeds (its ``data-montage``) where it still exists, else None."""
    try:
        m = re.search(r"data-montage='([^']+)'", page.read_text())
    except OSError:
        return None
    path = Path(html.unescape(m.group(1))) if m else None
    return path if path is not None and path.is_file() else None


def refresh_report(study_path: Path) -> str | None:
    """Remake ``report.html`` beside ``study_path`` where one exists; the line that says so (None: no page). An
    unreadable study leaves the page, said stale."""
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
    rows: list[StudyRow],
    mont: str,
    recs: dict,
    link,
    side_rows: dict[str, list[StudyRow]],
) -> str:
    """The HTML page in ``pdir``; ``link(row)`` a recording's page, ``side_rows`` ``{protocol: rows}`` of the other
    sampled protocols."""
    title = f"grasp-replay study: {study.dataset}"
    c = Counts.from_dict(study.counts)
    failed = "".join(f"<li>{html.escape(line)}</li>" for line in failure_lines(study))
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
<h2>Verdicts</h2>{verdict_summary_html(study, c)}
{cross_check_summary_html(c, study)}
{f"<h2>Refused or failed recordings</h2><ul id=failed>{failed}</ul>" if failed else ""}
<h2>Recordings</h2><p>Each led by its verdict, p_lift with its 95 % interval and the reason. Click a column header to
sort; choose a value to show only those rows. A recording's name opens its page: its verdict and cross-checks, then
the evidence: its samples, p_lift per condition, its figure over time (object height, contacts, wrist error, phases),
clip, diagnosis and exports. Fields: docs/results.md.</p>
{table_html(rows, link)}
<h2>Detail</h2>{_summary_html(study, c, recs)}{condition_counts_html(rows, study, side_rows)}
{gripper_section_for(study_path, study_rows(study.rollouts))}{attribution_section_for(study_path)}
{refine_section_html(study)}
{oracle_section_html(study)}
{discrimination_html(study)}
{mont}
<h2>Config</h2><pre id=config>{html.escape(json.dumps(study.config, indent=1, sort_keys=True))}</pre>
<h2>Versions</h2><pre id=versions>{html.escape(json.dumps(study.versions, indent=1, sort_keys=True))}</pre>
<script>{TABLE_JS}</script>
</body></html>
"""
