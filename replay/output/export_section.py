"""The report's per-recording exports line: a link to each existing export (``<study folder>/exports/<sequence>/``),
else the command that makes it."""

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
    """The shell command that writes one export, every argument shell-quoted (a name with ``;`` stays one)."""
    return shlex.join(
        ["python", "scripts/export_rollout.py", "--study", str(study_path), "--sequence", sequence, "--format", fmt]
    )


def exports_html(study_path: str | Path, sequence: str, pdir: Path) -> str:
    """``<p class=exports>`` of one recording, links relative to ``pdir``."""
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
