"""What a study's Ray task reads and writes, carried by Ray to a node that shares no folder (docs/study.md,
"On Ray"): the shared files and a recording's own (:func:`shared_inputs`, :func:`job_inputs`), and the task's
results written back here (:func:`keep_outputs`)."""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from replay.data.cache import cache_root
from replay.data.locate import dataset_dir
from replay.datasets import HAND_DATASET
from replay.datasets import dataset as dataset_info
from replay.errors import DataError
from replay.fileio import atomic_write_bytes, storage_fault
from replay.results.files import write_rollout
from replay.results.records import RolloutRecord
from replay.study.inputs import input_hashes

#: A folder's files as ``{path relative to a root (posix): bytes}``.
Files = dict


@dataclass(frozen=True)
class Staging:
    """Where a job's folders lie on a node and where they are in the driver (picklable).

    Attributes:
        token: 16 hex of the SHA-256 of the shared files (names and contents): a node stages
            them once under ``<stage>/<token>/`` and reuses them for every job (and study) of
            the same inputs.
        folders: ``(staged, driver)`` pairs: a folder relative to the node's ``root/`` and the
            absolute folder it stands for in the driver (the dataset's, the hand's).
        cache: the driver's cache folder (:func:`replay.data.cache.cache_root`, absolute).
    """

    token: str
    folders: tuple[tuple[str, str], ...]
    cache: str

    @property
    def hand(self) -> str:
        """The hand models' folder relative to the node's ``root/``."""
        return f"data/{HAND_DATASET}"


def _is_own(rel: PurePosixPath, globs: tuple[str, ...], folder: bool) -> bool:
    """``rel`` (a path in the dataset's folder) is a recording's own file: it matches the glob
    parts ``globs`` (a file pattern), or lies below a folder that matches them (``folder``)."""
    n = len(rel.parts)
    fits = n > len(globs) if folder else n == len(globs)
    return fits and all(fnmatch.fnmatchcase(a, g) for a, g in zip(rel.parts, globs))


def _own_globs(name: str) -> tuple[tuple[str, ...], bool]:
    """(the glob parts of a recording's own files, whether they name a folder): a pattern with a
    ``*`` in a folder part gives each recording that folder (HUG-Bench ``scenes/*/*/``), else
    the file alone (GRAB ``recordings/*.pkl``)."""
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
    """The :class:`Staging` of a study's jobs and the files every one of them reads: the
    dataset's folder (:func:`replay.data.locate.dataset_dir`) less each recording's own files,
    and the hand models' folder.

    Raises:
        DataError: the dataset is not found (:func:`replay.data.locate.dataset_dir`).
        OSError: a file cannot be read.
    """
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
    """(the recording's own files ``{root-relative path: bytes}``, the study files the job
    reads ``{path relative to the study's folder: bytes}``: ``--ablation-only``'s rollout JSON).

    A recording whose file is missing sends nothing: the job on the node then refuses it as the
    process pool's does (:class:`~replay.errors.DataError`, naming the expected file).

    Raises:
        DataError: the dataset is not found.
        OSError: a file cannot be read.
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
    """``folder/rel``, refused where ``rel`` would leave ``folder`` (a result names only its own files).

    Raises:
        DataError: ``rel`` is absolute or climbs out of ``folder``.
    """
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts:
        raise DataError(folder, rel, "a Ray task sent back a file outside the study's folder")
    return folder / p


def keep_outputs(job, staging: Staging, result: tuple) -> tuple[str, object]:
    """Write what a task sent back (:func:`replay.study.ray_stage.run_staged`) and return the
    job's ``(status, value)`` as :func:`replay.study.job.run_job_safe` gives it in the pool.

    ``"ok"``: the files it wrote go to the study's folder, the derived files it read to the
    cache (where missing), ``inputs`` is hashed here from the same files (the ones on this
    machine, as the pool's job hashes them) and the rollout JSON written; a write that fails for
    want of storage is ``("storage", one line)``, a file named outside the study's folder
    ``("refused", one line)``.
    """
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
