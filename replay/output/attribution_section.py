"""The report section of the attribution study (``<study dir>/attribution.json``, :mod:`replay.study.attribution`):
one row per factor: value, lifted of recordings, each diagnosis class, its source."""

from __future__ import annotations

import html
import json
from pathlib import Path

from replay.output.table_docs import Attribution
from replay.protocol.diagnosis import CLASSES


def attribution_section_html(doc: dict) -> str:
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{html.escape(str(c))}</td>"
            for c in [f.name, f.value, f"{f.lifted}/{f.of}", *(f.diagnosis.get(k, 0) for k in CLASSES), f.source]
        )
        + "</tr>"
        for f in Attribution.from_dict(doc).factors
    )
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["factor", "value", "lifted", *CLASSES, "source"])
    return (
        "<h2>Attribution: one factor at a time</h2><p>From today's protocol toward a HUG-style replay, on "
        "the same recordings (scripts/attribute.py); diagnosis classes as in the table above "
        "(replay.protocol.diagnosis).</p>"
        f"<table id=attribution><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def attribution_section_for(study_path: str | Path) -> str:
    """The section of ``attribution.json`` beside ``study_path``; ``""`` if none or unreadable."""
    p = Path(study_path).parent / "attribution.json"
    try:
        doc = json.loads(p.read_text())
        return attribution_section_html(doc) if isinstance(doc, dict) else ""
    except (OSError, ValueError, AttributeError, TypeError):
        return ""
