"""Run a study's jobs as Ray tasks: one task per recording, on a local Ray or an existing cluster.

The process pool (:mod:`replay.study.pool`) stays the default; this executor is for studies that
outgrow one machine (``run_study.py --executor ray --address ray://head:10001`` or
``--address auto`` on a cluster node). Each job is a Ray task of one CPU that returns the
same ``(status, value)`` pair as in the pool; results are written by the task to the study's
folder (a shared file system on a cluster) and reported to the study's process as tasks end,
so resume and the study JSON work as with the pool.

A task whose worker dies (a crash in native code) is reported as that recording's error
(``ray.exceptions.WorkerCrashedError`` and friends), not retried (``max_retries=0``: a
deterministic crash would only crash again). Ctrl-C cancels every task not yet finished
(``ray.cancel(force=True)`` ends running ones) and re-raises.

Requires ``ray`` (``pip install 'grasp-replay[cluster]'``); see https://docs.ray.io/.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from replay.errors import UsageError


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError("--executor", "ray is not installed: pip install 'grasp-replay[cluster]'") from None
    return ray


def _task(fn: Callable, job):
    """The Ray task: ``fn(job)`` with Ctrl-C left to the driver."""
    return fn(job)


def run_jobs_ray(jobs: Sequence, fn: Callable, on_result: Callable[[object, str, object], None],
                 address: str | None = None, num_cpus: int | None = None) -> None:
    """Run ``fn(job)`` for every job as a Ray task; ``on_result(job, status, value)`` as each ends.

    Args:
        jobs: picklable job descriptions.
        fn: module-level ``fn(job) -> (status, value)``.
        on_result: called in this process as each task ends; a task that failed in Ray
            (worker crash, lost node) gets ``("error", <one line>)``.
        address: a Ray cluster to join (``ray.init(address=...)``); None starts a local Ray
            (``num_cpus`` CPUs, default all) unless this process is already connected.

    Raises:
        UsageError: ray not installed, or the cluster at ``address`` cannot be reached.
        KeyboardInterrupt: Ctrl-C, after the unfinished tasks are cancelled.
    """
    ray = _ray()
    if not ray.is_initialized():
        try:
            # a local Ray's workers import this very checkout (not whatever is installed)
            root = str(Path(__file__).resolve().parent.parent)
            env = None if address else {"env_vars": {"PYTHONPATH": os.pathsep.join(
                [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}}
            ray.init(address=address, num_cpus=None if address else num_cpus, include_dashboard=False,
                     log_to_driver=False, logging_level=logging.ERROR, runtime_env=env)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise UsageError("--address", f"cannot connect to Ray at {address!r}: {e}") from None
    task = ray.remote(num_cpus=1, max_retries=0)(_task)
    refs = {task.remote(fn, job): job for job in jobs}
    pending = list(refs)
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
            for ref in ready:
                try:
                    status, value = ray.get(ref)
                except ray.exceptions.RayError as e:
                    status, value = "error", f"the Ray task of this recording failed: {type(e).__name__}: " \
                                             f"{str(e).splitlines()[0] if str(e) else ''}"
                on_result(refs[ref], status, value)
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
