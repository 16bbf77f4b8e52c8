"""The report's per-recording exports line (:mod:`replay.output.export`): a link to each export
of the recording's contact run that exists (``<study folder>/exports/<sequence>/``), and beside
each missing one the command that makes it (or ``scripts/report.py --exports``)."""

from __future__ import annotations

import html
import os
import shlex
from pathlib import Path

from replay.output.export.run import FORMATS, default_out

#: the file of each format's export a link points to, and what opens it
TARGETS = {
    "mjcf": ("replay_export.py", "plain MuJoCo: python replay_export.py"),
    "usd": ("rollout.usd", "USD stage: usdview, Blender, Omniverse"),
    "rrd": ("rollout.rrd", "Rerun: rerun rollout.rrd"),
}


def export_command(study_path: Path, sequence: str, fmt: str) -> str:
    """The shell command that writes one export (:mod:`scripts.export_rollout`), every argument
    shell-quoted (``shlex.join``): a name with ``;`` or ``$(...)`` pasted into a shell stays one argument."""
    return shlex.join(
        ["python", "scripts/export_rollout.py", "--study", str(study_path), "--sequence", sequence, "--format", fmt]
    )


def exports_html(study_path: str | Path, sequence: str, pdir: Path) -> str:
    """``<p class=exports>`` of one recording: each format linked (relative to the page's folder
    ``pdir``) where its export exists, else its command."""
    study_path = Path(study_path)
    out = default_out(study_path, sequence)
    items = []
    for fmt in FORMATS:
        name, what = TARGETS[fmt]
        target = out / name
        if target.is_file():
            rel = os.path.relpath(target.resolve(), pdir.resolve())
            items.append(f"<a href='{html.escape(rel)}' title='{html.escape(what)}'>{fmt}</a>")
        else:
            items.append(f"{fmt}: <code>{html.escape(export_command(study_path, sequence, fmt))}</code>")
    return "<p class=exports>exports: " + " · ".join(items) + "</p>"
