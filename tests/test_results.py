"""The result files' versioned layout: round trip, refusal of other versions, the docs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from replay.output.render.clip import load_poses_npz, load_study
from replay.results.fields_doc import fields_markdown
from replay.results.files import (
    read_rollout,
    read_study,
    write_poses,
    write_rollout,
    write_study,
)
from replay.results.records import (
    FORMAT_VERSION,
    Phase,
    ResultsFormatError,
    RolloutRecord,
    StudyRecord,
)

ROOT = Path(__file__).resolve().parent.parent


def test_round_trip_keeps_undeclared_fields(tmp_path):
    doc = {"format_version": FORMAT_VERSION, "sequence": "mug_lift", "outcome": "lifted", "rise": 0.17,
           "slip_mm": float("nan"), "track_err_mm": 1.5,
           "ablation": {"ablation": True, "outcome": "dropped", "lifted": False, "poses": "x.ablation.npz"}}
    written = write_rollout(tmp_path / "r.json", RolloutRecord.from_dict(doc))
    assert written["slip_mm"] is None  # NaN is written as null
    back = read_rollout(tmp_path / "r.json")
    assert back.rise == 0.17 and back.extra == {"track_err_mm": 1.5}
    assert back.ablation.outcome == "dropped" and back.ablation.ablation_flag is True
    assert back.to_dict()["ablation"]["ablation"] is True and back.to_dict()["track_err_mm"] == 1.5


@pytest.mark.parametrize("version", [None, 0, FORMAT_VERSION + 1])
def test_other_versions_are_refused_naming_file_and_field(tmp_path, version):
    doc = {"rollouts": [], "dataset": "grab"} | ({} if version is None else {"format_version": version})
    p = tmp_path / "study.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ResultsFormatError, match=r"study\.json \[format_version\]: .*re-run the study"):
        read_study(p)
    with pytest.raises(ResultsFormatError, match=r"study\.json \[format_version\]"):
        load_study(p)
    z = tmp_path / "p.npz"
    np.savez(z, time=np.zeros(1), **({} if version is None else {"format_version": version}))
    with pytest.raises(ResultsFormatError, match=r"p\.npz \[format_version\]"):
        load_poses_npz(z)


def test_study_csv_and_poses_version(tmp_path):
    rec = StudyRecord(dataset="grab", rollouts=[{"sequence": "a", "outcome": "dropped", "slip_mm": None,
                                                 "diagnosis_figure": {"slip_mm": 150.0}}])
    write_study(tmp_path / "s.json", rec)
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0].startswith("sequence,object,outcome") and lines[1].startswith("a,,dropped,")
    assert read_study(tmp_path / "s.json").rollouts[0]["sequence"] == "a"
    write_poses(tmp_path / "p.npz", {"phase": np.array([0, 1], np.int32)})
    with np.load(tmp_path / "p.npz") as z:
        assert int(z["format_version"]) == FORMAT_VERSION


def test_docs_list_every_field():
    text = (ROOT / "docs" / "results.md").read_text()
    assert fields_markdown() in text, "docs/results.md is out of date: regenerate its tables with fields_markdown()"
    assert [p.value for p in Phase] == [0, 1, 2, 3, 4, 5, 6]
