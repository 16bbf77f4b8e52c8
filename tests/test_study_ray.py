"""--executor ray: the same results as the process pool, on a local Ray started by the test."""

from __future__ import annotations

import pytest
from test_study import SHORT, _strip

from replay.config import ReplayConfig
from replay.study.runner import run_study

pytestmark = pytest.mark.needs_data

ray = pytest.importorskip("ray", reason="ray is in the dev extra: pip install -e '.[dev]'")

OBJECTS = ["cubesmall"]  # one short recording: the test stays under ~30 s


@pytest.fixture
def local_ray():
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.slow  # a pool study, a study on a local Ray cluster and its resume: 56 s on 2 shared cores (make test-slow)
def test_ray_gives_the_pools_results_and_resumes(tmp_path, mirror, local_ray):
    cfg = ReplayConfig(**SHORT)
    pool = run_study("grab", tmp_path / "pool" / "study.json", cfg, objects=OBJECTS, workers=1, ablation=False,
                     progress=False, data_dir=mirror)
    out = tmp_path / "ray" / "study.json"
    rs = run_study("grab", out, cfg, objects=OBJECTS, ablation=False, progress=False, data_dir=mirror,
                   executor="ray")
    assert rs["failed"] == {} and rs["counts"]["rollouts"] == len(OBJECTS)
    for a, b in zip(pool["rollouts"], rs["rollouts"]):
        assert _strip({k: v for k, v in a.items() if k != "rtf"}) == _strip({k: v for k, v in b.items() if k != "rtf"})
    # resume through Ray: nothing left to run, the rollouts kept as they are
    stamp = {p.name: p.stat().st_mtime_ns for p in (out.parent / "study_rollouts").glob("*.json")}
    again = run_study("grab", out, cfg, objects=OBJECTS, ablation=False, progress=False, data_dir=mirror,
                      executor="ray", resume=True)
    assert again["counts"]["resumed"] == len(OBJECTS) and again["rollouts"] == rs["rollouts"]
    assert {p.name: p.stat().st_mtime_ns for p in (out.parent / "study_rollouts").glob("*.json")} == stamp
