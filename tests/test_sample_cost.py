"""benchmarks/sample_cost.py on a short run: its figures are made of what it measured, each sample a world.

Speed targets are not asserted here (they live in the benchmark, as ratios of one run); what is:
the samples are drawn as documented, every N ran N worlds, stepping is part of the time that holds
it, and the top-level figures are the documented ratios of the rows.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.needs_data
ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("sample_cost", ROOT / "benchmarks" / "sample_cost.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_samples_are_seeded_and_in_range():
    bench = _bench()
    a, b = bench.draw_samples(16, 0.2), bench.draw_samples(16, 0.2)
    assert a == b and len(a) == 16 and not a[0].edits_model and not a[0].perturbs_wrist
    assert all(0.5 <= v.friction <= 1.5 and 0.16 <= v.object_mass <= 0.24 for v in a[1:])
    assert np.max(np.abs([v.wrist_offset for v in a[1:]])) < 0.01  # N(0, 2 mm): 5 sigma


@pytest.mark.slow  # three short batches of a real recording, each twice (the profiled pass), its raw replay, and two whole
# rollouts in mujoco.batch against the engine's batch (--compare-batch 2): ~35 s on 2 shared cores
def test_short_run_writes_the_figures_of_its_rows(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    out = tmp_path / "sc.json"
    bench = _bench()
    assert bench.main(["--recordings", "cubesmall_lift,mug_lift", "--sizes", "2,4", "--frame-limit", "60",
                       "--compare-batch", "2", "--budget-s", "0", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["budget_stopped"] and len(doc["recordings"]) == 1  # the budget spent: mug_lift not started
    row = doc["recordings"][0]
    vs = doc["compare_batch"][0]
    assert vs["recording"] == "cubesmall_lift" and vs["n"] == 2 and set(vs["mjc"]) == set(vs["mujoco_batch"]) == {"threads1", "threads2"}
    # mujoco.batch is bit for bit one MjData stepped with the same inputs (its documented claim), and ends
    # where the engine's worlds did, bit for bit (the same mj_step on the same inputs)
    assert vs["agree"]["max_abs_qpos"] == 0.0 and vs["agree"]["max_abs_xpos_vs_engine"] == 0.0
    t1 = doc["mujoco_batch_over_mjc"]["threads1_cpu_s"]
    assert t1 == pytest.approx(vs["mujoco_batch"]["threads1"]["cpu_s"] / vs["mjc"]["threads1"]["cpu_s"])
    assert [x["n"] for x in row["samples"]] == [2, 4]
    for x in [row["one"], *row["samples"]]:
        assert 0 < x["stepping_s"] < x["cpu_s"]
    lo, hi = row["samples"]
    assert hi["stepping_s"] > lo["stepping_s"]  # two more worlds stepped
    assert doc["extra_sample_cost_ratio"] == pytest.approx((hi["cpu_s"] - lo["cpu_s"]) / (hi["stepping_s"] - lo["stepping_s"]))
    assert doc["stepping_share"] == pytest.approx(hi["stepping_s"] / hi["cpu_s"])  # no 32: the largest N
    assert 0 < doc["batch_efficiency_1thread"] and row["raw_step_s"] > 0
    from replay.output.tables import table

    text = table("sample_cost", doc)
    assert "cubesmall_lift" in text and "goal at most 1.25x" in text


@pytest.mark.slow  # mujoco-warp on Warp's CPU device (~15 ms a step): three frames of three short batches, ~35 s on 2 shared cores
def test_the_gpu_path_runs_on_warps_cpu_device(mirror, tmp_path, monkeypatch):
    """``--device cuda``'s path (mujoco-warp, every sample a world of one launch), on Warp's CPU device."""
    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    out = tmp_path / "scw.json"
    assert _bench().main(["--device", "warp-cpu", "--recordings", "cubesmall_lift", "--sizes", "2,3",
                          "--frame-limit", "3", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    row = doc["recordings"][0]
    assert doc["device"] == "warp-cpu" and row["one"]["cpu_s"] is None and "batch_efficiency" not in doc
    assert all(x["stepping_s"] > 0 and x["wall_s"] > 0 for x in row["samples"])
    assert doc["samples_per_min"] == pytest.approx(60 * 3 / row["samples"][-1]["wall_s"])
