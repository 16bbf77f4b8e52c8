"""A study of many recordings made from a few real ones, for the report and montage at scale
(issue 41: 1,500 recordings) without simulating 1,500 rollouts: each synthetic recording is
a real rollout JSON copied under its own name, object label and outcome class (its saved
poses the real one's), its study row and the study's counts remade by the study's own code."""

from __future__ import annotations

import json
from pathlib import Path

from replay.protocol.protocols.counting import summarize
from replay.results.files import dumps
from replay.results.records import RolloutRecord, study_row

#: (outcome, diagnosis class) cycled over the synthetic recordings: every class the report
#: and the montage tell apart, lifted the most common as in the GRAB study
OUTCOMES = (
    ("lifted", None),
    ("lifted", None),
    ("lifted", None),
    ("not_lifted", "slid_out"),
    ("not_lifted", "no_contact"),
    ("unstable", None),
    ("stuck", None),
)


def synthetic_study(real: Path, n: int, out_dir: Path, objects: list[str]) -> Path:
    """``n`` recordings at ``out_dir/study.json`` from the study at ``real`` (its rollouts
    reused in turn, their poses in place); recording k is ``<object>v<k>_lift`` with object
    label ``objects[k % len]`` and outcome class ``OUTCOMES[k % len]``. Returns the study path."""
    study = json.loads(real.read_text())
    docs = [json.loads((real.parent / r["json"]).read_text()) for r in study["rollouts"]]
    rdir = out_dir / "study_rollouts"
    rdir.mkdir(parents=True, exist_ok=True)
    made, rows = [], []
    for k in range(n):
        src = docs[k % len(docs)]
        outcome, cause = OUTCOMES[k % len(OUTCOMES)]
        obj = objects[k % len(objects)]
        doc = dict(
            src,
            sequence=f"{obj}v{k:04d}_lift",
            object=obj,
            outcome=outcome,
            lifted=outcome == "lifted",
            diagnosis=None if cause is None else {"class": cause, "figure": {}},
        )
        doc["poses"] = str((real.parent / src["poses"]).resolve())  # the real poses, where they are
        if isinstance(src.get("ablation"), dict) and src["ablation"].get("poses"):
            doc["ablation"] = dict(src["ablation"], poses=str((real.parent / src["ablation"]["poses"]).resolve()))
        (rdir / f"{doc['sequence']}.json").write_text(dumps(doc))
        made.append(doc)
        rows.append(study_row(RolloutRecord.from_dict(doc, nested=True), f"study_rollouts/{doc['sequence']}.json"))
    study.update(
        rollouts=rows,
        sequences=[d["sequence"] for d in made],
        counts=dict(summarize([RolloutRecord.from_dict(d, nested=True) for d in made], {}, 1.0), refused=0,
                    refused_keys=[]),
        recorded_rollouts=[],
    )
    path = out_dir / "study.json"
    path.write_text(dumps(study))
    return path
