"""The tables ``docs/results.md`` and ``docs/physics.md`` hold, made from the code: the results files' fields
(the records' field metadata) and every named physics' choices (the physics table). The tests check the pages
hold them (``tests/test_results.py``, ``tests/test_physics_authored.py``); print one to regenerate its page:

    PYTHONPATH=. python tests/doc_tables.py results|physics
"""

from __future__ import annotations

import dataclasses
import sys

from replay.results.convert import PARTS
from replay.results.physics_table import PHYSICS
from replay.results.records import POSES_KEYS, Phase, RolloutRecord, StudyRecord
from replay.results.rollout_parts import RESULT_TYPES
from replay.results.sampled_fields import sampled_last


def _table(title: str, fields) -> list[str]:
    out = [f"### {title}", "", "| field | unit / frame | meaning |", "|---|---|---|"]
    out += [f"| `{f.name}` | {f.metadata.get('unit', '')} | {f.metadata.get('doc', '')} |" for f in fields]
    return out + [""]


def fields_markdown() -> str:
    """The field tables of ``docs/results.md`` (one row per field: name, unit/frame, meaning): the study, the
    rollout's own fields, each of its parts and each protocol's result, the poses npz and the phase codes."""
    out = _table("Study JSON (`study.json`, `StudyRecord`)", sampled_last(dataclasses.fields(StudyRecord)))
    out += _table("Rollout JSON (`<sequence>.json`, `RolloutRecord`)", dataclasses.fields(RolloutRecord))
    parts = [*PARTS, *RESULT_TYPES.values()]
    for cls in parts:
        doc = " ".join((cls.__doc__ or "").split("\n\n")[0].split())
        own = [f for f in dataclasses.fields(cls) if not f.metadata.get("internal")]
        out += _table(f"`{cls.key}` (`{cls.__name__}`): {doc}", own)
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


def _value_cell(c) -> str:
    """A table cell: the value, and what the sampled verdict draws it from where it samples it."""
    cell = f"`{_shown(c.value)}`"
    if c.spread:
        cell += f" (sampled {_shown(c.spread[0])}-{_shown(c.spread[1])})"
    elif c.levels:
        cell += (
            f" (sampled among {', '.join(map(str, c.levels if isinstance(c.levels, dict) else map(_shown, c.levels)))})"
        )
    return cell


def physics_markdown() -> str:
    """The table of every named physics' choices as Markdown: one row per choice, its value, source and why
    under ``authored`` and under ``replay``."""
    a, r = PHYSICS["authored"], PHYSICS["replay"]
    lines = ["| choice | authored | source | replay | source, why |", "|---|---|---|---|---|"]
    for k in a:
        same = (a[k].value, a[k].spread, a[k].levels) == (r[k].value, r[k].spread, r[k].levels)
        rv = "same" if same else _value_cell(r[k])
        lines.append(f"| `{k}` | {_value_cell(a[k])} | {_why(a[k])} | {rv} | {'' if same else _why(r[k])} |")
    return "\n".join(lines) + "\n"


def _why(c) -> str:
    """A table cell: the value's source, the sampled range's where it has its own, and why."""
    return f"{c.source}; " + (f"sampled: {c.spread_source}; " if c.spread_source else "") + c.why


if __name__ == "__main__":
    print({"results": fields_markdown, "physics": physics_markdown}[sys.argv[1]](), end="")
