"""``run_study.py --ablation-only``: rerun the contact ablation of named recordings into an
existing study, keeping every other recording and the contact runs untouched."""

from __future__ import annotations

import json

import pytest
from short_window import SHORT

from replay.config import ReplayConfig
from replay.errors import UsageError
from replay.study.runner import run_study

pytestmark = pytest.mark.needs_data


def test_ablation_only_reruns_one_recording_and_keeps_the_rest(tmp_path, mirror):
    cfg = ReplayConfig(**SHORT)
    out = tmp_path / "study.json"
    first = run_study("grab", out, cfg, objects=["cubesmall", "stamp"], workers=0, progress=False, data_dir=mirror)
    assert first["counts"]["rollouts"] == 2 and first["counts"]["ablation_run"] == 2
    rdir = tmp_path / "study_rollouts"
    stamp_before = (rdir / "stamp_lift.json").read_bytes()
    cube_before = json.loads((rdir / "cubesmall_lift.json").read_text())

    again = run_study("grab", out, cfg, objects=["cubesmall"], workers=0, progress=False, data_dir=mirror,
                      ablation_only=True)
    assert again["counts"]["rollouts"] == 2 and not again["failed"]  # the study still holds both
    # the study's wall time is the first run's plus the rerun's (not the rerun's alone)
    assert again["counts"]["wall_s"] == pytest.approx(first["counts"]["wall_s"] + again["counts"]["wall_s_this_run"],
                                                      abs=0.05)
    assert (rdir / "stamp_lift.json").read_bytes() == stamp_before  # not touched
    cube = json.loads((rdir / "cubesmall_lift.json").read_text())
    assert cube["timing"]["ablation_rerun_s"] > 0
    # the contact run is kept as it was; the ablation is recomputed (deterministic: the same figures)
    assert cube["outcome"] == cube_before["outcome"] and cube["lift"] == cube_before["lift"]
    assert cube["timing"]["wall_s"] == cube_before["timing"]["wall_s"] and cube["timing"]["frames"] > 0
    assert cube["ablation"]["grasp"]["max_object_disp_mm"] == cube_before["ablation"]["grasp"]["max_object_disp_mm"]
    assert cube["ablation"]["grasp"]["max_hand_object_contacts"] == 0

    # a recording the study does not hold cannot get an ablation attached
    failed = run_study("grab", out, cfg, objects=["mug"], workers=0, progress=False, data_dir=mirror,
                       ablation_only=True)
    assert "mug_lift" in failed["failed"] and "run the study without --ablation-only" in failed["failed"]["mug_lift"]
    assert failed["counts"]["rollouts"] == 2
    with pytest.raises(UsageError):
        run_study("grab", out, cfg, objects=["cubesmall"], workers=0, progress=False, data_dir=mirror,
                  ablation_only=True, ablation=False)


def test_ablation_only_without_a_study_is_a_usage_error(tmp_path, mirror):
    """No study at --out: one line naming the file, before any job runs; nothing is written."""
    out = tmp_path / "none" / "study.json"
    with pytest.raises(UsageError, match=r"no study at .*study.json to rerun the ablation of: run the study first"):
        run_study("grab", out, ReplayConfig(**SHORT), objects=["cubesmall"], workers=0, progress=False,
                  data_dir=mirror, ablation_only=True)
    assert not out.exists()


def test_ablation_only_keeps_the_studys_refusals(tmp_path, mirror):
    """A study that refused a recording (GRAB's mouse_use_1: the object never leaves the table) still lists the
    refusal, its reason and its count after an ``--ablation-only`` rerun of another recording (found by a newcomer:
    the rerun used to drop them)."""
    data = tmp_path / "data"
    (data / "grab" / "recordings").mkdir(parents=True)
    (data / "grab" / "objects").symlink_to(mirror / "grab" / "objects")
    (data / "manosim").symlink_to(mirror / "manosim")
    (data / "grab" / "recordings" / "cubesmall_lift.pkl").symlink_to(mirror / "grab" / "recordings" / "cubesmall_lift.pkl")
    (data / "grab" / "recordings" / "mouse_use_1.pkl").symlink_to(
        mirror / "grab_intents" / "recordings" / "mouse_use_1.pkl")
    cfg = ReplayConfig(**SHORT)
    out = tmp_path / "out" / "study.json"
    first = run_study("grab", out, cfg, workers=0, progress=False, data_dir=data)
    assert list(first["failed"]) == ["mouse_use_1"] and first["counts"]["refused"] == 1
    again = run_study("grab", out, cfg, objects=["cubesmall"], workers=0, progress=False, data_dir=data,
                      ablation_only=True)
    assert again["failed"] == first["failed"] and again["counts"]["refused"] == 1
    assert again["counts"]["rollouts"] == 1
