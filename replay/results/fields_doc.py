"""The field tables of ``docs/results.md``, generated from the records' field metadata."""

from __future__ import annotations

import dataclasses

from replay.results.convert import PARTS
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
