"""A study job on a Ray node, run from the inputs Ray carried (:mod:`replay.study.ray_transfer`).

The node's staging folder (:func:`stage_dir`), per set of shared inputs (its token)::

    <stage>/<token>/root/data/<dataset>/...   the dataset's shared files; a recording's own while a job of it runs
    <stage>/<token>/root/data/manosim/...     the hand models
    <stage>/<token>/locks/                    one lock file per recording (fcntl.flock)
    <stage>/<token>/out-<uuid>/study/...      one job's results, removed once sent back
    <stage>/cache/                            $REPLAY_CACHE of the jobs, unless the node sets one

The shared files are written once per node (a temporary folder renamed into place) and kept at stable paths for
later jobs of the same inputs; a recording's own files go when no job of it runs here. Nothing here imports Ray."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

from replay.data.cache import CACHE_ENV, cache_root
from replay.fileio import atomic_write_bytes
from replay.study.ray_transfer import Files, Staging, inside_folder

#: Environment variable: the folder a node stages inputs and results in (default: the temp dir).
STAGE_ENV = "REPLAY_RAY_STAGE"


def stage_dir() -> Path:
    """The node's staging folder: ``$REPLAY_RAY_STAGE``, else ``<temp dir>/replay-ray`` (resolved)."""
    return (Path(os.environ.get(STAGE_ENV) or tempfile.gettempdir()) / "replay-ray").resolve()


def _shared_root(base: Path, get_shared: Callable[[], Files]) -> Path:
    """``base/root`` holding the shared files: written (``get_shared()``) and renamed into place
    by the first job of this token on the node; later jobs find it ready (``base/done``)."""
    if not (base / "done").is_file():
        part = base.parent / f"{base.name}.part-{uuid.uuid4().hex}"
        for rel, data in get_shared().items():
            path = inside_folder(part / "root", rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        (part / "done").write_text("")
        try:
            os.rename(part, base)
        except OSError:  # another job of this node staged it first
            shutil.rmtree(part, ignore_errors=True)
    return base / "root"


@contextlib.contextmanager
def _recording_files(base: Path, root: Path, own: Files):
    """The recording's own files in ``root`` while the block runs; removed after it unless
    another job of this recording runs here too (a shared flock on its lock file per job)."""
    if not own:
        yield
        return
    key = hashlib.sha256("\0".join(sorted(own)).encode()).hexdigest()[:16]
    lock_path = base / "locks" / f"{key}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        for rel, data in own.items():
            atomic_write_bytes(inside_folder(root, rel), data)
        try:
            yield
        finally:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pass  # another job of this recording still reads them: it removes them
            else:
                for rel in own:
                    inside_folder(root, rel).unlink(missing_ok=True)


@contextlib.contextmanager
def _cache_env(default: Path):
    """``$REPLAY_CACHE`` set to ``default`` for the block where the node sets none; yields the
    cache folder the job uses (resolved)."""
    mine = CACHE_ENV not in os.environ
    if mine:
        os.environ[CACHE_ENV] = str(default)
    try:
        yield cache_root().resolve()
    finally:
        if mine:
            os.environ.pop(CACHE_ENV, None)


class _PathsBack:
    """Paths on the node -> the same paths in the driver (``pairs``: node prefix, driver prefix)."""

    def __init__(self, pairs: list[tuple[Path, str]]):
        self.pairs = sorted(((str(a), b) for a, b in pairs), key=lambda p: -len(p[0]))

    def text(self, s: str) -> str:
        """``s`` with every node folder in it replaced by the driver's."""
        for a, b in self.pairs:
            s = s.replace(a, b)
        return s

    def value(self, v):
        """``v`` (JSON-like: dicts, lists, strings) with :meth:`text` applied to every string, keys included."""
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {self.value(k): self.value(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(self.value(x) for x in v)
        return v


def _local_job(job, staging: Staging, root: Path, out: Path):
    """The job with its folders on this node: data and hand under ``root``, results under ``out``."""
    rel = Path(os.path.relpath(job.rollouts_dir, job.out_dir))
    return dataclasses.replace(
        job,
        data_dir=str(root / "data"),
        manosim_dir=str(root / staging.hand),
        out_dir=str(out),
        rollouts_dir=str(inside_folder(out, rel.as_posix())),
    )


def run_staged(
    fn: Callable, job, staging: Staging, *, get_shared: Callable[[], Files], own: Files, study_files: Files
) -> tuple:
    """Run ``fn(job)`` (:func:`replay.study.job.run_job_safe`) on this node from the carried inputs.

    Args:
        fn: ``fn(job) -> (status, value)``.
        job: the driver's :class:`replay.study.job.Job` (its folders as the driver has them).
        staging: :class:`replay.study.ray_transfer.Staging` of its study.
        get_shared: returns the shared files (``ray.get`` of the study's object), called only
            where this node has not staged them yet.
        own: the recording's own files; study_files: files of the study's folder it reads.

    Returns:
        ``(status, value, files, cache_files, inputs)``: ``value`` with the driver's paths;
        with ``"ok"``: the files it wrote (relative to the study's folder, the rollout JSON
        left to the driver), the cache files it read (relative to the cache folder) and the
        input files it read (the driver's absolute paths, in the order of ``value["inputs"]``).
    """
    base = stage_dir() / staging.token
    root = _shared_root(base, get_shared)
    out = base / f"out-{uuid.uuid4().hex}" / "study"
    try:
        with _recording_files(base, root, own), _cache_env(stage_dir() / "cache") as cache:
            local = _local_job(job, staging, root, out)
            for rel, data in study_files.items():
                atomic_write_bytes(inside_folder(out, rel), data)
            status, value = fn(local)
            back = _PathsBack(
                [(root / a, b) for a, b in staging.folders] + [(out, job.out_dir), (cache, staging.cache)]
            )
            if status != "ok":
                return status, back.value(value), {}, {}, []
            read = [Path(k) if Path(k).is_absolute() else root / "data" / k for k in value.get("inputs") or {}]
            rollout = Path(local.rollouts_dir) / f"{job.stem}.json"
            files = {
                p.relative_to(out).as_posix(): p.read_bytes()
                for p in sorted(out.rglob("*"))
                if p.is_file() and p != rollout
            }
            cached = {p.relative_to(cache).as_posix(): p.read_bytes() for p in read if p.is_relative_to(cache)}
            return status, back.value(value), files, cached, [back.text(str(p)) for p in read]
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
