"""What a study's Ray task carries to a node that shares no folder, and what it sends back; the node's staging
layout: docs/study.md, "On Ray". :func:`run_staged` (on the node) imports no Ray."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import fnmatch
import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from replay.data.cache import CACHE_ENV, cache_root
from replay.data.inputs import input_hashes
from replay.data.locate import dataset_dir
from replay.datasets import HAND_DATASET
from replay.datasets import dataset as dataset_info
from replay.errors import DataError
from replay.fileio import atomic_write_bytes, storage_fault
from replay.results.files import write_rollout
from replay.results.records import RolloutRecord

#: A folder's files ``{posix path relative to a root: bytes}``.
Files = dict


@dataclass(frozen=True)
class Staging:
    """Where a job's folders lie on a node and in the driver (picklable).

    Attributes:
        token: 16 hex of the SHA-256 of the shared files (names and contents).
        folders: ``(staged, driver)`` pairs: a folder relative to the node's ``root/``, the driver's absolute one.
        cache: the driver's cache folder (absolute).
    """

    token: str
    folders: tuple[tuple[str, str], ...]
    cache: str

    @property
    def hand(self) -> str:
        """The hand models' folder relative to the node's ``root/``."""
        return f"data/{HAND_DATASET}"


def _is_own(rel: PurePosixPath, globs: tuple[str, ...], folder: bool) -> bool:
    """``rel`` (in the dataset's folder) matches ``globs``, or lies below a folder that does (``folder``)."""
    n = len(rel.parts)
    fits = n > len(globs) if folder else n == len(globs)
    return fits and all(fnmatch.fnmatchcase(a, g) for a, g in zip(rel.parts, globs))


def _own_globs(name: str) -> tuple[tuple[str, ...], bool]:
    """(the glob parts of a recording's own files, whether they name a folder: HUG-Bench ``scenes/*/*/``; GRAB
    ``recordings/*.pkl`` is a file)."""
    pat = PurePosixPath(dataset_info(name).pattern)
    if any("*" in p for p in pat.parent.parts):
        return pat.parent.parts, True
    return pat.parts, False


def _read_tree(folder: Path, prefix: str, skip=None) -> Files:
    """Every file below ``folder`` as ``{prefix/rel: bytes}``, minus those ``skip(rel)`` names."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = PurePosixPath(p.relative_to(folder).as_posix())
        if p.is_file() and not (skip and skip(rel)):
            out[f"{prefix}/{rel}"] = p.read_bytes()
    return out


def shared_inputs(dataset: str, data_dir: str | None, manosim_dir: str) -> tuple[Staging, Files]:
    """The :class:`Staging` of a study's jobs and the files all of them read (the dataset's folder less each
    recording's own files, the hand models). Raises DataError: no dataset; OSError: a file cannot be read."""
    root = dataset_dir(dataset, data_dir)
    globs, folder = _own_globs(dataset)
    files = _read_tree(root, f"data/{dataset}", lambda rel: _is_own(rel, globs, folder))
    files.update(_read_tree(Path(manosim_dir), f"data/{HAND_DATASET}"))
    digest = hashlib.sha256()
    for rel, data in files.items():
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    folders = ((f"data/{dataset}", str(root)), (f"data/{HAND_DATASET}", str(Path(manosim_dir).resolve())))
    return Staging(digest.hexdigest()[:16], folders, str(cache_root().resolve())), files


def job_inputs(job) -> tuple[Files, Files]:
    """(the recording's own files ``{root-relative path: bytes}``, the study files the job reads
    ``{path relative to the study's folder: bytes}``: ``--ablation-only``'s rollout JSON). A missing recording
    sends nothing: the node's job refuses it as the pool's does. Raises DataError: no dataset; OSError: unreadable.
    """
    root = dataset_dir(job.dataset, job.data_dir)
    path = dataset_info(job.dataset).path(root, job.sequence)
    globs, folder = _own_globs(job.dataset)
    own: Files = {}
    if folder:
        own_dir = root.joinpath(*path.relative_to(root).parts[: len(globs)])
        if own_dir.is_dir():
            own = _read_tree(own_dir, f"data/{job.dataset}/{own_dir.relative_to(root).as_posix()}")
    elif path.is_file():
        own = {f"data/{job.dataset}/{path.relative_to(root).as_posix()}": path.read_bytes()}
    study: Files = {}
    if job.ablation_only:
        rollout = Path(job.rollouts_dir) / f"{job.stem}.json"
        if rollout.is_file():
            study[Path(rollout).relative_to(job.out_dir).as_posix()] = rollout.read_bytes()
    return own, study


def inside_folder(folder: Path, rel: str) -> Path:
    """``folder/rel``. Raises DataError: ``rel`` is absolute or climbs out of ``folder``."""
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts:
        raise DataError(folder, rel, "a Ray task sent back a file outside the study's folder")
    return folder / p


def keep_outputs(job, staging: Staging, result: tuple) -> tuple[str, object]:
    """Write what a task sent back (:func:`run_staged`): its files to the study's folder, its cache files where
    missing, ``inputs`` hashed from the driver's files, the rollout JSON. Returns ``(status, value)`` as
    :func:`replay.study.job.run_job_safe` does; ``"storage"`` for want of storage, ``"refused"`` for a file named
    outside the study's folder."""
    status, value, files, cache_files, inputs = result
    if status != "ok":
        return status, value
    try:
        for rel, data in files.items():
            atomic_write_bytes(inside_folder(Path(job.out_dir), rel), data)
        for rel, data in cache_files.items():
            path = inside_folder(Path(staging.cache), rel)
            if not path.is_file():
                atomic_write_bytes(path, data)
        if not job.ablation_only:  # --ablation-only keeps the rollout's inputs, as in the pool
            value["inputs"] = input_hashes([Path(p) for p in inputs], job.data_dir)
        return "ok", write_rollout(Path(job.rollouts_dir) / f"{job.stem}.json", RolloutRecord.from_dict(value))
    except DataError as e:
        return "refused", str(e)
    except OSError as e:
        fault = storage_fault(e)
        return ("storage", str(fault)) if fault is not None else ("error", f"{type(e).__name__}: {e}")


#: Environment variable: the folder a node stages inputs and results in (default: the temp dir).
STAGE_ENV = "REPLAY_RAY_STAGE"


def stage_dir() -> Path:
    """The node's staging folder: ``$REPLAY_RAY_STAGE``, else ``<temp dir>/replay-ray`` (resolved)."""
    return (Path(os.environ.get(STAGE_ENV) or tempfile.gettempdir()) / "replay-ray").resolve()


def _shared_root(base: Path, get_shared: Callable[[], Files]) -> Path:
    """``base/root`` holding the shared files, written by the first job of this token on the node."""
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
    """The recording's own files in ``root`` for the block; removed after unless another job of it still runs."""
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
    """``$REPLAY_CACHE`` set to ``default`` for the block where the node sets none; yields the cache folder."""
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
        """``v`` (JSON-like) with :meth:`text` applied to every string, keys included."""
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
    """Run ``fn(job) -> (status, value)`` on this node from the carried inputs; ``job`` has the driver's folders,
    ``get_shared()`` is called only where this node has not staged the shared files yet.

    Returns:
        ``(status, value, files, cache_files, inputs)``, ``value`` with the driver's paths; with ``"ok"``: the
        files it wrote (relative to the study's folder, less the rollout JSON), the cache files it read (relative
        to the cache folder), the input files it read (the driver's absolute paths, in ``value["inputs"]`` order).
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
