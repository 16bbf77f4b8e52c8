"""The field tables of ``docs/results.md``, generated from the records' field metadata."""

from __future__ import annotations

import dataclasses

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
