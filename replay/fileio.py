"""File helpers shared by every stage: SHA-256 of a file, atomic writes, and storage faults.

An atomic write goes to a temporary file in the destination folder, is flushed to
disk, given the permissions an ordinary ``open(path, "w")`` would give
(``0o666 & ~umask``; ``tempfile.mkstemp`` creates 0600), and renamed over the
destination, so a reader never sees a partial file and a crash never leaves one.

A write refused by the storage (no space left, quota, read-only file system: :func:`storage_fault`)
is not a bug of one job: a batch stops on it with one line naming the file
(:func:`write_or_stop`, :func:`stop_on_storage_fault`), keeping what it wrote.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn, TypeVar

from replay.errors import StorageError

_CHUNK = 1 << 20
T = TypeVar("T")


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (follows symlinks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def process_umask() -> int:
    """The process umask (read by setting and restoring it; not thread-safe for that instant)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def ensure_parent(path: str | Path) -> Path:
    """Create ``path``'s folder if needed; call it before long work that ends in a write.

    Returns:
        ``path`` as a Path.

    Raises:
        NotADirectoryError: a parent of ``path`` is a file (said as such, not "File exists").
        IsADirectoryError: ``path`` itself is a folder.
        OSError: the folder cannot be created.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent)) from None
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    return path


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary file beside ``path`` for a writer that needs a file name (e.g. ffmpeg),
    renamed over ``path`` when the block ends without an error, removed when it raises.

    The temporary name is ``.<name>.<random><suffix>`` in the destination folder (same file
    system, so the rename is atomic); the file gets the permissions a plain ``open()`` would
    give (``0o666 & ~umask``), not ``mkstemp``'s 0600. Creates the parent folder.

    Raises:
        OSError: the destination cannot be written (see :func:`ensure_parent`).
    """
    path = ensure_parent(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~process_umask())
        os.replace(tmp, path)
    except OSError as e:  # a write to the temporary file (no space left...) names the destination
        if e.filename is None or str(e.filename) == tmp:
            e.filename = str(path)
        raise
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file, fsync, rename: :func:`atomic_path`).

    Creates the parent folder. Raises ``OSError`` (e.g. ``NotADirectoryError``) when
    the destination cannot be written; no temporary file is left behind.
    """
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Text (UTF-8) version of :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode("utf-8"))


#: errno values that mean the storage, not the program, refused a write: no space left, quota
#: exceeded, file too large, read-only file system, I/O error
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})


def storage_fault(exc: BaseException, path: str | Path | None = None) -> StorageError | None:
    """A :class:`~replay.errors.StorageError` for a write that failed for want of storage (``exc`` an
    ``OSError`` with an errno in :data:`STORAGE_ERRNOS`), naming the file (``exc.filename``, else
    ``path``) and what to do; None for any other exception. The study runner stops on it (a full
    disk fails every later write too); the one writer of a batch that can move calls this."""
    if not isinstance(exc, OSError) or exc.errno not in STORAGE_ERRNOS:
        return None
    where = exc.filename if exc.filename is not None else path
    return StorageError(
        where,
        f"cannot write: {os.strerror(exc.errno)} (errno {errno.errorcode.get(exc.errno, exc.errno)}); "
        "every result written before is kept: free space (or fix the file system), then "
        "run the same command with --resume",
    )


def write_or_stop(write: Callable[[], T]) -> T:
    """``write()`` (a batch's own bookkeeping write, e.g. the study JSON); a storage fault in it
    (:func:`storage_fault`) becomes the one-line :class:`~replay.errors.StorageError`, any other
    error propagates as it is."""
    try:
        return write()
    except OSError as e:
        fault = storage_fault(e)
        if fault is None:
            raise
        raise fault from None


def stop_on_storage_fault(message: str, write: Callable[[], object]) -> NoReturn:
    """A job's write failed for want of storage (``message``: its one line from
    :func:`storage_fault`): try the batch's bookkeeping ``write()`` once more (what finished is kept
    where space allows; its own failure is ignored) and stop the batch.

    Raises:
        StorageError: always, with ``message``.
    """
    with contextlib.suppress(OSError):
        write()
    raise StorageError(None, message)
