"""One recording's report page, ``<report stem>_files/<sequence with / as __>.html``, and its ``.png`` figure (object
height mm, contacts, wrist error mm, phases)."""

from __future__ import annotations

import html
import io
import os
import shutil
from pathlib import Path

import numpy as np

from replay.fileio import atomic_path, atomic_write_bytes, atomic_write_text
from replay.output.export_section import exports_html
from replay.output.report_table import INTERVAL, REASON, VERDICT, columns_for, href, shown
from replay.results.convert import ResultsFormatError
from replay.results.files import check_poses_version
from replay.results.records import Phase, RolloutRecord
from replay.results.study_rows import StudyRow
from replay.results.verdict_record import Diagnosis

#: phase band colours of the plots (light, so the lines stay readable)
PHASE_COLOURS = {
    Phase.SETTLE: "#eeeeee",
    Phase.APPROACH: "#dde8f6",
    Phase.LIFT: "#dff2e1",
    Phase.HOLD: "#fff3d6",
    Phase.SHAKE: "#f8dede",
    Phase.RECORDED: "#e9e2f4",
    Phase.RELEASE: "#e6e6f8",
}

PAGE_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}
img{display:block;border:1px solid #ddd}
"""


def page_name(sequence: str) -> str:
    return f"{sequence.replace('/', '__')}.html"


def _load_poses(path: Path) -> dict | None:
    """The poses npz (version checked), None if missing."""
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as z:
        check_poses_version(path, z)
        return {k: np.asarray(z[k]) for k in z.files}


def plot_rollout(rec: RolloutRecord, study_dir: Path, out_png: Path) -> bool:
    """Write the recording's figure; False (nothing written) without its poses npz. Raises ResultsFormatError."""
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
        ax_h.plot(
            abl["time"], (abl["body_pos"][:, ka, 2] - base) * 1000.0, color="#888888", ls="--", label="contact ablation"
        )
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
        ax_h.text(
            (t[a] + t[b - 1] + dt) / 2,
            1.02,
            p.name.lower(),
            transform=ax_h.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=7,
        )
    for ax in axes:
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{rec.sequence}: {rec.outcome}", fontsize=9, y=0.995)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write_bytes(out_png, buf.getvalue())
    return True


def beside(path: Path, pdir: Path, fdir: Path) -> str:
    """A link from ``pdir`` to ``path`` that survives moving the folder (outside: to a copy in ``fdir``)."""
    path = path.resolve()
    if path.is_relative_to(pdir):
        return _rel(path, pdir)
    dst = fdir / path.name
    st = path.stat()
    if not (dst.is_file() and dst.stat().st_size == st.st_size and dst.stat().st_mtime >= st.st_mtime):
        with atomic_path(dst, suffix=".tmp" + path.suffix) as tmp:
            shutil.copyfile(path, tmp)
    return _rel(dst, pdir)


def _rel(path: Path, page_dir: Path) -> str:
    return Path(os.path.relpath(path, page_dir)).as_posix()


def _fresh(png: Path, sources: list[Path]) -> bool:
    try:
        t = png.stat().st_mtime_ns
        return all(s.stat().st_mtime_ns <= t for s in sources)
    except OSError:
        return False


def write_recording_page(
    row: StudyRow,
    rec: RolloutRecord | ResultsFormatError,
    sdir: Path,
    *,
    fdir: Path,
    report: Path,
    clips_dir,
    study_file: Path,
    verdict: tuple[str, str] = ("", ""),
) -> tuple[bool, bool]:
    """Write one recording's page and figure into ``fdir``; returns (plotted, clip found). ``rec``: its rollout record
    or the error reading it; ``clips_dir``: ``<stem>.mp4`` or ``<object>.mp4`` renders, or None. ResultsFormatError:
    its npz is of another format version."""
    seq = row.name
    stem = seq.replace("/", "__")
    page = fdir / page_name(seq)
    fields = "".join(
        f"<tr><th>{html.escape(h)}</th><td>{html.escape(shown(row, k, scale=s, dec=d)[0])}</td></tr>"
        for h, k, s, d in columns_for([row])
        if k not in (VERDICT, INTERVAL, REASON)  # they lead the page
    )
    parts = [f"<p><a href='{href(_rel(report, fdir))}'>back to the study</a></p>"]
    plotted = clipped = False
    if isinstance(rec, ResultsFormatError):
        parts += [f"<h1>{html.escape(seq)}</h1>", f"<p>{html.escape(str(rec))}</p>"]
    else:
        parts.append(f"<h1>{html.escape(seq)} ({html.escape(str(rec.object))})</h1>{verdict[0]}")
        parts.append(f"<h2>Evidence</h2>{verdict[1]}<h3>The contact run</h3><table id=fields>{fields}</table>")
        png = fdir / f"{stem}.png"
        poses = (rec.poses, rec.ablation and rec.ablation.poses)
        sources = [sdir / str(row.json)] + [sdir / p for p in poses if p]
        plotted = _fresh(png, sources) or plot_rollout(rec, sdir, png)
        parts.append(
            f"<img alt='{html.escape(seq)} over time' width=512 src='{href(png.name)}'>"
            if plotted
            else "<p>no saved poses</p>"
        )
        parts.append(
            "<p>Object height above the support (contact run, and the contact ablation dashed), "
            "hand-object contacts and wrist position error, with the protocol phases as bands.</p>"
        )
        found = (
            [c for c in (Path(clips_dir) / f"{stem}.mp4", Path(clips_dir) / f"{rec.object}.mp4") if c.is_file()]
            if clips_dir
            else []
        )
        if found:  # render_montage.py --clips names a clip by its object; by sequence where objects repeat
            clipped = True
            parts.append(
                f"<video controls muted preload=metadata width=480 src='{href(beside(found[0], fdir, fdir))}'></video>"
            )
        if rec.diagnosis:
            diag = Diagnosis.of(rec.diagnosis)
            fig = ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in diag.figure.items())
            parts.append(
                f"<p>the contact run's diagnosis: <b>{html.escape(str(diag.cls))}</b>"
                + (f" ({html.escape(fig)})" if fig else "")
                + "</p>"
            )
        parts.append(exports_html(study_file, seq, fdir))
        rj = (sdir / str(row.json)).resolve()
        parts.append(
            f"<p>rollout: <a href='{href(_rel(rj, fdir))}'>{html.escape(str(row.json))}</a></p>"
            if rj.is_relative_to(report.parent.resolve())
            else f"<p>rollout: {html.escape(str(rj))}</p>"
        )
    atomic_write_text(
        page,
        f"<!doctype html>\n<html><head><meta charset=utf-8><title>{html.escape(seq)}</title>"
        f"<style>{PAGE_CSS}</style></head><body id='rec-{html.escape(seq)}'>{''.join(parts)}"
        "</body></html>\n",
    )
    return plotted, clipped
