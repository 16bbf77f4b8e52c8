"""Load untrusted dataset pickles without running code: only allow-listed numpy rebuilders, containers and builtins
resolve (anything else refused, naming the class), each constructor's output counted against the stream's length
(cause ``file_size``); ``numpy.ndarray`` is uncallable."""

from __future__ import annotations

import builtins
import codecs
import io
import math
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from replay.data.limits import read_bounded
from replay.errors import DataError


def _latin1_encode(obj: str, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    if encoding not in ("latin1", "latin-1", "iso-8859-1"):
        raise pickle.UnpicklingError(f"_codecs.encode with codec {encoding!r} is not allowed")
    return codecs.encode(obj, "latin1", errors)


def _core() -> Any:
    return getattr(np, "_core", None) or np.core  # numpy 2 renamed core -> _core


# (module, name) -> factory: numpy's pickle format (numpy.core or numpy 2's numpy._core), _codecs.encode (latin-1)
_ALLOWED: dict[tuple[str, str], Any] = {}
for _mod in ("numpy.core", "numpy._core"):
    _ALLOWED[(f"{_mod}.multiarray", "_reconstruct")] = lambda u: u.reconstruct
    _ALLOWED[(f"{_mod}.multiarray", "scalar")] = lambda u: u.scalar
    # protocol-5 pickles of contiguous arrays: _frombuffer(buffer, dtype, shape, order)
    _ALLOWED[(f"{_mod}.numeric", "_frombuffer")] = lambda u: u._frombuffer
_ALLOWED[("numpy", "ndarray")] = lambda u: _NDARRAY
_ALLOWED[("numpy", "dtype")] = lambda u: u.dtype
for _name in ("set", "frozenset", "complex", "slice"):
    for _mod in ("builtins", "__builtin__"):
        _ALLOWED[(_mod, _name)] = lambda u, n=_name: getattr(builtins, n)
for _mod in ("builtins", "__builtin__"):
    _ALLOWED[(_mod, "bytearray")] = lambda u: u.bytearray
    _ALLOWED[(_mod, "range")] = lambda u: u.range
_ALLOWED[("_codecs", "encode")] = lambda u: _latin1_encode

#: bytes a pickle may have built beyond its own length (dtype and scalar objects, small buffers)
BUILD_SLACK_BYTES = 1 << 20


class _Oversize(pickle.UnpicklingError):
    """A constructor asked to build more than the stream can hold (the message says what)."""


class _NdarrayToken:
    """What ``numpy.ndarray`` resolves to: never a callable (a direct call builds a view with chosen strides)."""

    def __call__(self, *args, **kwargs):
        raise _Refused("numpy", "ndarray (called directly, with a buffer and strides)")

    def __reduce__(self):  # pragma: no cover - never pickled
        raise TypeError("not picklable")


_NDARRAY = _NdarrayToken()


class _Refused(pickle.UnpicklingError):
    def __init__(self, module: str, name: str):
        self.qualname = f"{module}.{name}"
        super().__init__(self.qualname)


class SafeUnpickler(pickle.Unpickler):
    """:class:`pickle.Unpickler` resolving only allow-listed globals, whose constructors together build at most
    ``stream_bytes`` (the stream's length) plus :data:`BUILD_SLACK_BYTES`."""

    def __init__(self, file, stream_bytes: int):
        super().__init__(file)
        self.budget = int(stream_bytes) + BUILD_SLACK_BYTES
        self.stream_bytes = int(stream_bytes)

    def find_class(self, module: str, name: str) -> Any:  # noqa: D401 - pickle API
        factory = _ALLOWED.get((module, name))
        if factory is None:
            raise _Refused(module, name)
        return factory(self)

    def _spend(self, n: int, what: str, *args) -> None:
        """Take ``n`` bytes from the budget before building ``what.format(*args)``, or refuse."""
        if n > self.budget:
            raise _Oversize(
                f"{what.format(*args)} declares {n:,} bytes ({n / 1e9:.3g} GB), more than the "
                f"{self.stream_bytes:,}-byte pickle can hold: refused before building it"
            )
        self.budget -= n

    def reconstruct(self, subtype, shape, dtype):
        """``numpy.core.multiarray._reconstruct(ndarray, shape, dtype)`` with its size bounded."""
        if subtype is not _NDARRAY:
            raise _Refused("numpy", f"_reconstruct of {type(subtype).__name__}")
        dt = self.dtype(dtype)
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
            raise _Oversize(f"numpy array with shape {dims!r}: not non-negative integers")
        self._spend(math.prod(dims) * dt.itemsize, "a numpy array of shape {} {}", dims, dt)
        return _core().multiarray._reconstruct(np.ndarray, dims, dt)

    def dtype(self, *args, **kwargs) -> np.dtype:
        """``numpy.dtype(...)`` whose item size is bounded (a void dtype can declare gigabytes)."""
        dt = np.dtype(*args, **kwargs)
        if dt.itemsize > self.budget:
            self._spend(dt.itemsize, "numpy dtype {}", dt)
        return dt

    def scalar(self, dtype, *args):
        """``numpy.core.multiarray.scalar(dtype, data)`` with the dtype's item size bounded."""
        dt = self.dtype(dtype)
        self._spend(dt.itemsize, "a numpy scalar of {}", dt)
        return _core().multiarray.scalar(dt, *args)

    def _frombuffer(self, buffer, dtype, shape, order):
        """``numpy.core.numeric._frombuffer``: a view of bytes the stream holds, its shape checked."""
        dt = self.dtype(dtype)
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        n = math.prod(dims) * dt.itemsize
        if n != len(memoryview(buffer).cast("B")):
            raise _Oversize(f"numpy array of shape {dims} {dt} ({n:,} bytes) from a {len(buffer):,}-byte buffer")
        return _core().numeric._frombuffer(buffer, dt, dims, order)

    def bytearray(self, *args):
        """``bytearray(...)``; an integer argument (a zero-filled buffer of that size) is bounded."""
        if args and isinstance(args[0], int):
            self._spend(args[0], "bytearray({})", args[0])
        elif args and isinstance(args[0], range):
            self._spend(len(args[0]), "bytearray({})", args[0])
        return builtins.bytearray(*args)

    def range(self, *args) -> range:
        """``range(...)``, its length bounded as if listed (a later ``np.asarray`` would build it)."""
        r = builtins.range(*args)
        self._spend(len(r) * 8, "range of {:,} numbers", len(r))
        return r


def loads_pickle(data: bytes, source: str | Path | None = None) -> Any:
    """Unpickle ``data`` with :class:`SafeUnpickler`. Raises DataError naming ``source``: a refused class, a truncated
    or corrupt stream, a constructor asking for more bytes than the stream holds (cause ``file_size``)."""
    try:
        return SafeUnpickler(io.BytesIO(data), len(data)).load()
    except _Oversize as exc:
        raise DataError(source, None, str(exc), cause="file_size") from None
    except _Refused as exc:
        raise DataError(
            source,
            None,
            f"refusing to unpickle class {exc.qualname!r}: only numpy arrays and builtin "
            "containers/scalars are allowed in dataset pickles",
        ) from None
    except EOFError:
        raise DataError(source, None, "pickle is truncated (unexpected end of file)") from None
    except (
        pickle.UnpicklingError,
        ValueError,
        TypeError,
        AttributeError,
        IndexError,
        KeyError,
        UnicodeDecodeError,
        MemoryError,
        OverflowError,
    ) as exc:
        # Corrupt streams surface as any of these from the C unpickler.
        raise DataError(source, None, f"corrupt or truncated pickle ({type(exc).__name__}: {exc})") from None


def load_pickle(path: str | Path) -> Any:
    """Safely unpickle ``path``; DataError: missing, unreadable, over the size limit, or :func:`loads_pickle`'s."""
    path = Path(path)
    return loads_pickle(read_bounded(path, "recording"), path)
