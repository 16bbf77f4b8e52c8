"""Path confinement: every path a dataset names must stay inside its folder, else DataError (cause ``path_escape``).
Lexical: symlinks are the staging's business."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from replay.errors import DataError


def is_inside(path: str | Path, root: str | Path) -> bool:
    """Whether ``path`` resolved (symlinks followed) lies in ``root`` resolved (or is ``root``)."""
    return Path(os.path.realpath(path)).is_relative_to(Path(os.path.realpath(root)))


def confined(
    root: str | Path,
    rel: str | Path,
    source: str | Path | None,
    *,
    field: str | None,
    what: str = "file",
    base: str | Path | None = None,
) -> Path:
    """``base / rel`` (default ``root / rel``) normalised lexically, refused unless inside ``root`` (it may not exist);
    ``source``, ``field``, ``what`` name it. Raises DataError (``path_escape``): it leaves ``root``."""
    root_n = Path(os.path.normpath(os.path.abspath(root)))
    target = Path(os.path.normpath(os.path.abspath(Path(root if base is None else base) / rel)))
    if not target.is_relative_to(root_n):
        raise DataError(
            source,
            field,
            f"{what} {str(rel)!r} resolves to {target}, outside {root_n}: a dataset "
            "may only name files inside its own folder",
            cause="path_escape",
        )
    return target


def plain_name(name: str, source: str | Path | None, field: str) -> str:
    """``name`` if one plain entry; DataError (``path_escape``): a separator, drive, ``.``/``..``, control char."""
    bad = (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or PureWindowsPath(name).drive
        or any(ord(c) < 32 for c in name)
    )
    if bad:
        raise DataError(
            source,
            field,
            f"{name!r} is not a plain name (no path separators, '..' or control "
            "characters): a dataset may only name entries of its own folders",
            cause="path_escape",
        )
    return name


def safe_relpath(rel: str, source: str | Path | None, field: str | None) -> str:
    """``rel`` (``/``-separated) normalised (``a/./b`` -> ``a/b``). Raises DataError (``path_escape``): absolute, a
    ``..`` part, a drive or backslash."""
    p = PurePosixPath(rel)
    bad = (
        not rel
        or p.is_absolute()
        or ".." in p.parts
        or "\\" in rel
        or "\0" in rel
        or PureWindowsPath(rel).drive
        or not p.parts
    )
    if bad:
        raise DataError(
            source,
            field,
            f"{rel!r} leaves its folder (absolute, '..', a drive or a backslash): refused before anything is written",
            cause="path_escape",
        )
    return p.as_posix()
