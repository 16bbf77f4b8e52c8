"""Every documented command runs: the ``python scripts/...`` and ``python benchmarks/...``
lines of the README's (and docs') command blocks, each on the smallest input it accepts.

Each line is taken as written (``[...]`` optional parts dropped, ``\\`` continuations
joined), then narrowed to one recording and a short window: ``--objects`` / ``--sequences``
cut to one recording (``cubesmall`` where the line names none; the bridge's too), a short protocol through
``--config``, one worker, a 2 x 2 sweep grid, a one-factor attribution, the mirror instead of
the network for ``fetch_data.py``. Every output path the line names is kept, relative to one
shared folder, so a later line reads what an earlier one wrote (``report.py`` the study,
``agreement.py`` two studies), in the README's order. A command that crashes (a traceback, or
an exit status other than 0) fails its test; one that needs a tool this machine lacks (a GL
context to render, a CUDA device) or the network (HUG-Bench is only on the Hugging Face Hub)
is skipped, saying so.

Marked ``slow`` (minutes: each line starts Python and most load the physics); ``.ci/run``
runs it (``make test-slow``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: a study in seconds (as tests/test_first_hour.py)
SHORT = dict(approach_window_s=0.3, settle_s=0.1, lift={"lift_height": 0.04, "lift_s": 0.3, "hold_s": 0.2, "lifted_min_rise": 0.02})
#: the one recording a line is cut to when it names none, and the one object
ONE = "cubesmall"
_FENCE = re.compile(r"```[\w-]*\n(.*?)```", re.S)
_CMD = re.compile(r"\bpython3?\s+((?:scripts|benchmarks)/\w+\.py|out/[\w/.-]+/replay_export\.py)(?=\s|$)(.*)")


def documented_commands() -> list[tuple[str, str]]:
    """``(where, command line)`` of every ``python scripts|benchmarks/...`` line in a fenced
    block of the README and docs/*.md, and every ``python out/.../replay_export.py`` (an export's
    standalone replay, written by an earlier line), in document order, optional ``[...]`` parts dropped."""
    out = []
    for doc in DOCS:
        for block in _FENCE.findall(doc.read_text()):
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                m = _CMD.search(line.split("  #")[0].split(" # ")[0])
                if m:
                    args = re.sub(r"\[[^\]]*\]", " ", m.group(2))
                    out.append((doc.name, f"{m.group(1)} {' '.join(args.split())}".strip()))
    return out


def _set(argv: list[str], flag: str, *values: str) -> list[str]:
    """``argv`` with ``flag``'s values replaced (or the flag added); no values: the flag removed."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == flag:
            i += 1
            while i < len(argv) and not argv[i].startswith("--"):
                i += 1
            continue
        out.append(argv[i])
        i += 1
    return out + ([flag, *values] if values else [])


def _first(argv: list[str], flag: str, default: str) -> str:
    if flag in argv:
        i = argv.index(flag) + 1
        if i < len(argv) and not argv[i].startswith("--"):
            return argv[i].split(",")[0]
    return default


def smallest(script: str, argv: list[str], mirror: Path) -> list[str]:
    """The command line narrowed to the smallest input it accepts (module doc)."""
    name = Path(script).stem
    if name == "run_study":
        argv = _set(argv, "--objects", _first(argv, "--objects", ONE))
        argv = _set(_set(argv, "--workers", "1"), "--config", "short.json") + ["--quiet"]
        argv = _set(argv, "--address")  # no cluster here: a local Ray (tests/test_ray_cluster.py starts one)
        if "--refine" in argv:
            argv = _set(argv, "--refine-worlds", "2")
    elif name in ("validate_pose_mapping", "validate_object_frame"):
        argv = _set(_set(argv, "--dataset", "grab"), "--sequences", f"{ONE}_lift")
    elif name == "attribute":
        argv = _set(_set(argv, "--objects", ONE), "--factors", "defaults")
    elif name == "gripper_check" or (name == "bridge" and "--markdown" not in argv):
        argv = _set(argv, "--objects", ONE)
    elif name == "run_sweep":
        argv = _set(_set(_set(argv, "--objects", ONE), "--grid", "effort=0.2:0.6:2,mu=0.5:1.0:2"), "--perturb", "1")
    elif name == "render_montage":
        argv = _set(argv, "--size", "160x120")  # the shared study holds three recordings
    elif name == "render_scene":
        argv = _set(_set(argv, "--size", "160x120"), "--after", "0.2") + ["--before", "0.2"]
    elif name == "fetch_data":
        argv = _fetch_offline(argv, mirror)
    elif name == "engine":
        argv = _set(_set(_set(argv, "--objects", ONE), "--worlds", "2"), "--repeats", "1") + ["--no-study"]
    return argv


def _fetch_offline(argv: list[str], mirror: Path) -> list[str]:
    """fetch_data.py from the mirror, never the network: one dataset, one scene, into its own
    folder (``fetched/``; ``data/`` is what the other lines read)."""
    if "--verify" in argv:
        return argv + ["--dest", "fetched"]
    if "--local" in argv:
        return _set(argv, "--local", str(mirror)) + ["--link", "symlink", "--quiet", "--dest", "fetched_own"]
    ds = _first(argv, "--dataset", "manosim")
    argv = _set(argv, "--dataset", "manosim" if ds == "all" else ds)
    if "--scenes" in argv:
        argv = _set(argv, "--scenes", _first(argv, "--scenes", "small_2"))
    return _set(argv, "--mirror", str(mirror)) + ["--link", "symlink", "--quiet", "--dest", "fetched"]


COMMANDS = documented_commands()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror) -> Path:
    """One folder every line runs in, with ``data/`` staged from the mirror, the short protocol
    and a study at the paths the
    README's later lines read (``out/grab/study.json``, ``out/study.json``: cubesmall and mug
    lifted, mug_pass_1 on the recorded protocol)."""
    from replay.data.fetch import fetch

    d = tmp_path_factory.mktemp("readme")
    (d / "short.json").write_text(json.dumps(SHORT))
    for ds in ("manosim", "grab"):  # data/ as `make fetch` leaves it: GRAB's lifts and other intents
        fetch(ds, d / "data", mirror=mirror, link="symlink", progress=False)
    for out in ("out/grab/study.json", "out/study.json"):
        res = _run(["scripts/run_study.py", "--dataset", "grab", "--objects", f"{ONE},mug,mug_pass_1", "--protocol",
                    "lift,recorded", "--recorded-max-s", "0.5", "--workers", "1", "--quiet", "--config", "short.json",
                    "--out", out], d)
        assert res.returncode == 0, res.stderr[-2000:]
    return d


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
    script, rest = argv[0], argv[1:]
    path = cwd / script if script.startswith("out/") else ROOT / script  # an export's replay_export.py
    return subprocess.run([sys.executable, str(path), *rest], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def test_the_documents_hold_commands():
    """The parser finds the command blocks (else the smoke test below would check nothing)."""
    scripts = {c.split()[0] for _, c in COMMANDS}
    assert len(COMMANDS) >= 20 and {"scripts/run_study.py", "scripts/report.py", "scripts/fetch_data.py"} <= scripts
    for _, c in COMMANDS:
        if not c.startswith("out/"):  # out/...: written by an earlier line
            assert (ROOT / c.split()[0]).is_file(), f"documented command names a missing file: {c}"


@pytest.mark.slow
@pytest.mark.needs_data
@pytest.mark.parametrize("where,command", COMMANDS, ids=[f"{i:02d}-{Path(c.split()[0]).stem}"
                                                        for i, (_, c) in enumerate(COMMANDS)])
def test_documented_command_runs(where, command, workdir, mirror):
    script, *argv = shlex.split(command)
    argv = smallest(script, argv, mirror)
    if "--executor" in argv and "ray" in argv:
        pytest.importorskip("ray")
    res = _run([script, *argv], workdir)
    err = res.stderr[-3000:]
    if res.returncode != 0 and re.search(r"no display|EGL|OSMesa|GL context|CUDA device", err) and \
            not os.environ.get("CI"):
        pytest.skip(f"needs a tool this machine lacks: {err.strip().splitlines()[-1][:200]}")
    if res.returncode != 0 and re.search(r"huggingface\.co|no offline mirror holds HUG-Bench", err):
        # HUG-Bench is only on the Hugging Face Hub: no offline mirror holds it (README, Data sources)
        pytest.skip(f"needs the Hugging Face Hub: {err.strip().splitlines()[-1][:200]}")
    assert "Traceback" not in err, f"{where}: {command}\n-> {' '.join(argv)}\n{err}"
    assert res.returncode == 0, f"{where}: {command}\n-> {' '.join(argv)} (exit {res.returncode})\n{err}"
