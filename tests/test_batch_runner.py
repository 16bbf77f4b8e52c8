"""The one batch runner (replay.study.batch.run_batch): isolation, resume, writes, the pool, the
executor seam the study uses, Ctrl-C. No data needed: the jobs are arithmetic."""

from __future__ import annotations

import pytest

from batch_jobs import square_or_fail
from replay.study.batch import run_batch


def test_in_process_isolates_bad_input_resumes_and_writes():
    written = []
    res = run_batch(["r2", "bad", "r3", "r5"], square_or_fail, write=lambda k, r: written.append(k),
                    resume=lambda k: {"key": k, "n2": -1} if k == "r5" else None, on_fail=lambda k, e: None)
    assert res.results == {"r2": {"key": "r2", "n2": 4}, "r3": {"key": "r3", "n2": 9}, "r5": {"key": "r5", "n2": -1}}
    assert list(res.failed) == ["bad"] and "bad.npz" in res.failed["bad"] and "pose" in res.failed["bad"]
    assert written == ["r2", "r3"] and res.resumed == ["r5"] and not res.interrupted
    assert res.versions["mujoco"] == "3.17.0"


def test_programming_errors_propagate_in_process():
    with pytest.raises(ValueError):  # int("x"): not an isolate error
        run_batch(["rx"], square_or_fail)


def test_pool_worker_that_dies_costs_its_key_only():
    """workers > 1: replay.study.pool's spawned workers; a process that exits mid-job fails that key alone."""
    res = run_batch(["r1", "die", "r4", "bad"], square_or_fail, workers=2, on_fail=lambda k, e: None)
    assert res.results == {"r1": {"key": "r1", "n2": 1}, "r4": {"key": "r4", "n2": 16}}
    assert set(res.failed) == {"die", "bad"}
    assert "exit" in res.failed["die"].lower() or "died" in res.failed["die"].lower(), res.failed["die"]


def test_executor_seam_and_ctrl_c_reraised_for_the_caller():
    """The study's use: its own executor and on_result; a Ctrl-C sets ``interrupted`` and is re-raised."""
    seen = []

    def executor(keys, fn, handle):
        for k in keys:
            if k == "r3":
                raise KeyboardInterrupt
            handle(k, *fn(k))

    def job(k):
        return ("ok", {"k": k}) if k != "bad" else ("refused", "bad input")

    with pytest.raises(KeyboardInterrupt):
        run_batch(["r1", "bad", "r3", "r4"], job, executor=executor, on_result=lambda k, s, v: seen.append((k, s)))
    assert seen == [("r1", "ok"), ("bad", "refused")]
    res = run_batch(["r1", "bad"], job, executor=executor, on_result=lambda k, s, v: None)
    assert res.failed == {"bad": "bad input"} and res.results == {"r1": {"k": "r1"}}


def test_ctrl_c_without_on_result_keeps_what_was_done():
    def executor(keys, fn, handle):
        handle(keys[0], *fn(keys[0]))
        raise KeyboardInterrupt

    res = run_batch(["r2", "r3"], square_or_fail, executor=executor)
    assert res.interrupted and res.results == {"r2": {"key": "r2", "n2": 4}}
