"""What a new user meets in the first hour (issue 23): the README's relative mirror from any
folder, refused recordings that do not fail the study, ``--objects`` with ``--resume``, a
misspelled name, and a console that says errors in one line and never cuts a sentence."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import replay
from replay.study.console import one_line

ROOT = Path(__file__).resolve().parent.parent
#: short protocol so that a study runs in seconds (as tests/test_study.py)
SHORT = dict(approach_window_s=0.3, settle_s=0.1, lift={"lift_height": 0.04, "lift_s": 0.3, "hold_s": 0.2, "lifted_min_rise": 0.02})


def test_relative_folders_in_the_environment_are_resolved_once():
    env = {"REPLAY_MIRROR": "../shared/datasets", "REPLAY_DATA": "/abs/data", "REPLAY_CACHE": "data/cache",
           "OTHER": "x"}
    changed = replay.resolve_path_env(env)
    assert env["REPLAY_MIRROR"] == os.path.abspath("../shared/datasets")
    assert env["REPLAY_CACHE"] == os.path.abspath("data/cache")
    assert env["REPLAY_DATA"] == "/abs/data" and env["OTHER"] == "x"  # absolute, or not a folder: as they were
    assert set(changed) == {"REPLAY_MIRROR", "REPLAY_CACHE"}
    assert replay.resolve_path_env(env) == {}  # once absolute, left alone


def test_console_never_cuts_a_sentence():
    warning = ("finger joint 8: total damping 0.3565 N·m·s/rad is below 1.25 x its ball-drive flutter "
               "bound 0.2964 (commanded angle 2.17 rad); passive damping raised to 0.02392 (recorded in the "
               "rollout's `flutter`)")
    short = one_line(warning)
    assert len(short) <= 160 and short.endswith("raised to 0.02392") and "below 1.25 x its ball-drive flutter" in short
    two = "First sentence is here. " + "Second one is much longer " * 8 + "and ends."
    assert one_line(two, 60) == "First sentence is here. [...]"
    assert one_line("x" * 300) == "x" * 300  # one long sentence: whole, never cut
    assert one_line("/a/b/c/file.xml: short") == "file.xml: short"


def _script(script: str, *args, cwd: Path, env: dict | None = None, timeout: int = 600):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *map(str, args)], cwd=cwd,
                          env=dict(env or os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow  # a run_study.py subprocess with its worker: 17 s on 2 shared cores (make test-slow)
@pytest.mark.needs_data
def test_study_with_a_relative_mirror_from_another_folder(mirror, tmp_path):
    """REPLAY_MIRROR relative to the caller's folder (the README's ``../shared/datasets``): a
    process that resolved it (replay.resolve_path_env, as the commands and conftest.py do) starts the
    study script (and its worker) in another folder."""
    caller, elsewhere = tmp_path / "repo", tmp_path / "repo" / "tests_tmp"  # as make test's pytest and a test
    elsewhere.mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "datasets").symlink_to(mirror)  # the clone with shared/ beside it
    (elsewhere / "short.json").write_text(json.dumps(SHORT))
    rel = "../shared/datasets"
    assert (caller / rel).is_dir() and not (elsewhere / rel).exists()  # means nothing from there
    # the caller resolves the relative folder once, as every command (replay.cli.run) and conftest.py do
    code = ("import subprocess, sys, replay; replay.resolve_path_env(); sys.exit(subprocess.call([sys.executable, sys.argv[1], '--dataset', 'grab', "
            "'--objects', 'cubesmall', '--workers', '1', '--no-ablation', '--quiet', '--config', 'short.json', "
            "'--out', 'out/study.json'], cwd=sys.argv[2]))")
    env = dict(os.environ, REPLAY_MIRROR=rel, PYTHONPATH=str(ROOT))
    env.pop("REPLAY_DATA", None)
    res = subprocess.run([sys.executable, "-c", code, str(ROOT / "scripts" / "run_study.py"), str(elsewhere)],
                         cwd=caller, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    study = json.loads((elsewhere / "out" / "study.json").read_text())
    assert study["counts"]["rollouts"] == 1 and study["failed"] == {}


@pytest.mark.needs_data
def test_objects_with_resume_rerun_the_named_recordings(mirror, tmp_path):
    """``make study STUDY_ARGS="--objects ..."`` after a full study (make passes --resume): the
    named recordings run again, the others are kept, and the wall time is this run's."""
    from replay.config import ReplayConfig
    from replay.study.runner import run_study

    out, cfg = tmp_path / "study.json", ReplayConfig(**SHORT)
    full = run_study("grab", out, cfg, objects=["cubesmall", "mug"], workers=0, ablation=False, progress=False,
                     data_dir=mirror)
    assert full["counts"]["rollouts"] == 2
    rdir = tmp_path / "study_rollouts"
    before = {p.name: p.stat().st_mtime_ns for p in rdir.glob("*.json")}
    again = run_study("grab", out, cfg, objects=["mug"], workers=0, ablation=False, resume=True, progress=False,
                      data_dir=mirror)
    after = {p.name: p.stat().st_mtime_ns for p in rdir.glob("*.json")}
    assert after["mug_lift.json"] != before["mug_lift.json"]  # rerun
    assert after["cubesmall_lift.json"] == before["cubesmall_lift.json"]  # kept
    assert again["counts"]["rollouts"] == 2 and again["counts"]["resumed"] == 1
    assert again["counts"]["wall_s"] == pytest.approx(again["counts"]["wall_s_this_run"], abs=0.05)
    assert again["counts"]["wall_s"] < full["counts"]["wall_s"] + 0.5 * full["counts"]["wall_s"]


@pytest.mark.needs_data
def test_misspelled_object_says_did_you_mean(mirror, tmp_path):
    from replay.config import ReplayConfig
    from replay.errors import UsageError
    from replay.study.runner import run_study

    with pytest.raises(UsageError) as e:
        run_study("grab", tmp_path / "s.json", ReplayConfig(), objects=["mugg"], data_dir=mirror, progress=False)
    msg = str(e.value)
    assert "'mugg' (did you mean mug?)" in msg and "mug selects mug_lift only" in msg
    assert len(msg) < 400 and "\n" not in msg, msg  # not every name of the dataset


@pytest.mark.slow  # two run_study.py subprocesses (the study, then --resume --strict): 35 s on 2 shared cores (make test-slow)
@pytest.mark.needs_data
def test_a_refused_recording_is_listed_and_only_strict_fails(mirror, tmp_path):
    data = tmp_path / "data"
    (data / "grab" / "recordings").mkdir(parents=True)
    (data / "grab" / "objects").symlink_to(mirror / "grab" / "objects")
    (data / "manosim").symlink_to(mirror / "manosim")
    rec = mirror / "grab" / "recordings"
    (data / "grab" / "recordings" / "cubesmall_lift.pkl").symlink_to(rec / "cubesmall_lift.pkl")
    good = (rec / "mug_lift.pkl").read_bytes()
    (data / "grab" / "recordings" / "mug_lift.pkl").write_bytes(good[: len(good) // 3])  # truncated
    (tmp_path / "short.json").write_text(json.dumps(SHORT))
    args = ("--dataset", "grab", "--data", data, "--out", tmp_path / "out" / "study.json", "--workers", "1",
            "--no-ablation", "--config", tmp_path / "short.json")
    res = _script("run_study.py", *args, "--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "refused: mug_lift: " in res.stderr and "mug_lift.pkl" in res.stderr and "error" not in res.stderr
    assert "refused: 1 recording(s) (bad input" in res.stdout
    study = json.loads((tmp_path / "out" / "study.json").read_text())
    assert study["counts"]["refused"] == 1 and study["counts"]["refused_keys"] == ["mug_lift"]
    strict = _script("run_study.py", *args, "--quiet", "--resume", "--strict", cwd=tmp_path)
    assert strict.returncode == 1 and "run_study.py: error: 1 recording(s)" in strict.stderr


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU machine: --device cuda works there")
def test_cuda_without_a_gpu_is_one_line(tmp_path):
    res = _script("run_study.py", "--dataset", "grab", "--device", "cuda", "--out", tmp_path / "s.json",
                  cwd=tmp_path, timeout=300)
    lines = [x for x in (res.stdout + res.stderr).splitlines() if x.strip()]
    assert res.returncode == 2 and len(lines) == 1, lines
    assert lines[0].startswith("run_study.py: error: --device") and "cuda" in lines[0]
