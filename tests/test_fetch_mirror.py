"""Staging from the real offline mirror: manifest completeness, idempotency, corruption.

The whole mirror (~82 MB) is staged once per session; tests that modify staged files
stage the small TACO dataset (4 files) into their own folder.
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

from replay.data import locate
from replay.data.fetch import fetch
from replay.data.manifest import Manifest, verify
from replay.data.sources import GITHUB_SOURCES
from replay.errors import DataError, FetchError, IntegrityError

ROOT = Path(__file__).resolve().parents[1]
PINNED_DATASETS = ("manosim", "grab", "taco")
COMMITS = {s.commit for s in GITHUB_SOURCES}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pinned() -> dict[str, dict]:
    """The committed pin list (``replay/data/pinned_files.json``): path -> sha256, size."""
    return json.loads((ROOT / "replay" / "data" / "pinned_files.json").read_text())["files"]


def _mirror_files(mirror: Path) -> dict[str, Path]:
    """Every data file of the pinned datasets in the mirror, by staging path; dot-named paths
    (tool and editor leftovers such as ``.pre-commit-config.yaml`` or a stray ``.__tmp.xml``)
    are not data. The mirror keeps GRAB's recordings of other intents in
    ``grab_intents/recordings``: they stage into ``grab/recordings``."""
    files = {}
    for ds in PINNED_DATASETS:
        for p in (mirror / ds).rglob("*"):
            rel = p.relative_to(mirror).as_posix()
            if p.is_file() and not any(part.startswith(".") for part in rel.split("/")):
                files[rel] = p
    for p in (mirror / "grab_intents" / "recordings").glob("*.pkl"):
        files[f"grab/recordings/{p.name}"] = p
    return files


@pytest.fixture(scope="session")
def staged(mirror: Path, tmp_path_factory) -> tuple[Path, list]:
    dest = tmp_path_factory.mktemp("staged")
    results = fetch("all", dest, mirror=mirror, progress=False)
    return dest, results


def _run_cli(*args: str, env_mirror: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REPLAY_MIRROR"}
    if env_mirror is not None:
        env["REPLAY_MIRROR"] = env_mirror
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_data.py"), "--quiet", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_manifest_lists_every_mirror_file_with_its_sha256(staged, mirror):
    dest, results = staged
    expected = _mirror_files(mirror)
    man = json.loads((dest / "MANIFEST.json").read_text())["files"]
    assert set(man) == set(expected)
    assert set(expected) == set(_pinned())  # the mirror holds every pinned file, and no other
    assert all(e["pinned"] is True for e in man.values())
    for key, src in expected.items():
        entry = man[key]
        digest = _sha(src)
        assert entry["sha256"] == digest, key
        assert _sha(dest / key) == digest, key
        assert entry["size"] == src.stat().st_size
        assert entry["source"] == "mirror" and entry["dataset"] == key.split("/")[0]
        assert entry["revision"] in COMMITS and entry["repo"].startswith("https://github.com/")
    # upstream paths follow each repository's layout
    assert man["grab/recordings/mug_lift.pkl"]["upstream_path"] == "data/grab/s1/mug_lift.pkl"
    assert man["grab/recordings/mug_lift.pkl"]["repo"].endswith("fflahm/t800_retargeting")
    assert man["grab/objects/mug/contact0.stl"]["upstream_path"] == "mug/contact0.stl"
    assert man["taco/20231104_010.pkl"]["upstream_path"] == "data/taco/source_data/20231104_010.pkl"
    by_name = {r.dataset: r for r in results}
    assert by_name["hug-bench"].source == "skipped" and "no hug-bench copy" in by_name["hug-bench"].note
    assert sum(r.staged for r in results) == len(expected)


def test_rerun_stages_nothing_new(staged, mirror):
    dest, _ = staged
    before = (dest / "MANIFEST.json").read_bytes()
    mtimes = {p: p.stat().st_mtime_ns for p in dest.rglob("*") if p.is_file()}
    results = fetch("all", dest, mirror=mirror, progress=False)
    assert sum(r.staged for r in results) == 0
    assert sum(r.skipped for r in results) == len(_mirror_files(mirror))
    assert (dest / "MANIFEST.json").read_bytes() == before
    assert {p: p.stat().st_mtime_ns for p in dest.rglob("*") if p.is_file() and p.name != "MANIFEST.json"} == \
        {p: t for p, t in mtimes.items() if p.name != "MANIFEST.json"}


def test_locate_finds_staged_data(staged, monkeypatch):
    dest, _ = staged
    monkeypatch.delenv("REPLAY_MIRROR", raising=False)
    grab = locate.dataset_dir("grab", data_dir=dest)
    assert grab == (dest / "grab").resolve()
    assert (grab / "recordings" / "mug_lift.pkl").is_file()
    assert (locate.dataset_dir("manosim", data_dir=dest) / "assets/myhand/mano_rhand/capsule_hand.xml").is_file()


@pytest.fixture()
def taco_staged(mirror, tmp_path) -> Path:
    dest = tmp_path / "data"
    fetch("taco", dest, mirror=mirror, progress=False)
    return dest


def _corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_verify_detects_corruption_and_moves_file_aside(taco_staged, mirror):
    dest = taco_staged
    bad = dest / "taco" / "20231104_017.obj"
    _corrupt(bad)
    proc = _run_cli("--verify", "--dest", str(dest), "--dataset", "taco")
    assert proc.returncode == 1
    assert "taco/20231104_017.obj" in proc.stderr and "sha256 mismatch" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not bad.exists()  # never left in place as if good
    aside = list(bad.parent.glob("20231104_017.obj.corrupt-*"))
    assert len(aside) == 1
    assert "taco/20231104_017.obj" not in Manifest(dest).files
    # the next fetch re-stages it from the mirror
    results = fetch("taco", dest, mirror=mirror, progress=False)
    assert results[0].staged == 1 and results[0].skipped == 3
    assert _sha(bad) == _sha(mirror / "taco" / "20231104_017.obj")
    assert _run_cli("--verify", "--dest", str(dest)).returncode == 0


def test_next_fetch_detects_corruption(taco_staged, mirror):
    dest = taco_staged
    bad = dest / "taco" / "20231104_010.pkl"
    _corrupt(bad)
    results = fetch("taco", dest, mirror=mirror, progress=False)
    assert results[0].staged == 1
    assert len(results[0].repaired) == 1 and "taco/20231104_010.pkl" in results[0].repaired[0]
    assert _sha(bad) == _sha(mirror / "taco" / "20231104_010.pkl")
    assert len(list(bad.parent.glob("20231104_010.pkl.corrupt-*"))) == 1
    assert verify(dest, fix=False) == []


def test_size_change_detected_without_rehash(taco_staged):
    dest = taco_staged
    (dest / "taco" / "20231104_010.obj").write_bytes(b"truncated")
    problems = verify(dest, fix=False)
    assert [(p.path, p.kind) for p in problems] == [("taco/20231104_010.obj", "size")]


def test_manifest_referencing_missing_file(taco_staged):
    dest = taco_staged
    (dest / "taco" / "20231104_017.pkl").unlink()
    proc = _run_cli("--verify", "--dest", str(dest))
    assert proc.returncode == 1
    assert "taco/20231104_017.pkl: listed in the manifest but missing on disk" in proc.stderr
    assert "taco/20231104_017.pkl" not in Manifest(dest).files


def test_mirror_file_that_differs_from_the_pin_is_refused(mirror, tmp_path):
    fake = tmp_path / "mirror"
    shutil.copytree(mirror / "taco", fake / "taco")
    for p in (fake / "taco").iterdir():
        p.chmod(0o644)
    _corrupt(fake / "taco" / "20231104_010.obj")
    dest = tmp_path / "data"
    with pytest.raises(IntegrityError, match="20231104_010.obj"):
        fetch("taco", dest, mirror=fake, progress=False)
    assert not (dest / "taco" / "20231104_010.obj").exists()
    assert not list((dest / "taco").glob(".*part*"))
    assert "taco/20231104_010.obj" not in Manifest(dest).files


def test_symlink_mode(mirror, tmp_path):
    dest = tmp_path / "data"
    fetch("taco", dest, mirror=mirror, link="symlink", progress=False)
    link = dest / "taco" / "20231104_010.pkl"
    assert link.is_symlink() and link.resolve() == (mirror / "taco" / "20231104_010.pkl").resolve()
    assert Manifest(dest).files["taco/20231104_010.pkl"]["link"] == "symlink"
    assert verify(dest, fix=False) == []


def test_bad_input_errors(mirror, tmp_path, monkeypatch):
    monkeypatch.delenv("REPLAY_MIRROR", raising=False)
    with pytest.raises(FetchError, match="does not exist"):
        fetch("grab", tmp_path / "d", mirror=tmp_path / "nope")
    with pytest.raises(FetchError, match="unknown dataset 'grb'"):
        fetch("grb", tmp_path / "d", mirror=mirror)
    partial = tmp_path / "partial"
    shutil.copytree(mirror / "taco", partial / "taco")
    with pytest.raises(FetchError, match="has no grab/ folder"):
        fetch("grab", tmp_path / "d", mirror=partial)
    os.chmod(partial / "taco", 0o755)
    for p in (partial / "taco").iterdir():
        p.chmod(0o644)
    (partial / "taco" / "20231104_017.obj").unlink()
    with pytest.raises(FetchError, match="lacks 1 of the 4 files of 'taco': taco/20231104_017.obj"):
        fetch("taco", tmp_path / "d", mirror=partial)
    with pytest.raises(DataError, match="no manifest"):
        verify(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "MANIFEST.json").write_text("{not json")
    with pytest.raises(DataError, match="MANIFEST.json: not valid JSON"):
        verify(tmp_path / "bad")


def test_cli_errors_are_messages_not_tracebacks(tmp_path):
    proc = _run_cli("--dataset", "all", "--dest", str(tmp_path / "d"), "--mirror", str(tmp_path / "missing"))
    assert proc.returncode == 1
    assert "missing" in proc.stderr and "does not exist" in proc.stderr and "Traceback" not in proc.stderr
    proc = _run_cli("--dataset", "mano", "--dest", str(tmp_path / "d"), env_mirror=str(tmp_path))
    assert proc.returncode == 2 and "'mano'" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_end_to_end_all_from_mirror(mirror, tmp_path):
    dest = tmp_path / "data"
    proc = _run_cli("--mirror", str(mirror), "--dataset", "all", "--dest", str(dest))
    assert proc.returncode == 0, proc.stderr
    files = _mirror_files(mirror)
    n_grab = sum(1 for k in files if k.startswith("grab/"))
    assert f"grab: {n_grab} file(s) staged from mirror" in proc.stdout and f"[{n_grab} pinned, 0 unpinned]" in proc.stdout
    assert "hug-bench: skipped" in proc.stdout
    man = json.loads((dest / "MANIFEST.json").read_text())["files"]
    assert set(man) == set(files)
    key = "grab/recordings/mug_lift.pkl"
    assert man[key]["sha256"] == _sha(mirror / key)
    # REPLAY_MIRROR works as the default mirror; a re-run stages nothing
    proc = _run_cli("--dataset", "all", "--dest", str(dest), env_mirror=str(mirror))
    assert proc.returncode == 0 and f"grab: 0 file(s) staged from mirror (0.0 MB), {n_grab} already" in proc.stdout


def test_pin_list_is_reproducible_from_the_mirror(mirror, tmp_path):
    """The committed pin list is exactly what scripts/pin_sources.py derives from the mirror."""
    out = tmp_path / "pins.json"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "pin_sources.py"), "--mirror", str(mirror),
                           "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text()) == json.loads((ROOT / "replay" / "data" / "pinned_files.json").read_text())
