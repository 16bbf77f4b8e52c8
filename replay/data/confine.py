"""Path confinement: every path a dataset names stays inside the folder it belongs to.

A recording names its object (``object.name``), an MJCF file names its includes and meshes, a
manifest names its files, an archive names its members: each is a string from whoever made the
data. Joined as it is, ``../../etc`` or an absolute path reads (or writes) outside the dataset,
and a symlink inside a downloaded folder points anywhere. Every such join goes through
:func:`confined`: the joined path, normalised (``..`` folded, lexically), must lie inside its
root, else one :class:`~replay.errors.DataError` names the file and field that gave it (cause
``path_escape``). Symlinks are not followed here: ``fetch_data.py --link symlink`` stages links
into the mirror on purpose; a link leading out of a folder is refused where a folder is staged
(:func:`is_inside`, used by :mod:`replay.data.stage_unpinned`). :func:`plain_name` is the stricter rule for a name that is one folder entry
(an object name); :func:`safe_relpath` checks an archive member or manifest key before anything
is written.
"""

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
    field: str | None,
    what: str = "file",
    base: str | Path | None = None,
) -> Path:
    """``base / rel`` (default ``root / rel``) normalised, refused unless it lies inside ``root``
    (both made absolute and ``..`` folded, lexically: symlinks are the staging's business, module doc).

    Args:
        root: the folder the data may name files in (e.g. a dataset's ``objects`` folder).
        rel: the path as the data gives it (relative to ``root``; an absolute one is refused
            unless it lies inside ``root``).
        source: the file that named ``rel`` (named in the error).
        field: the field that held it (named in the error).
        what: what the path is, for the message.
        base: the folder ``rel`` is relative to, when not ``root`` (an MJCF include is relative to
            the including file's folder, confined to the dataset's objects folder).

    Returns:
        The normalised path (which may not exist: the caller says so in its own words).

    Raises:
        DataError: the path leaves ``root`` (by ``..`` or an absolute path), cause ``path_escape``.
    """
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
    """``name`` if it is one plain folder entry (no separator, not ``.``/``..``, no NUL), else refused.

    Raises:
        DataError: a name with a path separator, a drive, ``..`` or a control character
            (cause ``path_escape``).
    """
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
    """``rel`` (a ``/``-separated archive member or manifest key) if it stays inside whatever folder it
    is joined to: relative, no ``..`` part, no empty or NUL part, no backslash or drive.

    Returns:
        The normalised path (``a/./b`` -> ``a/b``).

    Raises:
        DataError: an absolute path, a ``..`` part, a drive or backslash (cause ``path_escape``).
    """
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
