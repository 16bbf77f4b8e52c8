"""The report section of ``run_study.py --envelope`` (:mod:`replay.study.envelope`): the headline
(robust lifts, fragile, robust failures) and a small grid per recording, one cell per physics
setting (lifted or not), for the lift protocol and the hug-oracle protocol where the study has them.

:func:`envelope_section_html` reads the headline from the study's ``counts`` and each recording's
``verdict_envelope`` from its rollout JSON (the rows' ``json``); an empty string for a study run
without ``--envelope``.
"""

from __future__ import annotations

import html
from pathlib import Path

from replay.results.convert import ResultsFormatError
from replay.results.files import read_rollout

_CELL = {True: ("#2a7", "&#10003;"), False: ("#c44", "&#215;")}


def _envelope_of(sdir: Path, row: dict) -> dict | None:
    try:
        return read_rollout(sdir / str(row.get("json"))).verdict_envelope
    except ResultsFormatError:
        return None


def _grid(label: str, env: dict, rows: list[dict], sdir: Path) -> str:
    names = list(env.get("settings") or [])
    head = "".join(f"<th style='writing-mode:vertical-rl'>{html.escape(n)}</th>" for n in names)
    body = []
    for row in rows:
        e = _envelope_of(sdir, row)
        if not e:
            continue
        cells = []
        for n, lifted, over, out in zip(
            e["settings"], e["lifted"], e.get("overrides") or [{}] * len(names), e.get("outcomes") or [""] * len(names)
        ):
            color, mark = _CELL[bool(lifted)]
            tip = html.escape(f"{n}: {out} {over}", quote=True)
            cells.append(f"<td title='{tip}' style='color:{color};text-align:center'>{mark}</td>")
        body.append(
            f"<tr><td>{html.escape(str(row.get('sequence')))}</td><td>{html.escape(e['class'])}</td>"
            f"<td>{e['fraction']:.2f}</td>{''.join(cells)}</tr>"
        )
    head_line = (
        f"{label}: robust lift {env.get('robust_lift')}, fragile {env.get('fragile')}, robust failure "
        f"{env.get('robust_failure')} of {env.get('recordings')} recordings ({len(names)} settings)"
    )
    return (
        f"<p id='envelope-{html.escape(label)}'><b>{html.escape(head_line)}</b></p><table class=envelope>"
        f"<tr><th>recording</th><th>class</th><th>fraction</th>{head}</tr>{''.join(body)}</table>"
    )


def envelope_section_html(study, study_path: str | Path) -> str:
    """HTML of the envelope section of a :class:`replay.results.records.StudyRecord` read from
    ``study_path`` (module doc); "" without an envelope."""
    sdir = Path(study_path).parent.resolve()
    c = study.counts or {}
    parts = []
    lift_env = c.get("envelope") if c.get("protocol", "lift") == "lift" else None  # the top level: the first protocol's
    for label, env, rows in (
        ("lift", lift_env, study.rollouts or []),
        ("hug-oracle", (c.get("hug-oracle") or {}).get("envelope"), getattr(study, "oracle_rollouts", None) or []),
    ):
        if env:
            parts.append(_grid(label, env, rows, sdir))
    if not parts:
        return ""
    return (
        "<h2>Verdict envelope</h2><p>Each recording replayed under the declared physics settings "
        "(replay.study.envelope.ENVELOPE; <code>default</code> is the study's own physics): &#10003; lifted, "
        "&#215; not; a cell's tooltip gives the outcome and the setting's overrides. robust lift: lifted "
        "under every setting; fragile: under some; robust failure: under none.</p>" + "".join(parts)
    )
