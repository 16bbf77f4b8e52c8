"""The result files' versioned layout: round trip, refusal of other versions, the docs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from replay.output.render.clip import load_poses_npz, load_study
from doc_tables import fields_markdown
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
from replay.study.summary import study_csvs

ROOT = Path(__file__).resolve().parent.parent


def test_round_trip_keeps_undeclared_fields(tmp_path):
    doc = {
        "format_version": FORMAT_VERSION,
        "sequence": "mug_lift",
        "outcome": "lifted",
        "lift": {"rise": 0.17, "slip_mm": float("nan"), "shake_spin": 2},
        "track_err_mm": 1.5,
        "ablation": {"ablation": True, "outcome": "not_lifted", "lifted": False, "poses": "x.ablation.npz"},
    }
    written = write_rollout(tmp_path / "r.json", RolloutRecord.from_dict(doc))
    assert written["lift"]["slip_mm"] is None  # NaN is written as null
    back = read_rollout(tmp_path / "r.json")
    assert back.lift.rise == 0.17 and back.extra == {"track_err_mm": 1.5} and back.lift.extra == {"shake_spin": 2}
    assert back.ablation.outcome == "not_lifted" and back.grasp.empty() and back.result is None
    out = back.to_dict()
    assert out["ablation"]["ablation"] is True and out["track_err_mm"] == 1.5 and out["lift"]["shake_spin"] == 2
    assert out["grasp"] is None and "tracking" not in out


def test_a_flat_format_5_rollout_reads_into_its_parts(tmp_path):
    """Formats 1-5 held every field flat, null where it did not apply: read through the converter, each value is
    in its part, a part none of whose fields holds a value is empty, the hug-oracle's object is its result."""
    flat = {
        "format_version": 5,
        "sequence": "mug_lift",
        "protocol": "hug-oracle",
        "outcome": "lifted",
        "rise": 0.1,
        "shake_held": None,
        "contacts_at_lift": 3,
        "wall_s": 2.0,
        "track_within": None,
        "track_tolerance": {},
        "refine_outcome": None,
        "recorded_max_s": None,
        "verdict_envelope": None,
        "p_lift": None,
        "oracle": {"off_table": True, "dt": 0.002},
        "pad_compression": {"depth_mm": 1.0},
        "ablation": {"ablation": True, "outcome": "not_lifted", "max_object_disp_mm": 0.4},
    }
    (tmp_path / "r.json").write_text(json.dumps(flat))
    r = read_rollout(tmp_path / "r.json")
    assert r.format_version == FORMAT_VERSION and r.lift.rise == 0.1 and r.grasp.contacts_at_lift == 3
    assert r.timing.wall_s == 2.0 and r.sampled.empty() and r.extra == {}
    assert r.result.off_table is True and r.result.dt == 0.002 and r.lift.pad_compression == {"depth_mm": 1.0}
    assert r.ablation.grasp.max_object_disp_mm == 0.4 and r.ablation.format_version is None
    assert RolloutRecord.from_dict(r.to_dict()).to_dict() == r.to_dict()  # format 6 reads back as it is


@pytest.mark.parametrize("version", [None, 0, FORMAT_VERSION + 1])  # 1 and 2 are read
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


def test_format_1_files_are_read_in_this_version_s_words(tmp_path):
    """A study and a rollout written by format 1 (outcome ``dropped``) read as format 2: ``not_lifted``
    in every outcome (rows, oracle rows, the nested ablation, ``refine_outcome``) and count key
    (the counts, per intent, the hug-oracle's); the report's reader (clip.load_study) too."""
    from replay.output.render.clip import study_rollout

    counts = {
        "rollouts": 2,
        "lifted": 1,
        "dropped": 1,
        "by_intent": {"lift": {"rollouts": 2, "dropped": 1}},
        "hug-oracle": {"rollouts": 1, "dropped": 0},
    }
    study = {
        "format_version": 1,
        "dataset": "grab",
        "counts": counts,
        "rollouts": [{"sequence": "a", "outcome": "dropped", "json": "a.json"}, {"sequence": "b", "outcome": "lifted"}],
        "oracle_rollouts": [{"sequence": "a", "outcome": "dropped"}],
        "refine_rollouts": [{"sequence": "a", "refine_outcome": "dropped"}],
    }
    (tmp_path / "study.json").write_text(json.dumps(study))
    (tmp_path / "a.json").write_text(
        json.dumps(
            {
                "format_version": 1,
                "sequence": "a",
                "outcome": "dropped",
                "ablation": {"outcome": "dropped", "lifted": False},
            }
        )
    )
    s = read_study(tmp_path / "study.json")
    assert s.format_version == FORMAT_VERSION == 7  # read as this version (formats 3, 4 add fields; 5 reads the
    # config's dropped physics fields as overrides, replay.results.legacy_physics; 6 nests a rollout's parts; 7 its config)
    assert [r["outcome"] for r in s.rollouts] == ["not_lifted", "lifted"] and s.oracle_rollouts[0][
        "outcome"
    ] == "not_lifted"
    assert s.refine_rollouts[0]["refine_outcome"] == "not_lifted"
    assert s.counts["not_lifted"] == 1 and "dropped" not in s.counts
    assert (
        s.counts["by_intent"]["lift"] == {"rollouts": 2, "not_lifted": 1} and s.counts["hug-oracle"]["not_lifted"] == 0
    )
    r = read_rollout(tmp_path / "a.json")
    assert r.outcome == "not_lifted" and r.ablation.outcome == "not_lifted"
    loaded, d = load_study(tmp_path / "study.json")
    assert loaded.rollouts[0]["outcome"] == "not_lifted"
    assert study_rollout(loaded.rollouts[0], d).record.ablation.outcome == "not_lifted"


def test_study_csv_and_poses_version(tmp_path):
    rec = StudyRecord(
        dataset="grab",
        rollouts=[{"sequence": "a", "outcome": "not_lifted", "slip_mm": None, "diagnosis_figure": {"slip_mm": 150.0}}],
    )
    write_study(tmp_path / "s.json", rec, study_csvs(rec))
    lines = (tmp_path / "s.csv").read_text().splitlines()
    # the verdict's columns lead (empty for a row without a verdict), then the row's
    assert lines[0].startswith("verdict,reason,p_lift,p_lo,p_hi,sequence,object,intent,outcome")
    assert lines[1].startswith(",,,,,a,,,not_lifted,")
    assert read_study(tmp_path / "s.json").rollouts[0]["sequence"] == "a"
    write_poses(tmp_path / "p.npz", {"phase": np.array([0, 1], np.int32)})
    with np.load(tmp_path / "p.npz") as z:
        assert int(z["format_version"]) == FORMAT_VERSION


def test_docs_list_every_field():
    text = (ROOT / "docs" / "results.md").read_text()
    assert fields_markdown() in text, "docs/results.md is out of date: regenerate its tables (tests/doc_tables.py results)"
    assert [p.value for p in Phase] == [0, 1, 2, 3, 4, 5, 6]
