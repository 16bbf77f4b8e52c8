"""Run a study's jobs in spawned worker processes so that a dead or hung worker costs one recording, not the study
(how: docs/study.md, "How a batch runs")."""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from replay.data.isolate import signal_name

#: wall-clock limit of one job, s (SIGALRM, then failed as hung); above a cold CoACD decomposition
JOB_TIMEOUT_S = 1800.0


def _exit_with_parent(parent_pid: int, period_s: float = 1.0) -> None:
    """Worker initializer: exit once re-parented (the study's process killed outright), polled every ``period_s`` s."""

    def watch():
        while True:
            time.sleep(period_s)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
    # Ctrl-C reaches the whole process group: the study's process handles it (it ends the workers)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _init_worker(parent_pid: int, warm: Callable[[], None] | None) -> None:
    """Worker initializer: :func:`_exit_with_parent`, then ``warm()``; its error is left to the first job."""
    _exit_with_parent(parent_pid)
    if warm is not None:
        try:
            warm()
        except Exception:  # noqa: BLE001 (the job's own import raises it again, with its recording named)
            pass


def _stop_pool(pool: ProcessPoolExecutor, grace_s: float = 0.5) -> None:
    """Cancel the queued jobs and end the running workers (SIGTERM, then SIGKILL after ``grace_s``)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    end = time.monotonic() + grace_s
    for p in procs:
        p.join(max(0.0, end - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(0.2)


def _alarm(timeout_s: float | None) -> bool:
    """Arm SIGALRM in ``timeout_s`` s (it ends the process); False: not armed (no limit, or no SIGALRM)."""
    armed = timeout_s is not None and hasattr(signal, "alarm")
    if armed:
        signal.alarm(max(1, math.ceil(timeout_s)))
    return armed


def _tracked(fn: Callable, marker: str, timeout_s: float | None, job):
    """Worker entry: ``fn(job)`` with a marker file holding its start time, under an alarm of ``timeout_s``."""
    Path(marker).write_text(repr(time.time()))
    alarm = _alarm(timeout_s)
    try:
        return fn(job)
    finally:
        if alarm:
            signal.alarm(0)
        try:
            os.unlink(marker)
        except OSError:
            pass


def _alone_child(conn, fn: Callable, job, timeout_s: float | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C (it ends this process)
    _alarm(timeout_s)
    try:
        conn.send(fn(job))
    finally:
        conn.close()


def hung_message(timeout_s: float) -> str:
    """One line for a job stopped at its time limit."""
    return (
        f"this recording's job did not finish within {timeout_s:.0f} s and was stopped (hung in native code?); "
        "the study goes on with the others"
    )


def died_message(exitcode: int | None) -> str:
    """One line for a job whose process died (``exitcode``: ``Process.exitcode``, -N for signal N)."""
    how = signal_name(exitcode) if exitcode is not None else "unknown cause"
    return (
        f"the worker process died ({how}) while replaying this recording: a crash in native code (simulator, "
        "mesh or decomposition library); the study goes on with the others. Rerun it alone to investigate "
        "(REPLAY_ISOLATE=0 --workers 0 runs everything in one process, e.g. under gdb)"
    )


def run_alone(fn: Callable, job, ctx=None, *, timeout_s: float | None = None) -> tuple[str, object]:
    """``fn(job)`` in a fresh process of its own; ``("error", died_message)`` if that process dies,
    ``("error", hung_message)`` if it runs past ``timeout_s``."""
    ctx = ctx or mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_alone_child, args=(send, fn, job, timeout_s))
    p.start()
    send.close()
    try:
        result = recv.recv()
    except EOFError:
        result = None
    except KeyboardInterrupt:
        p.terminate()
        p.join(1.0)
        raise
    finally:
        recv.close()
    p.join()
    if result is None:
        if timeout_s is not None and p.exitcode == -signal.SIGALRM:
            return "error", hung_message(timeout_s)
        return "error", died_message(p.exitcode)
    return result


def run_jobs(
    jobs: Sequence,
    fn: Callable,
    workers: int,
    *,
    on_result: Callable[[object, str, object], None],
    timeout_s: float | None = JOB_TIMEOUT_S,
    warm: Callable[[], None] | None = None,
) -> None:
    """Run ``fn(job)`` for every job in up to ``workers`` spawned processes.

    Args:
        fn: module-level ``fn(job) -> (status, value)``; ``jobs`` picklable.
        on_result: ``on_result(job, status, value)`` in this process; a job whose process died or ran past
            ``timeout_s`` (s; None: no limit) gets ``("error", one line)``.
        warm: module-level function each worker calls once at start.

    On Ctrl-C the queued jobs are cancelled and the running workers ended before KeyboardInterrupt propagates.
    """
    ctx = mp.get_context("spawn")
    pending = list(enumerate(jobs))
    while pending:
        with tempfile.TemporaryDirectory(prefix="replay-jobs-") as mdir:
            lost = []
            pool = ProcessPoolExecutor(
                max_workers=max(1, min(workers, len(pending))),
                mp_context=ctx,
                initializer=_init_worker,
                initargs=(os.getpid(), warm),
            )
            try:
                futs = {
                    pool.submit(_tracked, fn, os.path.join(mdir, str(i)), timeout_s, job): (i, job)
                    for i, job in pending
                }
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
            except KeyboardInterrupt:
                _stop_pool(pool)  # queued jobs cancelled, running ones ended: back within ~1 s
                raise
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            else:
                pool.shutdown(wait=True, cancel_futures=True)
            if not lost:
                return
            hung, suspects = _triage(lost, mdir, timeout_s)
        for _, job in hung:  # its alarm ended the pool: no need to run it again
            on_result(job, "error", hung_message(timeout_s))
        for _, job in suspects:
            status, value = run_alone(fn, job, ctx, timeout_s=timeout_s)
            on_result(job, status, value)
        pending = [x for x in lost if x not in suspects and x not in hung]


def _triage(lost: list, mdir: str, timeout_s: float | None) -> tuple[list, list]:
    """After a broken pool: (lost jobs past ``timeout_s``, suspects to run alone: those with a marker in ``mdir``,
    or every lost job where none has one)."""
    started = {}
    for i, _job in lost:
        try:
            started[i] = float(Path(mdir, str(i)).read_text())
        except (OSError, ValueError):
            pass
    now = time.time()
    hung = [
        (i, job) for i, job in lost if i in started and timeout_s is not None and now - started[i] >= timeout_s - 1.0
    ]
    running = [(i, job) for i, job in lost if i in started and (i, job) not in hung]
    suspects = running if (running or hung) else lost  # nothing marked: try each alone
    return hung, suspects
