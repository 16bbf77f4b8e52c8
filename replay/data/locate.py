"""Where a dataset lives: ``<data_dir>/<name>`` if it holds a file (``$REPLAY_DATA``, ``data/``), else the mirror."""

from __future__ import annotations

import os
from pathlib import Path

from replay.datasets import FETCH_ORDER
from replay.errors import DataError

MIRROR_ENV = "REPLAY_MIRROR"
DATA_ENV = "REPLAY_DATA"


def mirror_root() -> Path | None:
    """``$REPLAY_MIRROR``, or None if unset; DataError when not a folder."""
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
    """``data_dir`` as given, else :func:`default_data_dir` made absolute where it exists, else None (the mirror)."""
    if data_dir is not None:
        return data_dir
    d = default_data_dir()
    return d.resolve() if d.is_dir() else None


def _has_files(folder: Path) -> bool:
    """True if ``folder`` holds a file (a cut-short fetch leaves empty folders that must not hide the mirror)."""
    return folder.is_dir() and any(p.is_file() for p in folder.rglob("*"))


def dataset_dir(name: str, data_dir: str | Path | None = None) -> Path:
    """The staged folder of dataset ``name``, else the mirror's; DataError: unknown name, or found in neither."""
    if name not in FETCH_ORDER:
        raise DataError(None, "dataset", f"unknown dataset {name!r}; choose from {', '.join(FETCH_ORDER)}")
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
    where = (
        f"looked in {(staged / name).resolve()} (the staged data: --data, else ${DATA_ENV}, else ./data in the "
        f"working directory) and {f'${MIRROR_ENV} ({mirror})' if mirror is not None else f'${MIRROR_ENV} (unset)'}"
    )
    raise DataError(staged / name, None, f"dataset {name!r} not found ({where}); {how}")


def data_roots(data_dir: str | Path | None = None) -> list[Path]:
    """The absolute folders a study reads datasets from: the staged data folder where it exists, and the mirror."""
    staged = Path(data_dir) if data_dir is not None else default_data_dir()
    roots = [staged.expanduser().resolve()] if staged.is_dir() else []
    mirror = (
        mirror_root() if os.environ.get(MIRROR_ENV) and Path(os.environ[MIRROR_ENV]).expanduser().is_dir() else None
    )
    return roots + ([mirror] if mirror is not None and mirror not in roots else [])


def data_relative(text: str, roots: list[Path]) -> str:
    """``text`` with each path inside one of ``roots`` written relative to it."""
    for root in sorted(roots, key=lambda r: -len(str(r))):
        text = str(text).replace(f"{root}{os.sep}", "")
    return text
