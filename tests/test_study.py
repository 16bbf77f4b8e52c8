"""The study runner: atomic per-rollout results, kill + resume gives the same results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from replay.config import ReplayConfig
from replay.errors import UsageError
from replay.study.runner import run_study

pytestmark = pytest.mark.needs_data

ROOT = Path(__file__).resolve().parent.parent
OBJECTS = ["cubesmall", "cylindersmall"]
#: short protocol so that the study runs in seconds
SHORT = dict(approach_window_s=0.3, settle_s=0.1, lift={"lift_height": 0.04, "lift_s": 0.3, "hold_s": 0.2, "lifted_min_rise": 0.02})
TIMING = {"wall_s", "rtf", "wall_s_total", "kinematics_s", "build_s"}


def _strip(doc: dict) -> dict:
    out = {k: v for k, v in doc.items() if k not in TIMING}
    for k in ("ablation", "timing"):  # the ablation's own, and the parts' (a rollout's times: its timing)
        if isinstance(out.get(k), dict):
            out[k] = _strip(out[k])
    return out


def _children(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` (Linux /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
            except (OSError, ValueError, IndexError):
                pass
    return out


def _load_rollouts(out: Path) -> dict:
    return {p.stem: json.loads(p.read_text()) for p in sorted((out.parent / f"{out.stem}_rollouts").glob("*.json"))}


@pytest.mark.slow  # an in-process study, a CLI study killed mid-way and its resume (three engine start-ups): 80 s on 2 shared cores (make test-slow)
def test_killed_and_resumed_study_matches_uninterrupted(tmp_path, mirror):
    cfg = ReplayConfig(**SHORT)
    ref_out = tmp_path / "ref" / "study.json"
    ref = run_study("grab", ref_out, cfg, objects=OBJECTS, workers=1, ablation=False, progress=False, data_dir=mirror)
    assert ref["counts"]["rollouts"] == 2 and ref["counts"]["stable"] == 2 and not ref["failed"]
    assert "finger_effort_limit" not in ref["config"]["physics_overrides"] and ref["versions"]["newton"] == "1.8.0"  # the table's strength
    assert all(v["sha256"] for v in ref["inputs"].values())

    # run the CLI in a subprocess and kill it as soon as the first rollout is on disk
    cfg_path = tmp_path / "cfg.json"
    cfg.save(cfg_path)
    out = tmp_path / "run" / "study.json"
    cmd = [sys.executable, str(ROOT / "scripts" / "run_study.py"), "--dataset", "grab", "--out", str(out),
           "--objects", ",".join(OBJECTS), "--config", str(cfg_path), "--no-ablation", "--quiet", "--data", str(mirror)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rdir = out.parent / "study_rollouts"
    t0 = time.time()
    while time.time() - t0 < 240 and proc.poll() is None and not list(rdir.glob("*.json")):
        time.sleep(0.05)
    workers = _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # its worker processes do not outlive it (each holds a simulator, ~0.7 GB)
    t1 = time.time()
    while time.time() - t1 < 15 and any(Path(f"/proc/{w}").exists() for w in workers):
        time.sleep(0.2)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()], "orphaned study workers"
    first = list(rdir.glob("*.json"))
    assert len(first) >= 1, "the study wrote no rollout before it was killed"
    mtimes = {p.name: p.stat().st_mtime_ns for p in first}
    # no partial files are left behind by the atomic writes
    assert not [p for p in rdir.iterdir() if p.name.endswith(".tmp")]

    res = subprocess.run(cmd + ["--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    # the finished rollout was not recomputed
    assert {p.name: p.stat().st_mtime_ns for p in first} == mtimes
    study = json.loads(out.read_text())
    assert study["counts"]["rollouts"] == 2 and study["failed"] == {}

    # bit for bit: determinism on one machine (the same code on the same inputs, in-process and resumed)
    a, b = _load_rollouts(ref_out), _load_rollouts(out)
    assert set(a) == set(b) == {f"{o}_lift" for o in OBJECTS}
    for k in a:
        assert _strip(a[k]) == _strip(b[k]), k
        pa = np.load(ref_out.parent / a[k]["poses"])
        pb = np.load(out.parent / b[k]["poses"])
        for f in ("time", "body_pos", "body_quat", "contact_count", "phase", "body_names"):
            assert np.array_equal(pa[f], pb[f]), (k, f)
    for key in ("rollouts", "stable", "lifted", "not_lifted", "unstable"):
        assert study["counts"][key] == ref["counts"][key]

    # resuming the same study carries its wall time over; this run's own time is said apart
    same = run_study("grab", ref_out, cfg, objects=OBJECTS, workers=1, ablation=False, resume=True, progress=False,
                     data_dir=mirror)
    assert same["counts"]["wall_s"] >= ref["counts"]["wall_s"]
    assert same["counts"]["resumed"] == 2 and same["counts"]["wall_s_this_run"] < 0.5 * ref["counts"]["wall_s"]
    # a subset run where the study is merges into it: nothing lost, the subset's recording rerun
    sub = run_study("grab", ref_out, cfg, objects=OBJECTS[:1], workers=1, ablation=False, progress=False,
                    data_dir=mirror)
    assert sub["sequences"] == same["sequences"] and sub["counts"]["rollouts"] == 2 and sub["counts"]["resumed"] == 1
    assert [r["outcome"] for r in sub["rollouts"]] == [r["outcome"] for r in same["rollouts"]]
    assert (ref_out.with_suffix(".csv")).read_text().count("\n") == 3  # header + 2 rows
    # a study in another place does not carry the first one's time over
    other = run_study("grab", tmp_path / "other" / "study.json", cfg, objects=OBJECTS[:1], workers=1, ablation=False,
                      resume=True, progress=False, data_dir=mirror)
    assert other["counts"]["rollouts"] == 1
    assert other["counts"]["wall_s"] == pytest.approx(other["counts"]["wall_s_this_run"], abs=0.1)
    # a subset of another config where the study is: refused, the study untouched
    before = ref_out.read_text()
    with pytest.raises(UsageError, match="another dataset or config"):
        run_study("grab", ref_out, ReplayConfig(**SHORT).replace(lift={"hold_s": 0.3}), objects=OBJECTS[:1], workers=1,
                  ablation=False, progress=False, data_dir=mirror)
    assert ref_out.read_text() == before


def test_bad_object_name_is_a_clear_error(tmp_path, mirror):
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "run_study.py"), "--dataset", "grab", "--out",
         str(tmp_path / "s.json"), "--objects", "unicorn"],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 2
    assert "unicorn" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "s_rollouts").exists()  # refused before anything was created


def test_unusable_out_and_taco_objects_are_named(tmp_path, mirror, monkeypatch):
    from replay.config import ReplayConfig
    from replay.errors import OutputError, UsageError
    from replay.study.runner import run_study

    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    (tmp_path / "afile").write_text("")
    with pytest.raises(OutputError, match=r"--out .*afile/s.json: cannot create the folder"):
        run_study("grab", tmp_path / "afile" / "s.json", ReplayConfig(), objects=["mug"], data_dir=tmp_path / "none")
    # TACO sequence names carry no object name (a date and a take): only sequences are offered
    with pytest.raises(UsageError, match=r"give a sequence \(20231104_010, 20231104_017\)") as e:
        run_study("taco", tmp_path / "t.json", ReplayConfig(), objects=["20231104"], data_dir=tmp_path / "none")
    assert "an object" not in str(e.value)


@pytest.mark.slow  # a 2-worker process pool, each worker importing the engine: 30 s on 2 shared cores (make test-slow)
def test_bad_recording_fails_alone_in_the_process_pool(tmp_path, mirror):
    """A corrupt input is recorded with its file named; the other rollouts still run
    (a DataError raised in a worker used to break the whole process pool)."""
    data = tmp_path / "data"
    (data / "grab" / "recordings").mkdir(parents=True)
    (data / "grab" / "objects").symlink_to(mirror / "grab" / "objects")
    (data / "manosim").symlink_to(mirror / "manosim")
    (data / "grab" / "recordings" / "cubesmall_lift.pkl").symlink_to(mirror / "grab" / "recordings" / "cubesmall_lift.pkl")
    good = (mirror / "grab" / "recordings" / "mug_lift.pkl").read_bytes()
    (data / "grab" / "recordings" / "mug_lift.pkl").write_bytes(good[: len(good) // 3])  # truncated
    study = run_study("grab", tmp_path / "out" / "study.json", ReplayConfig(**SHORT), workers=2, ablation=False,
                      data_dir=data, progress=False)
    assert study["counts"]["rollouts"] == 1 and study["rollouts"][0]["object"] == "cubesmall"
    assert list(study["failed"]) == ["mug_lift"] and "mug_lift.pkl" in study["failed"]["mug_lift"]


@pytest.mark.slow  # a TACO study with its contact ablation and the object's convex decomposition: 33 s on 2 shared cores (make test-slow)
def test_taco_left_hand_study_runs_with_cropped_mano(tmp_path, mirror):
    """TACO (MANO parameters, left hand): the replay window is cropped before the
    kinematics, the MANO arrays with it, and the left-hand model is used."""
    from replay.checks import load_recording
    from replay.study.prepare import crop_recording

    rec = load_recording("taco", "20231104_017", mirror)
    sub = crop_recording(rec, 5, 40)
    assert sub.num_frames == 35 and sub.mano.finger_pose.shape[0] == 35
    np.testing.assert_array_equal(sub.mano.vertices[0], rec.mano.vertices[5])
    assert sub.grasp_frame == rec.grasp_frame - 5

    out = tmp_path / "taco.json"
    study = run_study("taco", out, ReplayConfig(**SHORT), sequences=["20231104_017"], data_dir=mirror,
                      progress=False)
    assert study["failed"] == {} and study["counts"]["rollouts"] == 1
    doc = _load_rollouts(out)["20231104_017"]
    from replay.sim import physics

    shape = physics.table(ReplayConfig().physics)["hand_shape"].value  # the default judge's: the fitted hand
    assert Path(doc["hand_mjcf"]).parent.name.startswith("mano_lhand") and doc["hand_mjcf"].endswith("capsule_hand.xml")
    assert study["config"]["physics_overrides"]["hand_shape"] == shape and "hand_variant" not in study["config"]
    assert doc["stable"] and doc["ablation"]["grasp"]["max_hand_object_contacts"] == 0
