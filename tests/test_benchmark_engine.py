"""benchmarks/engine.py on one recording: the figures it prints are of the same physics.

Speed is not asserted (targets live in the benchmark's output, not in timed tests);
what is asserted is that the raw MuJoCo side replays exactly what the engine did.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs_data

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("engine_bench", ROOT / "benchmarks" / "engine.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_engine_benchmark_compares_the_same_physics(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    out = tmp_path / "engine.json"
    assert _bench().main(["--objects", "cubesmall", "--no-study", "--repeats", "1", "--batch-repeats", "1",
                          "--worlds", "2", "--threads", "2", "--batch-worlds", "2", "--data", str(tmp_path / "none"),
                          "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    row = doc["objects"]["cubesmall"]
    # the full protocol of a lifted recording: settle + approach + lift + hold + shake at 240 Hz
    assert row["frames"] > 200 and row["steps"] == row["frames"] * 8
    assert row["raw_replay_bit_identical"] is True
    assert row["engine_ms_per_step"] > 0 and row["mujoco_ms_per_step"] > 0
    assert row["ratio"] == pytest.approx(row["engine_ms_per_step"] / row["mujoco_ms_per_step"])
    assert row["our_ms_per_step"] == pytest.approx(row["engine_ms_per_step"] - row["mujoco_ms_per_step"])
    grid = [(b["worlds"], b["threads"], b["kind"]) for b in row["batches"]]
    assert grid == [(2, 1, "identical"), (2, 1, "friction"), (2, 2, "identical"), (2, 2, "friction")]
    for b in row["batches"]:
        assert b["world_steps"] > 0
        assert b["efficiency"] == pytest.approx(row["mujoco_ms_per_step"] / (b["ms_per_world_step"] * b["threads"]))
        # raw MuJoCo replaying the batch's own recorded controls reaches every world's end state exactly
        assert b["raw_same_work_bit_identical"] is True
        assert b["efficiency_same_work"] == pytest.approx(b["raw_same_work_s"] / b["wall_s"])
        ideal = b["world_steps"] * row["mujoco_ms_per_step"] * 1e-3 / b["threads"]
        assert b["raw_efficiency"] == pytest.approx(ideal / b["raw_same_work_s"])
    assert 0.0 < row["cpu_ratio"] < 20.0  # thread CPU time, engine over raw: a positive, finite ratio
    assert doc["versions"]["mujoco"] == "3.17.0" and doc["machine"]["cpu_count"] >= 1
    # the machine's own 2-thread ceiling, measured before and after the objects: a share of one thread's
    # speed per thread (two threads cannot each run faster than one alone, beyond timing noise)
    start, end = doc["machine"]["core_scaling"]["2"]
    assert 0.0 < start < 1.3 and 0.0 < end < 1.3


def test_core_scaling_sees_a_thread_that_holds_the_gil():
    # the probe must measure real concurrency: a work function that cannot run in parallel (a pure
    # Python loop, serialised by the GIL) gives two threads about half of one thread's speed each
    bench = _bench()

    def python_work(n):
        x = 0
        for i in range(n):
            x += i
        return x

    assert bench.core_scaling(2, seconds=0.05, work=python_work) < 0.75


def test_engine_benchmark_rejects_bad_options(mirror, monkeypatch):
    from replay.cli import run

    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    bench = _bench()
    assert run(lambda: bench.main(["--objects", "nosuchobject", "--no-study"])) == 2
    assert run(lambda: bench.main(["--objects", "cubesmall", "--worlds", "0", "--no-study"])) == 2
    assert run(lambda: bench.main(["--objects", "cubesmall", "--batch-repeats", "0", "--no-study"])) == 2


def _refine_bench():
    spec = importlib.util.spec_from_file_location("refine_bench", ROOT / "benchmarks" / "refine.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow  # benchmarks/refine.py on 2 CEM worlds of the full cubesmall plan: 46 s on 2 shared cores (load 5)
def test_refine_benchmark_replays_the_searchs_worlds(mirror, tmp_path, monkeypatch):
    """benchmarks/refine.py on two CEM worlds of cubesmall: the controls it records (the batch's
    ``recorder`` hook) replay through ``mujoco.rollout`` to the search's final states bit for bit, one
    physics step per recorded control (a spy on a MuJoCo function the engine no longer calls recorded
    nothing and the replay raised)."""
    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    out = tmp_path / "refine.json"
    assert _refine_bench().main(["--objects", "cubesmall", "--worlds", "2", "--threads", "1", "--repeats", "1",
                                 "--data", str(tmp_path / "none"), "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["raw_replay_bit_identical"] is True and row["worlds"] == 2
    assert row["world_steps"] >= 2 * 100 * 8  # two worlds, each stepped at least into the lift, 8 steps a frame
    assert 0 < row["share_of_raw"] < 5
