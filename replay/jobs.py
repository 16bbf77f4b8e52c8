"""Run a study's jobs in worker processes so that a dead worker costs one recording, not the study.

:class:`concurrent.futures.ProcessPoolExecutor` turns the death of one worker (a
segmentation fault in native code: the simulator, a mesh or decomposition library; the
kernel's OOM killer) into ``BrokenProcessPool`` for *every* job still running or queued.
:func:`run_jobs` recovers from that:

1. each job touches a marker file when it starts and removes it when it ends, so after a
   break the jobs that were running (at most ``workers``) are known;
2. each of those runs again alone, in its own process: if it dies again it is the culprit
   and is reported with the signal (``"error"``, one line), otherwise its result is kept;
3. the jobs that had not started go to a fresh pool, and so on until all are done.

Workers are started with the ``spawn`` method (no fork of a process that holds threads or a
GPU context). ``fn`` must be a module-level function returning ``(status, value)``.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from replay.isolate import signal_name


def _tracked(fn: Callable, marker: str, job):
    """Worker entry: ``fn(job)`` with a marker file present while it runs."""
    Path(marker).write_text(str(os.getpid()))
    try:
        return fn(job)
    finally:
        try:
            os.unlink(marker)
        except OSError:
            pass


def _alone_child(conn, fn: Callable, job) -> None:
    try:
        conn.send(fn(job))
    finally:
        conn.close()


def died_message(exitcode: int | None) -> str:
    """One line for a job whose process died (``exitcode``: ``Process.exitcode``, -N for signal N)."""
    how = signal_name(exitcode) if exitcode is not None else "unknown cause"
    return (f"the worker process died ({how}) while replaying this recording: a crash in native code (simulator, "
            "mesh or decomposition library); the study goes on with the others. Rerun it alone to investigate "
            "(REPLAY_ISOLATE=0 --workers 0 runs everything in one process, e.g. under gdb)")


def run_alone(fn: Callable, job, ctx=None) -> tuple[str, object]:
    """``fn(job)`` in a fresh process of its own; ``("error", died_message)`` if that process dies."""
    ctx = ctx or mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_alone_child, args=(send, fn, job))
    p.start()
    send.close()
    try:
        result = recv.recv()
    except EOFError:
        result = None
    finally:
        recv.close()
    p.join()
    if result is None:
        return "error", died_message(p.exitcode)
    return result


def run_jobs(jobs: Sequence, fn: Callable, workers: int, on_result: Callable[[object, str, object], None]) -> None:
    """Run ``fn(job)`` for every job in up to ``workers`` spawned processes.

    Args:
        jobs: picklable job descriptions.
        fn: module-level ``fn(job) -> (status, value)`` (``"ok"``/``"error"``).
        workers: processes at most (>= 1).
        on_result: called in this process as each job ends, ``on_result(job, status, value)``;
            a job whose process died gets ``("error", <one line naming the signal>)``.
    """
    ctx = mp.get_context("spawn")
    pending = list(enumerate(jobs))
    while pending:
        with tempfile.TemporaryDirectory(prefix="replay-jobs-") as mdir:
            lost = []
            pool = ProcessPoolExecutor(max_workers=max(1, min(workers, len(pending))), mp_context=ctx)
            try:
                futs = {pool.submit(_tracked, fn, os.path.join(mdir, str(i)), job): (i, job) for i, job in pending}
                for fut in as_completed(futs):
                    i, job = futs[fut]
                    try:
                        status, value = fut.result()
                    except BrokenProcessPool:
                        lost.append((i, job))
                        continue
                    except Exception as e:  # e.g. a result that cannot be pickled: this job only
                        status, value = "error", f"{type(e).__name__}: {e}"
                    on_result(job, status, value)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            if not lost:
                return
            running = [(i, job) for i, job in lost if os.path.exists(os.path.join(mdir, str(i)))]
            suspects = running or lost  # nothing marked (died before starting): try each alone
        for _, job in suspects:
            status, value = run_alone(fn, job, ctx)
            on_result(job, status, value)
        pending = [x for x in lost if x not in suspects]
