"""``grasp-replay`` from an installed wheel: the commands live in the package
(:mod:`replay.commands`), nothing is read from a source checkout.

The wheel is built from a copy of the checkout (``pip wheel --no-deps``; the build backend
comes from pip's cache or index, as ``make setup`` gets it), installed with ``--no-deps`` in a
fresh virtual environment that sees this environment's dependencies through a ``.pth`` path
(not its editable install of grasp-replay: a path entry does not run the ``.pth`` files in
it), and run from a folder outside the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: a study in seconds (as tests/test_first_hour.py)
SHORT = dict(approach_window_s=0.3, settle_s=0.1, lift={"lift_height": 0.04, "lift_s": 0.3, "hold_s": 0.2, "lifted_min_rise": 0.02})


def _copy_checkout(dest: Path) -> Path:
    keep = ["pyproject.toml", "README.md", "replay", "importer_patches"]
    dest.mkdir(parents=True)
    for name in keep:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """``bin/`` of a fresh venv with the grasp-replay wheel installed."""
    base = tmp_path_factory.mktemp("wheel")
    src = _copy_checkout(base / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base / "dist"), str(src)],
                   check=True, capture_output=True, text=True, timeout=600)
    (wheel,) = (base / "dist").glob("grasp_replay-*.whl")
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "grasp_replay_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
                   check=True, capture_output=True, text=True, timeout=600)
    return env_dir / "bin"


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env


@pytest.mark.slow
def test_grasp_replay_runs_from_an_installed_wheel(installed, mirror, tmp_path):
    where = subprocess.run([str(installed / "python"), "-c", "import replay, replay.commands; print(replay.__file__)"],
                           cwd=tmp_path, env=_env(), capture_output=True, text=True, check=True).stdout
    assert str(ROOT) not in where and "site-packages" in where  # the wheel's copy, not the checkout
    res = subprocess.run([str(installed / "grasp-replay"), "--help"], cwd=tmp_path, env=_env(), capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0 and "study" in res.stdout and "validate pose-mapping" in res.stdout, res.stderr
    (tmp_path / "short.json").write_text(json.dumps(SHORT))
    res = subprocess.run([str(installed / "grasp-replay"), "study", "--dataset", "grab", "--objects", "cubesmall",
                          "--data", str(mirror), "--workers", "1", "--no-ablation", "--quiet", "--config", "short.json",
                          "--out", "out/study.json"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-3000:]
    study = json.loads((tmp_path / "out" / "study.json").read_text())
    assert study["counts"]["rollouts"] == 1 and study["failed"] == {}
    assert [r["sequence"] for r in study["rollouts"]] == ["cubesmall_lift"]
