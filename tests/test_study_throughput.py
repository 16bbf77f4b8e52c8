"""benchmarks/study_throughput.py: runs the study in each checkout in turn and reports what it ran."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "study_throughput.py"


def _run(*args, env=None):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, cwd=ROOT)


def test_bad_arguments_are_one_line_usage_errors(tmp_path):
    r = _run("--tree", f"old={tmp_path}", "--", "--dataset", "grab")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0
    assert "--tree" in r.stderr and "scripts/run_study.py" in r.stderr
    r = _run("--tree", f"new={ROOT}", "--", "--dataset", "grab", "--out", str(tmp_path / "x.json"))
    assert r.returncode == 2 and "--out is set per run" in r.stderr
    r = _run("--tree", f"new={ROOT}", "--rounds", "0")
    assert r.returncode == 2 and "--rounds" in r.stderr


@pytest.mark.needs_data
@pytest.mark.slow  # two in-process studies of one recording, each importing the physics stack: ~25 s on 2 cores
def test_two_trees_in_turn_count_the_rollouts_each_ran(mirror, tmp_path):
    import os

    env = dict(os.environ, REPLAY_MIRROR=str(mirror))
    out = tmp_path / "t.json"
    data = os.path.relpath(mirror, ROOT)  # relative to ROOT, where _run starts the script
    r = _run("--tree", f"a={ROOT}", "--tree", f"b={ROOT}", "--rounds", "1", "--no-warmup",
             "--keep", str(tmp_path / "k"), "--json", str(out),
             "--", "--dataset", "grab", "--objects", "cubesmall", "--workers", "0", "--data", data, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    for name in ("a", "b"):
        (run,) = doc["runs"][name]
        assert run["rollouts"] == 2  # cubesmall's contact run and its ablation
        assert run["wall_s"] > 0 and run["cpu_s"] > 0
        assert (tmp_path / "k" / f"{name}_1" / "study.json").is_file()
    assert doc["summary"]["a"]["best_ratio"] == 1.0
    b = doc["summary"]["b"]
    rate = 60 * 2 / doc["runs"]["b"][0]["wall_s"]
    assert b["best_per_min"] == pytest.approx(rate)
    assert b["best_ratio"] == pytest.approx(rate / doc["summary"]["a"]["best_per_min"])
    # the jobs' own time: the kept rollout's wall_s_total, read back here
    kept = json.loads((tmp_path / "k" / "b_1" / "study_rollouts" / "cubesmall_lift.json").read_text())
    assert doc["runs"]["b"][0]["jobs_s"] == pytest.approx(kept["timing"]["wall_s_total"])
    assert 0 < doc["runs"]["b"][0]["jobs_s"] < doc["runs"]["b"][0]["wall_s"]
    assert doc["made_by"].startswith("python benchmarks/study_throughput.py --tree") and doc["tree_commits"]["a"]
    assert str(ROOT) not in doc["made_by"] and str(ROOT) not in json.dumps(doc["trees"])  # no machine's path
    from replay.output.tables import table

    md = table("throughput", doc)
    assert md.count("\n") == 4 and f"{b['median_per_min']:.0f} ({b['median_ratio']:.2f}x)" in md
    assert "round 1 a" in r.stdout and "round 1 b" in r.stdout
    assert doc["study_args"][-1] == str(mirror)  # --data made absolute: each study runs in its own tree


@pytest.mark.needs_data
@pytest.mark.slow  # two studies of one recording, one sampled (--envelope = --samples 32, 2 conditions): ~90 s on 2 cores
def test_envelope_too_counts_the_envelope_s_rollouts(mirror, tmp_path):
    import os

    from replay.study.sampling_setup import DEFAULT_SAMPLES

    env = dict(os.environ, REPLAY_MIRROR=str(mirror))
    out = tmp_path / "t.json"
    r = _run("--tree", f"a={ROOT}", "--rounds", "1", "--no-warmup", "--envelope-too", "--json", str(out),
             "--", "--dataset", "grab", "--objects", "cubesmall", "--workers", "0", "--data", str(mirror), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    assert doc["runs"]["a"][0]["rollouts"] == 2
    # --envelope is the sampled verdict's alias: 2 default conditions x 32 samples besides the contact run and ablation
    assert doc["runs"]["a+envelope"][0]["rollouts"] == 2 + 2 * DEFAULT_SAMPLES
    assert "round 1 a+envelope" in r.stdout and "s/recording" in r.stdout
