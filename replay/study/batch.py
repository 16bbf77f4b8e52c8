"""The one batch runner: many recordings through one function, each isolated, resumable,
written atomically, with package versions recorded one way and a summary at the end.

Every many-recording command (the study, the sweep, both validations, the attribution, the
bridge, the gripper check) runs its recordings through :func:`run_batch` rather than a loop of
its own; the study passes its own executor (its process pool with per-job timeouts, or Ray) and
result handler (its console, its append-only records and its study JSON remade at intervals:
:mod:`replay.study.study_records`), the others take the defaults:

* **select**: the caller passes the keys (e.g. :func:`replay.study.prepare.select_sequences`);
* **per-recording isolation**: an ``isolate`` error (default :class:`~replay.errors.DataError`:
  bad input, named by file and field) of one recording is recorded in ``failed`` with its
  one-line message, and the others still run; any other exception is a programming error
  and propagates in this process; with ``workers > 1`` the recordings run in
  :func:`replay.study.pool.run_jobs`'s spawned workers, where any error, a worker's death or a
  hang past ``timeout_s`` costs that recording alone (``failed``, one line);
* **resume**: ``resume(key)`` returns a result written before (the caller checks it is for
  the same settings) or None: the recording is then skipped;
* **atomic writes**: ``write(key, result)`` runs after each recording; write through
  :func:`replay.fileio.atomic_write_text` so a kill never
  leaves half a file;
* **versions**: :func:`package_versions`, the one record of what a result depends on;
* **summary**: :class:`BatchResult` (results, failed, versions, wall time, interrupted);
* **Ctrl-C**: a :class:`KeyboardInterrupt` stops after the recording in progress is
  abandoned; what was written is kept and the result says ``interrupted`` (the command then
  returns exit status 130, :data:`replay.cli.EXIT_INTERRUPTED`).

Adopting it in a new command::

    from replay.fileio import atomic_write_text
    from replay.study.batch import run_batch

    def one(key):                       # raises DataError on bad input
        return {"sequence": key, ...}

    res = run_batch(keys, one, write=lambda k, r: atomic_write_text(out / f"{k}.json", json.dumps(r)),
                    resume=lambda k: read_if_same_settings(out / f"{k}.json"), label="bridge")
    atomic_write_text(out / "summary.json", json.dumps({"versions": res.versions, "failed": res.failed, ...}))
    return 130 if res.interrupted else (1 if res.failed else 0)
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import platform
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

from replay import console
from replay.errors import DataError, printable

#: the packages a result depends on, recorded with every many-recording result
VERSIONED_PACKAGES = ("newton", "mujoco", "mujoco-warp", "warp-lang", "numpy", "scipy", "trimesh")


def package_versions() -> dict:
    """Versions of the packages a result depends on (:data:`VERSIONED_PACKAGES`, and
    ``python``), from the installed distributions' metadata; None for one not installed.

    Read once per process (the packages a running process has imported do not change under it;
    the study once wrote its JSON after every recording, and parsing seven distributions' metadata
    each time cost its process ~20 ms a recording); each call returns a fresh dict."""
    return dict(_versions())


@functools.cache
def _versions() -> tuple:
    out = {"python": platform.python_version()}
    for p in VERSIONED_PACKAGES:
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = None
    return tuple(out.items())


@dataclass
class BatchResult:
    """What :func:`run_batch` did.

    Attributes:
        results: key -> result, in the order run (resumed ones included).
        failed: key -> one-line reason, for the recordings an ``isolate`` error stopped.
        resumed: keys whose result came from ``resume``.
        versions: :func:`package_versions` at the start.
        wall_s: seconds from start to end, s.
        interrupted: True when Ctrl-C stopped the batch (the results so far are kept).
    """

    results: dict = field(default_factory=dict)
    failed: dict = field(default_factory=dict)
    resumed: list = field(default_factory=list)
    versions: dict = field(default_factory=dict)
    wall_s: float = 0.0
    interrupted: bool = False


def run_batch(
    keys: Iterable,
    run_one: Callable,
    *,
    write: Callable | None = None,
    resume: Callable | None = None,
    isolate: tuple = (DataError,),
    label: str = "batch",
    on_fail: Callable[[str, Exception], None] | None = None,
    workers: int = 1,
    executor: Callable | None = None,
    on_result: Callable | None = None,
    timeout_s: float | None = None,
    name: Callable | None = None,
) -> BatchResult:
    """Run ``run_one(key)`` for each key (module doc: isolation, resume, writes, Ctrl-C).

    Args:
        keys: the selected recordings (or jobs), in the order to run them.
        run_one: one recording -> its result (a JSON-able dict, or any object the caller
            summarises); with ``on_result``: one job -> ``(status, value)`` itself (``"ok"`` or a
            failure status, as :func:`replay.study.job.run_job_safe` returns).
        write: called with each new result, right after it is made (atomically, please).
        resume: a result written before for ``key``, or None to run it.
        isolate: the exception types that fail one recording, not the batch.
        label: how messages name the batch (``sweep: mug_lift: refused: ...``).
        on_fail: says a recording's failure (default: ``  <key>: refused: <reason>`` on stderr).
        workers: processes running ``run_one`` at once (> 1: :func:`replay.study.pool.run_jobs`,
            spawned workers where a worker that dies or hangs past ``timeout_s`` s costs its own
            recording only; ``run_one`` must then pickle, e.g. a module-level function or a
            :func:`functools.partial` of one).
        executor: ``executor(keys, fn, handle)`` runs ``fn(key) -> (status, value)`` for every key
            and calls ``handle(key, status, value)`` in this process as each ends (default: in
            this process, or the process pool above); the study passes its pool or Ray.
        on_result: ``on_result(key, status, value)`` after run_batch's own bookkeeping: the caller
            says and writes the result itself (run_batch then prints nothing, and a Ctrl-C is
            re-raised after ``interrupted`` is set, for the caller's own message).
        timeout_s: the process pool's limit per recording, s (None: none).
        name: a key -> its name in the result's dicts (default: the key; the study's jobs: ``job.key``).

    Returns:
        :class:`BatchResult` (a failure status's value is in ``failed``).
    """
    out = BatchResult(versions=package_versions())
    t0 = time.perf_counter()
    fn = run_one if on_result is not None else partial(_as_status, run_one, isolate)
    name = name or (lambda k: k)
    try:
        todo = _not_resumed(keys, resume, out, name)
        run = executor if executor is not None else partial(_default_executor, workers=workers, timeout_s=timeout_s)
        run(todo, fn, partial(_handle, out, write, on_fail, on_result, name))
    except KeyboardInterrupt:
        out.interrupted = True
        out.wall_s = time.perf_counter() - t0
        if on_result is not None:
            raise
        console.err(
            f"{label}: interrupted; {len(out.results)} result(s) written so far are kept (rerun with --resume "
            "where offered)"
        )
    out.wall_s = time.perf_counter() - t0
    return out


def _not_resumed(keys: Iterable, resume: Callable | None, out: BatchResult, name: Callable) -> list:
    """The keys to run; those ``resume`` returns a result for go into ``out`` (said on the console)."""
    todo = []
    for key in keys:
        prior = resume(key) if resume is not None else None
        if prior is None:
            todo.append(key)
            continue
        out.results[name(key)] = prior
        out.resumed.append(name(key))
        console.out(printable(f"  {key}: done before (resume)"))
    return todo


def _handle(out: BatchResult, write, on_fail, on_result, name, key, status: str, value) -> None:
    """One job ended (:func:`run_batch`'s bookkeeping): a result written and kept, or a failure kept and said."""
    if status != "ok":
        out.failed[name(key)] = value
        if on_result is None:
            if on_fail is None:
                console.err(printable(f"  {key}: refused: {value}"))
            else:
                on_fail(key, _Failure(value))
    else:
        if write is not None:
            write(key, value)
        out.results[name(key)] = value
    if on_result is not None:
        on_result(key, status, value)


class _Failure(Exception):
    """A recording's failure as its one-line reason (what ``on_fail`` receives)."""


def _as_status(run_one: Callable, isolate: tuple, key) -> tuple[str, object]:
    """``("ok", run_one(key))``, or ``("failed", its one line)`` for an ``isolate`` error."""
    try:
        return "ok", run_one(key)
    except isolate as e:
        return "failed", str(e)


def _default_executor(
    keys: list, fn: Callable, handle: Callable, workers: int = 1, timeout_s: float | None = None
) -> None:
    """In this process, one key after another (``workers <= 1``, or one key); else
    :func:`replay.study.pool.run_jobs` (spawned workers, a dead or hung one costs its key only)."""
    if workers <= 1 or len(keys) <= 1:
        for key in keys:
            handle(key, *fn(key))
        return
    from replay.study.pool import run_jobs
    from replay.study.worker_imports import import_physics

    run_jobs(keys, fn, workers, on_result=handle, timeout_s=timeout_s, warm=import_physics)  # each worker imports once
