"""Where a batch's jobs run: in this process, in the process pool or as Ray tasks; the one rule for when work
runs in this process (docs/study.md, "How a batch runs")."""

from __future__ import annotations

import enum
from collections.abc import Callable

from replay.study.pool import JOB_TIMEOUT_S, run_jobs
from replay.study.worker_imports import import_physics


class Executor(enum.Enum):
    """Where jobs run; ``--executor`` offers :meth:`cli_choices` (this process: ``--workers 0``)."""

    IN_PROCESS = "in-process"  # no crash isolation (debugging, benchmarks)
    POOL = "pool"  # replay.study.pool: a worker that dies costs its own job only
    RAY = "ray"  # replay.study.ray_pool: one Ray task per job

    @classmethod
    def cli_choices(cls) -> list[str]:
        return [e.value for e in cls if e is not cls.IN_PROCESS]


def runs_here(workers: int) -> bool:
    """The one rule: jobs run in this process when no worker process is asked for (``workers <= 0``)."""
    return workers <= 0


def where_run(workers: int | None) -> str:
    """``"in this process"`` or ``"on N worker process(es)"`` (the console's and the report's words)."""
    return "in this process" if runs_here(workers or 0) else f"on {workers} worker process(es)"


def executor(
    kind: Executor = Executor.POOL,
    workers: int = 0,
    *,
    timeout_s: float | None = JOB_TIMEOUT_S,
    address: str | None = None,
    say: Callable[[str], None] | None = None,
) -> Callable:
    """``run(jobs, fn, handle)`` for :func:`replay.study.batch.run_batch`, ``handle(job, status, value)`` called
    here as each job ends: Ray tasks (``kind`` RAY; ``address``: the cluster, None: a local Ray; ``say``: a console
    line, where Ray listens), else in this process (``kind`` IN_PROCESS or :func:`runs_here`), else up to
    ``workers`` pool processes (``timeout_s``: a job's limit, s; None: none)."""
    if kind is Executor.RAY:
        return lambda jobs, fn, handle: _on_ray(jobs, fn, handle, address, say)
    if kind is Executor.IN_PROCESS or runs_here(workers):
        return _in_process
    return lambda jobs, fn, handle: run_jobs(
        jobs, fn, workers, on_result=handle, timeout_s=timeout_s, warm=import_physics
    )


def _in_process(jobs: list, fn: Callable, handle: Callable) -> None:
    if jobs:  # as a pool worker does (warm): the physics imported once, before the first job
        import_physics()
    for job in jobs:
        handle(job, *fn(job))


def _on_ray(jobs: list, fn: Callable, handle: Callable, address: str | None, say) -> None:
    from replay.study.ray_pool import run_jobs_ray  # imported only when asked for: Ray takes seconds to import

    run_jobs_ray(jobs, fn, handle, address=address, say=say)
