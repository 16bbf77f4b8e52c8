#!/usr/bin/env python
"""Write a study's report page: summary, a table that sorts and filters, a page per recording, config, versions.

    python scripts/report.py --study out/grab/study.json --out out/grab/report.html \
        [--montage renders/grab/montage.mp4] [--clips renders/grab/clips] [--exports [mjcf,usd,rrd]]

A static HTML page with each recording's page in ``<out stem>_files/``; it also rewrites ``study.csv`` beside the
study JSON. Exit status 1 also for a study of another format version.
"""

from __future__ import annotations

from pathlib import Path

from replay import console
from replay.cli import Parser
from replay.fileio import atomic_write_text, ensure_parent
from replay.output.report import build_report
from replay.results.files import read_study
from replay.study.summary import study_csvs


def write_exports(study_path: Path, study, formats: str) -> None:
    """Every recording's contact-run exports in ``formats`` (comma-separated), default folders."""
    from replay.errors import UsageError, did_you_mean
    from replay.output.export.run import FORMATS, export_rollout
    from replay.study.console import quiet_libraries

    fmts = [f.strip() for f in formats.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad:
        hint = "".join(did_you_mean(b, FORMATS) for b in bad)
        raise UsageError("--exports", f"{', '.join(bad)}: not one of {', '.join(FORMATS)}; {hint}".rstrip("; "))
    quiet_libraries()
    for row in study.rollouts:
        for fmt in fmts:
            r = export_rollout(study_path, str(row["sequence"]), fmt)
            console.out(f"export {fmt}: {r['out']}")


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", required=True, type=Path, help="study JSON written by scripts/run_study.py")
    ap.add_argument("--out", type=Path, default=None, help="HTML page (default: report.html beside the study)")
    ap.add_argument("--montage", type=Path, default=None, help="the study's montage (render_montage.py) to embed")
    ap.add_argument(
        "--clips",
        type=Path,
        default=None,
        help="folder of per-recording clips (render_montage.py --clips) to embed where present",
    )
    ap.add_argument(
        "--exports",
        nargs="?",
        const="mjcf,usd,rrd",
        default=None,
        metavar="FORMATS",
        help="first write every recording's exports (scripts/export_rollout.py; default all of "
        "mjcf,usd,rrd) into <study folder>/exports/, linked from its section",
    )
    a = ap.parse_args(argv)
    out = a.out or a.study.with_name("report.html")
    study = read_study(a.study)
    ensure_parent(out)  # an unwritable --out fails now, naming it, before any plot is drawn
    if a.exports:
        write_exports(a.study, study, a.exports)
    for suffix, text in study_csvs(study).items():
        atomic_write_text(a.study.with_suffix(f"{suffix}.csv"), text)
    n = build_report(a.study, out, montage=a.montage, clips_dir=a.clips)
    clips = f", {n['clips']} clip{'s' if n['clips'] != 1 else ''}" if n["clips"] or a.clips else ""
    console.out(
        f"wrote {out}: {n['rows']} recordings, {n['plots']} plots{clips}"
        f"{', the montage' if n['montage'] else ''}; table {a.study.with_suffix('.csv')}"
    )
    return 0
