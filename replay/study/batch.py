"""The one batch runner of every many-recording command: each recording isolated, resumable, written
atomically, with the package versions and a summary (contract: docs/study.md, "How a batch runs")."""

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
from replay.study import executor as ex

#: the packages a result depends on, recorded with every many-recording result
VERSIONED_PACKAGES = ("newton", "mujoco", "mujoco-warp", "warp-lang", "numpy", "scipy", "trimesh")


def package_versions() -> dict:
    """Versions of :data:`VERSIONED_PACKAGES` and ``python`` (None: not installed), read once per process."""
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
    """What :func:`run_batch` did: ``results`` {key: result} in run order (resumed included), ``failed``
    {key: one-line reason}, ``resumed`` keys, ``wall_s`` s, ``interrupted`` (Ctrl-C)."""

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
    on_fail: Callable[[object, str], None] | None = None,
    workers: int = 0,
    executor: Callable | None = None,
    on_result: Callable | None = None,
    timeout_s: float | None = None,
    name: Callable | None = None,
) -> BatchResult:
    """Run ``run_one(key)`` for each key.

    Args:
        run_one: key -> result; with ``on_result``: key -> ``(status, value)``.
        write: ``write(key, result)`` for each new result.
        resume: key -> a result written before, or None to run it.
        isolate: the exception types that fail one recording, not the batch.
        label: how messages name the batch.
        on_fail: ``on_fail(key, reason)`` says a failure (default: ``  <key>: refused: <reason>`` on stderr).
        workers: worker processes (``run_one`` must pickle); 0: in this process
            (:func:`replay.study.executor.runs_here`).
        executor: ``executor(keys, fn, handle)``, ``handle(key, status, value)`` called here as each ends
            (default: :func:`replay.study.executor.executor` of ``workers``).
        on_result: ``on_result(key, status, value)`` after the bookkeeping; run_batch then prints nothing
            and re-raises Ctrl-C.
        timeout_s: the process pool's limit per recording, s (None: none).
        name: key -> its name in the result's dicts (default: the key).
    """
    out = BatchResult(versions=package_versions())
    t0 = time.perf_counter()
    fn = run_one if on_result is not None else partial(_as_status, run_one, isolate)
    name = name or (lambda k: k)
    try:
        todo = _not_resumed(keys, resume, out, name)
        run = executor or ex.executor(ex.Executor.POOL, workers, timeout_s=timeout_s)
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
    """One job ended: a result written and kept, or a failure kept and said."""
    if status != "ok":
        out.failed[name(key)] = value
        if on_result is None:
            (on_fail or _say_refused)(key, value)
    else:
        if write is not None:
            write(key, value)
        out.results[name(key)] = value
    if on_result is not None:
        on_result(key, status, value)


def _say_refused(key, reason: str) -> None:
    console.err(printable(f"  {key}: refused: {reason}"))


def _as_status(run_one: Callable, isolate: tuple, key) -> tuple[str, object]:
    """``("ok", run_one(key))``, or ``("failed", its one line)`` for an ``isolate`` error."""
    try:
        return "ok", run_one(key)
    except isolate as e:
        return "failed", str(e)
