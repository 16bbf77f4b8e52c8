"""Resolve where a dataset lives, one way for every stage and test.

Search order for dataset ``name`` (one of :data:`DATASETS`):

1. ``<data_dir>/<name>`` if it holds any file (staged by ``scripts/fetch_data.py``; the
   default ``data_dir`` is ``data/`` in the current directory, or ``REPLAY_DATA``);
2. ``$REPLAY_MIRROR/<name>`` (an offline mirror laid out like ``shared/datasets``).

HUG-Bench is staged under ``hug-bench``; it has no mirror copy.
"""

from __future__ import annotations

import os
from pathlib import Path

from replay.datasets import FETCH_ORDER
from replay.errors import DataError

#: Dataset names known to the pipeline (folder names in ``data/`` and in the mirror).
DATASETS = FETCH_ORDER

MIRROR_ENV = "REPLAY_MIRROR"
DATA_ENV = "REPLAY_DATA"


def mirror_root() -> Path | None:
    """The offline mirror folder from ``$REPLAY_MIRROR``, or ``None`` if unset.

    Raises:
        DataError: ``REPLAY_MIRROR`` is set but is not a folder.
    """
    value = os.environ.get(MIRROR_ENV)
    if not value:
        return None
    root = Path(value).expanduser()
    if not root.is_dir():
        raise DataError(root, MIRROR_ENV, "the offline mirror folder does not exist")
    return root.resolve()


def default_data_dir() -> Path:
    """``$REPLAY_DATA`` if set, else ``./data``."""
    return Path(os.environ.get(DATA_ENV, "data")).expanduser()


def staged_data_dir(data_dir: str | Path | None = None) -> str | Path | None:
    """The staged data folder a study reads: ``data_dir`` as given, else :func:`default_data_dir` made
    absolute where it exists, else None (the mirror alone). A study run without ``--data`` then records
    its inputs (the manifest's entry, the pin key: :mod:`replay.study.inputs`) as one run with ``--data
    data`` does, and ``--resume`` finds them, whichever way it was typed."""
    if data_dir is not None:
        return data_dir
    d = default_data_dir()
    return d.resolve() if d.is_dir() else None


def _has_files(folder: Path) -> bool:
    """True if ``folder`` holds at least one file (an interrupted fetch can leave
    empty folders behind, which must not hide the mirror or pass as a dataset)."""
    return folder.is_dir() and any(p.is_file() for p in folder.rglob("*"))


def dataset_dir(name: str, data_dir: str | Path | None = None) -> Path:
    """Folder holding dataset ``name``.

    Args:
        name: one of :data:`DATASETS`.
        data_dir: where ``fetch_data.py`` staged data (default :func:`default_data_dir`).

    Returns:
        An existing folder: the staged copy if present, else the mirror's.

    Raises:
        DataError: unknown dataset name, or found neither staged nor in the mirror
            (the message says how to fetch it).
    """
    if name not in DATASETS:
        raise DataError(None, "dataset", f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")
    staged = Path(data_dir) if data_dir is not None else default_data_dir()
    if _has_files(staged / name):
        return (staged / name).resolve()
    mirror = mirror_root()
    if mirror is not None and (mirror / name).is_dir():
        return mirror / name
    if name == "hug-bench":  # Hub only: no offline mirror holds it
        how = (
            "run `python scripts/fetch_data.py --dataset hug-bench --split test --scenes small_2` "
            "(needs access to huggingface.co; no offline mirror holds HUG-Bench)"
        )
    else:
        how = (
            f"run `python scripts/fetch_data.py --dataset {name}` (add `--mirror DIR` offline) "
            f"or set {MIRROR_ENV} to a mirror folder"
        )
    raise DataError(staged / name, None, f"dataset {name!r} not found; {how}")
