"""The bridge's Markdown table (``scripts/bridge.py``), generated from its JSON (:mod:`replay.study.bridge`)."""

from __future__ import annotations

from replay.output.p_lift_table import markdown_table
from replay.output.table_docs import Bridge
from replay.protocol.diagnosis import CLASSES


def bridge_markdown(doc: dict) -> str:
    """A Markdown table of the bridge result ``doc`` (diagnosis columns: :data:`replay.protocol.diagnosis.CLASSES`, then
    any other)."""
    rows = Bridge.from_dict(doc).rows
    other = sorted({c for r in rows for c in r.diagnosis if c not in CLASSES})
    classes = [c for c in CLASSES if c != "unstable"] + other
    head = ["path", "element", "value", "lifted", "unstable", *classes]
    rows = [
        [
            r.path,
            r.element,
            r.value,
            f"{r.lifted}/{r.of}",
            str(r.unstable),
            *[str(r.diagnosis.get(c, 0)) for c in classes],
        ]
        for r in rows
    ]
    return markdown_table(head, rows) + "\n"
