"""A user's own files: staged (never ignored) as unpinned with their SHA-256 and origin;
a study hashes what it read and ``--resume`` reruns a recording whose inputs changed.

Inputs are small copies of real mirror files (copied, never symlinked, so that changing
one cannot touch the mirror): a GRAB recording under a new name and a modified mesh.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trimesh

from replay.data.fetch import fetch
from replay.errors import IntegrityError

pytestmark = pytest.mark.needs_data

ROOT = Path(__file__).resolve().parents[1]
NEW = "cubesmall_newtake_1"  # a "new" recording: cubesmall_lift.pkl under another name
#: short protocol so that the study runs in seconds (as tests/test_study.py)
SHORT = dict(approach_window_s=0.3, settle_s=0.1, lift={"lift_height": 0.04, "lift_s": 0.3, "hold_s": 0.2, "lifted_min_rise": 0.02})


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REPLAY_MIRROR"}
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_data.py"), "--quiet", *args],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def local_grab(mirror, tmp_path) -> Path:
    """``local/grab``: cubesmall_lift (pinned), the same take renamed (new), cubesmall and table objects."""
    local = tmp_path / "local"
    rec = local / "grab" / "recordings"
    rec.mkdir(parents=True)
    shutil.copyfile(mirror / "grab/recordings/cubesmall_lift.pkl", rec / "cubesmall_lift.pkl")
    shutil.copyfile(mirror / "grab/recordings/cubesmall_lift.pkl", rec / f"{NEW}.pkl")
    for name in ("cubesmall", "table"):
        shutil.copytree(mirror / "grab/objects" / name, local / "grab/objects" / name)
    shutil.copyfile(mirror / "grab/objects/common.xml", local / "grab/objects/common.xml")
    return local


def test_local_folder_is_staged_pinned_and_unpinned(local_grab, tmp_path):
    dest = tmp_path / "data"
    proc = _cli("--dataset", "grab", "--local", str(local_grab), "--dest", str(dest))
    assert proc.returncode == 0, proc.stderr
    n_files = sum(1 for p in (local_grab / "grab").rglob("*") if p.is_file())
    # every file but the renamed recording is on the pin list
    assert f"[{n_files - 1} pinned, 1 unpinned]" in proc.stdout, proc.stdout
    man = json.loads((dest / "MANIFEST.json").read_text())["files"]
    assert len(man) == n_files
    new = man[f"grab/recordings/{NEW}.pkl"]
    src = local_grab / "grab" / "recordings" / f"{NEW}.pkl"
    assert new["pinned"] is False and new["source"] == "local" and new["repo"] == "unknown"
    assert new["sha256"] == _sha(src) and new["origin"] == str(src.resolve())
    old = man["grab/recordings/cubesmall_lift.pkl"]
    assert old["pinned"] is True and old["revision"] == "7d5ef23c505ca4a30c224da7abf6387da9cf2c6c"
    # a re-run stages nothing; a changed own file is staged again, the old copy moved aside
    proc = _cli("--dataset", "grab", "--local", str(local_grab), "--dest", str(dest))
    assert proc.returncode == 0 and "grab: 0 file(s) staged" in proc.stdout
    src.write_bytes(src.read_bytes() + b"\0")
    proc = _cli("--dataset", "grab", "--local", str(local_grab), "--dest", str(dest))
    assert proc.returncode == 0 and "grab: 1 file(s) staged" in proc.stdout and "changed" in proc.stderr
    assert json.loads((dest / "MANIFEST.json").read_text())["files"][f"grab/recordings/{NEW}.pkl"]["sha256"] == _sha(src)


def test_local_file_at_a_pinned_path_must_match_its_pin(local_grab, tmp_path):
    p = local_grab / "grab/objects/cubesmall/contact0.stl"
    p.write_bytes(p.read_bytes()[:-10])
    with pytest.raises(IntegrityError, match="contact0.stl"):
        fetch("grab", tmp_path / "data", local=local_grab, progress=False)
    proc = _cli("--dataset", "grab", "--local", str(local_grab), "--dest", str(tmp_path / "d2"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_a_changed_local_file_at_a_pinned_path_is_refused_where_the_pinned_one_is_staged(local_grab, tmp_path):
    """Where the destination already holds the pinned file, a user's different file at that path is refused, not
    passed over as "already staged and verified" (a study would replay the pinned one)."""
    dest = tmp_path / "data"
    fetch("grab", dest, local=local_grab, progress=False)
    staged = (dest / "grab/recordings/cubesmall_lift.pkl").read_bytes()
    p = local_grab / "grab/recordings/cubesmall_lift.pkl"
    p.write_bytes(p.read_bytes() + b"\0")
    proc = _cli("--dataset", "grab", "--local", str(local_grab), "--dest", str(dest))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "cubesmall_lift.pkl" in proc.stderr and "not the pinned file" in proc.stderr, proc.stderr
    assert (dest / "grab/recordings/cubesmall_lift.pkl").read_bytes() == staged


def test_mirror_extras_are_staged_as_unpinned(mirror, tmp_path):
    """A mirror with one more TACO sequence than the pin list: staged, counted as unpinned."""
    m = tmp_path / "mirror"
    shutil.copytree(mirror / "taco", m / "taco")
    seq = sorted((m / "taco").glob("*.pkl"))[0]
    shutil.copyfile(seq, m / "taco" / "20990101_001.pkl")
    (m / "taco" / ".editor.swp").write_bytes(b"x")  # dot-named leftovers are not data
    res = fetch("taco", tmp_path / "data", mirror=m, progress=False)[0]
    assert (res.staged, res.pinned, res.unpinned) == (5, 4, 1)
    man = json.loads((tmp_path / "data" / "MANIFEST.json").read_text())["files"]
    assert man["taco/20990101_001.pkl"]["pinned"] is False and man["taco/20990101_001.pkl"]["source"] == "mirror"
    assert not (tmp_path / "data" / "taco" / ".editor.swp").exists()


def test_study_hashes_what_it_read_and_resume_reruns_changed_inputs(local_grab, tmp_path):
    from replay.config import ReplayConfig
    from replay.study.runner import run_study

    dest = tmp_path / "data"
    fetch("grab", dest, local=local_grab, progress=False)
    # the asset's mass (density x the collision parts' volume): the changed part below must weigh in
    cfg = ReplayConfig(**SHORT, physics_overrides={"object_mass_model": "asset"})
    out = tmp_path / "study" / "study.json"
    st = run_study("grab", out, cfg, sequences=[NEW], workers=0, ablation=False, progress=False, data_dir=dest)
    assert not st["failed"], st["failed"]
    inputs = st["inputs"]
    rec_key = f"grab/recordings/{NEW}.pkl"
    assert inputs[rec_key] == {"sha256": _sha(dest / rec_key), "from": "hashed", "pinned": False, "manifest": "match"}
    mesh_key = "grab/objects/cubesmall/contact0.stl"
    assert inputs[mesh_key]["pinned"] is True and inputs[mesh_key]["manifest"] == "match"
    first = json.loads((out.parent / "study_rollouts" / f"{NEW}.json").read_text())
    # resume with unchanged inputs: nothing reruns (same file, same bytes)
    run_study("grab", out, cfg, sequences=[NEW], workers=0, ablation=False, progress=False, data_dir=dest, resume=True)
    assert json.loads((out.parent / "study_rollouts" / f"{NEW}.json").read_text()) == first
    # the collision mesh changes after staging (scaled by 1.04: 0.8 mm a side, inside what
    # replay.checks.object_mass lets pass; 1.5x is refused as a part outside the object): resume reruns it
    mesh = trimesh.load(dest / mesh_key)
    mesh.apply_scale(1.04)
    mesh.export(dest / mesh_key)
    st = run_study("grab", out, cfg, sequences=[NEW], workers=0, ablation=False, progress=False, data_dir=dest,
                   resume=True)
    again = json.loads((out.parent / "study_rollouts" / f"{NEW}.json").read_text())
    assert again["inputs"][mesh_key]["sha256"] == _sha(dest / mesh_key) != first["inputs"][mesh_key]["sha256"]
    assert again["inputs"][mesh_key]["manifest"] == "changed since staging"
    assert st["inputs"][mesh_key]["manifest"] == "changed since staging"
    # the replay used the changed mesh: the mass (density x volume of its one collision part) grew by 1.04^3
    assert again["scene"]["object_mass"] == pytest.approx(first["scene"]["object_mass"] * 1.04 ** 3, rel=0.005)


def test_a_study_without_data_records_the_default_folder_as_with_it(local_grab, tmp_path, monkeypatch):
    """Left to its default (``./data``), the data folder is read as ``--data data`` reads it: each input
    keyed by its staged path, its manifest entry found (``match``), pinned by the pin list (newcomer
    check: a first-hour study recorded every staged input as ``not staged``, none pinned)."""
    from replay.config import ReplayConfig
    from replay.study.runner import run_study

    fetch("grab", tmp_path / "data", local=local_grab, progress=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REPLAY_DATA", raising=False)
    st = run_study("grab", tmp_path / "study" / "study.json", ReplayConfig(**SHORT), sequences=["cubesmall_lift"],
                   workers=0, ablation=False, progress=False)
    assert not st["failed"], st["failed"]
    key = "grab/recordings/cubesmall_lift.pkl"
    assert st["inputs"][key] == {"sha256": _sha(tmp_path / "data" / key), "from": "hashed", "pinned": True,
                                 "manifest": "match"}


def test_the_hand_comes_from_data_too(mirror, tmp_path):
    """``--data`` names where the manosim hand is looked up as well (validate_pose_mapping,
    render_scene), not only the recordings: a staged copy wins over the mirror."""
    from replay.kinematics.coords import default_mjcf

    shutil.copytree(mirror / "manosim", tmp_path / "data" / "manosim")
    got = default_mjcf("right", "zerohand", tmp_path / "data")
    assert got == (tmp_path / "data" / "manosim/assets/zerohand/mano_rhand/capsule_hand.xml").resolve()
    assert default_mjcf("right", "zerohand", tmp_path / "empty").is_relative_to(mirror.resolve())
