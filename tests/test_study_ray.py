"""--executor ray: the same results as the process pool, on a local Ray started by the test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_study import SHORT, _strip

from replay.config import ReplayConfig
from replay.study.executor import Executor
from replay.study.runner import run_study

pytestmark = pytest.mark.needs_data

ray = pytest.importorskip("ray", reason="ray is in the dev extra: pip install -e '.[dev]'")

OBJECTS = ["cubesmall"]  # one short recording: the test stays under ~30 s


@pytest.fixture
def local_ray(tmp_path, monkeypatch):
    # its workers (started here, with this environment) stage the tasks' inputs in the test's folder
    monkeypatch.setenv("REPLAY_RAY_STAGE", str(tmp_path / "stage"))
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
                   executor=Executor.RAY)
    assert rs["failed"] == {} and rs["counts"]["rollouts"] == len(OBJECTS)
    for a, b in zip(pool["rollouts"], rs["rollouts"]):
        assert _strip({k: v for k, v in a.items() if k != "rtf"}) == _strip({k: v for k, v in b.items() if k != "rtf"})
    # resume through Ray: nothing left to run, the rollouts kept as they are
    stamp = {p.name: p.stat().st_mtime_ns for p in (out.parent / "study_rollouts").glob("*.json")}
    again = run_study("grab", out, cfg, objects=OBJECTS, ablation=False, progress=False, data_dir=mirror,
                      executor=Executor.RAY, resume=True)
    assert again["counts"]["resumed"] == len(OBJECTS) and again["rollouts"] == rs["rollouts"]
    assert {p.name: p.stat().st_mtime_ns for p in (out.parent / "study_rollouts").glob("*.json")} == stamp


def _count(job) -> None:
    """Note one more attempt at ``job``: a line in $TEST_ATTEMPTS (every local worker sees it)."""
    with open(os.environ["TEST_ATTEMPTS"], "a") as f:
        f.write(job.sequence + "\n")


def fails_in_our_code(job):
    """A job whose code raises (after run_job_safe's net: what escapes it, not retried) or errs."""
    _count(job)
    if job.sequence == "cubesmall_lift":
        raise RuntimeError("a bug in our code")
    return "error", "ValueError: a bug caught by run_job_safe"


def crashes_its_worker(job):
    """A job whose worker process dies (as in a crash in native code)."""
    _count(job)
    os._exit(134)


@pytest.mark.slow  # a local Ray and 2 + 1 + TASK_RETRIES worker processes: 30 s on 2 shared cores (make test-slow)
def test_an_error_in_our_code_is_not_retried_a_dead_worker_is(tmp_path, mirror, monkeypatch):
    from replay.study.job import Job
    from replay.study.ray_pool import TASK_RETRIES, run_jobs_ray

    monkeypatch.setenv("TEST_ATTEMPTS", str(tmp_path / "attempts"))
    monkeypatch.setenv("REPLAY_RAY_STAGE", str(tmp_path / "stage"))
    tests = str(Path(__file__).resolve().parent)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([str(Path(tests).parent), tests])}})
    try:
        jobs = [Job("grab", f"{o}_lift", str(mirror), {}, str(mirror / "manosim"), str(tmp_path / "out"),
                    str(tmp_path / "out" / "study_rollouts"), ablation=False) for o in ("cubesmall", "mug")]
        got = {}
        run_jobs_ray(jobs, fails_in_our_code, lambda j, s, v: got.update({j.sequence: (s, v)}))
        assert got["cubesmall_lift"][0] == "error" and "a bug in our code" in got["cubesmall_lift"][1]
        assert got["mug_lift"] == ("error", "ValueError: a bug caught by run_job_safe")
        run_jobs_ray(jobs[:1], crashes_its_worker, lambda j, s, v: got.update({"crash": (s, v)}))
        assert got["crash"][0] == "error" and "WorkerCrashedError" in got["crash"][1]
    finally:
        ray.shutdown()
    attempts = (tmp_path / "attempts").read_text().split()
    # once each in our code; a dead worker looks to Ray like a lost node: rerun TASK_RETRIES times
    assert attempts.count("mug_lift") == 1 and attempts.count("cubesmall_lift") == 1 + 1 + TASK_RETRIES
    assert not (tmp_path / "out").exists()  # nothing of a failed job reaches the study's folder
