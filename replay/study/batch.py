"""The one batch runner: many recordings through one function, each isolated, resumable,
written atomically, with package versions recorded one way and a summary at the end.

Every many-recording command (the sweep, both validations, the attribution, the gripper
check; the study's :mod:`~replay.study.runner` for its versions and interrupt rule) runs
its recordings through :func:`run_batch` rather than a loop of its own:

* **select**: the caller passes the keys (e.g. :func:`replay.study.prepare.select_sequences`);
* **per-recording isolation**: an ``isolate`` error (default :class:`~replay.errors.DataError`:
  bad input, named by file and field) of one recording is recorded in ``failed`` with its
  one-line message, and the others still run; any other exception is a programming error
  and propagates;
* **resume**: ``resume(key)`` returns a result written before (the caller checks it is for
  the same settings) or None: the recording is then skipped;
* **atomic writes**: ``write(key, result)`` runs after each recording; write through
  :func:`replay.fileio.atomic_write_text` (or :func:`write_json` here) so a kill never
  leaves half a file;
* **versions**: :func:`package_versions`, the one record of what a result depends on;
* **summary**: :class:`BatchResult` (results, failed, versions, wall time, interrupted);
* **Ctrl-C**: a :class:`KeyboardInterrupt` stops after the recording in progress is
  abandoned; what was written is kept and the result says ``interrupted`` (the command then
  returns exit status 130, :data:`replay.cli.EXIT_INTERRUPTED`).

Adopting it in a new command (e.g. ``scripts/bridge.py``)::

    from replay.study.batch import run_batch, write_json

    def one(key):                       # raises DataError on bad input
        return {"sequence": key, ...}

    res = run_batch(keys, one, write=lambda k, r: write_json(out / f"{k}.json", r),
                    resume=lambda k: read_if_same_settings(out / f"{k}.json"), label="bridge")
    write_json(out / "summary.json", {"versions": res.versions, "failed": res.failed, ...})
    return 130 if res.interrupted else (1 if res.failed else 0)
"""

from __future__ import annotations

import importlib.metadata as md
import json
import platform
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from replay.errors import DataError
from replay.fileio import atomic_write_text

#: the packages a result depends on, recorded with every many-recording result
VERSIONED_PACKAGES = ("newton", "mujoco", "mujoco-warp", "warp-lang", "numpy", "scipy", "trimesh")


def package_versions() -> dict:
    """Versions of the packages a result depends on (:data:`VERSIONED_PACKAGES`, and
    ``python``), from the installed distributions' metadata; None for one not installed."""
    out = {"python": platform.python_version()}
    for p in VERSIONED_PACKAGES:
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = None
    return out


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


def run_batch(keys: Iterable[str], run_one: Callable[[str], dict], *, write: Callable[[str, dict], None] | None = None,
              resume: Callable[[str], dict | None] | None = None, isolate: tuple = (DataError,), label: str = "batch",
              on_fail: Callable[[str, Exception], None] | None = None, workers: int = 1) -> BatchResult:
    """Run ``run_one(key)`` for each key (module doc: isolation, resume, writes, Ctrl-C).

    Args:
        keys: the selected recordings, in the order to run them.
        run_one: one recording -> its result (a JSON-able dict, or any object the caller
            summarises).
        write: called with each new result, right after it is made (atomically, please).
        resume: a result written before for ``key``, or None to run it.
        isolate: the exception types that fail one recording, not the batch.
        label: how messages name the batch (``sweep: mug_lift: refused: ...``).
        on_fail: says a recording's failure (default: ``  <key>: refused: <reason>`` on stderr).
        workers: processes running ``run_one`` at once (> 1: a process pool; ``run_one`` must
            then pickle, e.g. a module-level function or a :func:`functools.partial` of one).

    Returns:
        :class:`BatchResult`.
    """
    out = BatchResult(versions=package_versions())
    t0 = time.perf_counter()
    try:
        todo = []
        for key in keys:
            prior = resume(key) if resume is not None else None
            if prior is None:
                todo.append(key)
                continue
            out.results[key] = prior
            out.resumed.append(key)
            print(f"  {key}: done before (resume)", flush=True)
        for key, get in _results(todo, run_one, workers):
            try:
                res = get()
            except isolate as e:
                out.failed[key] = str(e)
                if on_fail is None:
                    print(f"  {key}: refused: {e}", file=sys.stderr, flush=True)
                else:
                    on_fail(key, e)
                continue
            if write is not None:
                write(key, res)
            out.results[key] = res
    except KeyboardInterrupt:
        out.interrupted = True
        print(f"{label}: interrupted; {len(out.results)} result(s) written so far are kept (rerun with --resume "
              "where offered)", file=sys.stderr)
    out.wall_s = time.perf_counter() - t0
    return out


def _results(keys: list[str], run_one: Callable, workers: int):
    """``(key, get)`` in key order; ``get()`` returns the result or raises its error. One process:
    run when asked; a pool: all submitted at once, waited for in order."""
    if workers <= 1 or len(keys) <= 1:
        for key in keys:
            yield key, (lambda k=key: run_one(k))
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(min(workers, len(keys))) as ex:
        futures = [(key, ex.submit(run_one, key)) for key in keys]
        try:
            for key, fut in futures:
                yield key, fut.result
        finally:
            for _, fut in futures:
                fut.cancel()


def write_json(path: str | Path, doc: dict) -> Path:
    """``doc`` as indented JSON at ``path``, atomically (:func:`replay.fileio.atomic_write_text`)."""
    return atomic_write_text(path, json.dumps(doc, indent=1, default=_plain) + "\n")


def _plain(o):
    """numpy scalars and arrays, paths: as JSON."""
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")
