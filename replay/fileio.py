"""File helpers shared by every stage: SHA-256, atomic writes (a fsynced temporary file beside the destination, renamed
over it) and storage faults (a full or read-only disk stops a batch with one line naming the file)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn, TypeVar

from replay.errors import OutputError, StorageError

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
    """The process umask (set and restored: not thread-safe for that instant)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def ensure_parent(path: str | Path) -> Path:
    """``path``, its folder created; NotADirectoryError, IsADirectoryError (``path`` a folder) or OSError."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent)) from None
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    return path


def out_folder(out: str | Path, folder: str | Path | None = None) -> Path:
    """``out`` as a Path, ``folder`` (default its parent) created; OutputError naming ``--out`` where it cannot be."""
    out = Path(out)
    try:
        Path(out.parent if folder is None else folder).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"--out {out}: cannot create the folder ({e.strerror or e})") from None
    return out


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary ``.<name>.<random><suffix>`` beside ``path``, renamed over it with mode ``0o666 & ~umask`` when the
    block ends, removed when it raises; OSError as :func:`ensure_parent`."""
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
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`, fsynced); OSError when it cannot be written."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Text (UTF-8) version of :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode("utf-8"))


#: errno values of a write the storage, not the program, refused
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})


def storage_fault(exc: BaseException, path: str | Path | None = None) -> StorageError | None:
    """A StorageError naming the file for an ``OSError`` with an errno in :data:`STORAGE_ERRNOS`, else None."""
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
    """``write()``, a storage fault raised as its StorageError."""
    try:
        return write()
    except OSError as e:
        fault = storage_fault(e)
        if fault is None:
            raise
        raise fault from None


def stop_on_storage_fault(message: str, write: Callable[[], object]) -> NoReturn:
    """After a job's storage fault ``message``: try ``write()`` once more (failure ignored), then raise StorageError."""
    with contextlib.suppress(OSError):
        write()
    raise StorageError(None, message)
