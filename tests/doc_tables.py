"""The tables ``docs/results.md`` and ``docs/physics.md`` hold, made from the code: the results files' fields
(the records' field metadata) and every named physics' choices (the physics table). The tests check the pages
hold them (``tests/test_results.py``, ``tests/test_physics_authored.py``); print one to regenerate its page:

    PYTHONPATH=. python tests/doc_tables.py results|physics
"""

from __future__ import annotations

import dataclasses
import sys

from replay.results.physics_table import PHYSICS
from replay.results.records import POSES_KEYS, Phase, RolloutRecord, StudyRecord
from replay.results.sampled_fields import sampled_last


def fields_markdown() -> str:
    """The field tables of ``docs/results.md`` (one row per field: name, unit/frame, meaning)."""
    out = []
    for title, cls in (
        ("Study JSON (`study.json`, `StudyRecord`)", StudyRecord),
        ("Rollout JSON (`<sequence>.json`, `RolloutRecord`)", RolloutRecord),
    ):
        out += [f"### {title}", "", "| field | unit / frame | meaning |", "|---|---|---|"]
        for f in sampled_last(dataclasses.fields(cls)):
            name = "ablation (true)" if f.name == "ablation_flag" else f.name
            out.append(f"| `{name}` | {f.metadata.get('unit', '')} | {f.metadata.get('doc', '')} |")
        out.append("")
    out += [
        "### Poses npz (`<sequence>.npz`, `<sequence>.ablation.npz`)",
        "",
        "| key | shape | unit / frame |",
        "|---|---|---|",
    ]
    out += [f"| `{k}` | {s} | {u} |" for k, s, u in POSES_KEYS]
    out += ["", "### Phase codes (`Phase`)", "", "| code | phase |", "|---|---|"]
    out += [f"| {p.value} | {p.name.lower()} |" for p in Phase]
    return "\n".join(out) + "\n"


def _shown(value) -> str:
    """``repr(value)`` with floats to 6 significant digits (1/240 s as 0.00416667), inside dicts and lists too."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_shown(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_shown(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


def physics_markdown() -> str:
    """The table of every named physics' choices as Markdown: one row per choice, its value, source and why
    under ``authored`` and under ``replay``."""
    a, r = PHYSICS["authored"], PHYSICS["replay"]
    lines = ["| choice | authored | source | replay | source, why |", "|---|---|---|---|---|"]
    for k in a:
        same = a[k].value == r[k].value
        rv = "same" if same else f"`{_shown(r[k].value)}`"
        lines.append(
            f"| `{k}` | `{_shown(a[k].value)}` | {a[k].source}; {a[k].why} | {rv} | "
            f"{'' if same else r[k].source + '; ' + r[k].why} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print({"results": fields_markdown, "physics": physics_markdown}[sys.argv[1]](), end="")
