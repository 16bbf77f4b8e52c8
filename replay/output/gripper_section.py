"""The report section of the grasp-and-lift check (``gripper.json``, :mod:`replay.study.gripper_check`), beside the
hand replay's outcome of each object where the study's rows are given.
"""

from __future__ import annotations

import dataclasses
import html
import json
from dataclasses import dataclass, field
from pathlib import Path

from replay.protocol.gripper_lines import LINE_NAMES
from replay.results.json_record import JsonRecord, read_as
from replay.results.outcomes import words
from replay.results.study_rows import StudyRow
from replay.study.executor import where_run

VERDICT_CSS = {"pass": "#2e9e4f"}


@dataclass(frozen=True)
class GripperRow(JsonRecord):
    """An object's row of ``gripper.json`` (:func:`replay.study.gripper_check.object_row`): kg, N; ``lines``:
    ``{line: (result, figure)}``."""

    object: str | None = None
    recording: str | None = None
    mass_kg: float | None = None
    jaw_force_n: float | None = None
    verdict: str | None = None
    passed: bool | None = None
    lines: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d):
        got = super().from_dict(d)
        d = d if isinstance(d, dict) else {}
        return dataclasses.replace(got, lines={n: (d.get(f"{n}_result"), d.get(f"{n}_figure")) for n in LINE_NAMES})


@dataclass(frozen=True)
class GripperCheck(JsonRecord):
    """``gripper.json`` as the section shows it; wall s."""

    rows: list[GripperRow] = read_as(GripperRow.many)
    failed: dict = read_as(lambda d: d or {})
    config_hash: str | None = None
    wall_s: float | None = None
    workers: int | None = None


def _cell(v) -> str:
    if v is None:
        return "<td>-</td>"
    if isinstance(v, float):
        return f"<td>{v:.3g}</td>"
    return f"<td>{html.escape(str(v))}</td>"


def gripper_section_html(doc: dict, study_rows: list[StudyRow] | None = None) -> str:
    """HTML of a ``gripper.json`` ``doc``, with the hand replay's outcome per object from ``study_rows`` where given."""
    by_obj = {}
    for r in study_rows or []:
        by_obj.setdefault(str(r.object), f"{words(r.outcome)} ({r.diagnosis or '-'})")
    head = ["object", "recording", "mass kg", "jaw force N", "verdict", *LINE_NAMES]
    if study_rows is not None:
        head.append("hand replay")
    check = GripperCheck.from_dict(doc)
    rows = []
    for r in check.rows:
        colour = VERDICT_CSS.get(r.verdict, "#d2473a")
        cells = [
            _cell(r.object),
            _cell(r.recording),
            _cell(r.mass_kg),
            _cell(r.jaw_force_n),
            f"<td style='color:{colour}'><b>{html.escape(str(r.verdict))}</b></td>",
        ]
        for res, fig in r.lines.values():
            cells.append(_cell(None if res is None else (res if not fig else f"{res}: {fig}")))
        if study_rows is not None:
            cells.append(_cell(by_obj.get(str(r.object))))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    n_pass = sum(1 for r in check.rows if r.passed)
    failed = "".join(f"<li>{html.escape(k)}: {html.escape(str(v))}</li>" for k, v in check.failed.items())
    return (
        f"<h2>Grasp and lift (parallel-jaw check of each asset)</h2>"
        f"<p>{n_pass} of {len(check.rows)} objects pass all nine phases on at least one line "
        f"(config {html.escape(str(check.config_hash))}, {check.wall_s or 0:.0f} s "
        f"{where_run(check.workers)}). An object no line lifts is an asset problem (mass, friction, "
        f"collision parts), not the hand's.</p>"
        f"<table><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr>{''.join(rows)}</table>"
        + (f"<ul>{failed}</ul>" if failed else "")
    )


def gripper_section_for(study_path: str | Path, study_rows: list[StudyRow] | None = None) -> str:
    """The section of ``<study dir>/gripper/gripper.json``; ``""`` without one (unreadable: said in one line)."""
    path = Path(study_path).parent / "gripper" / "gripper.json"
    if not path.is_file():
        return ""
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        return f"<h2>Grasp and lift</h2><p>{html.escape(str(path))}: not readable ({html.escape(str(e))})</p>"
    return gripper_section_html(doc, study_rows)
