"""Load untrusted dataset pickles without running code from them.

Pickle lets a file name any importable callable and have it called while the
file is read (``__reduce__``), so a plain :func:`pickle.load` of a downloaded
file can run arbitrary code. :func:`load_pickle` uses a restricted
:class:`pickle.Unpickler` whose ``find_class`` admits only what numpy needs to
rebuild arrays, dtypes and numpy scalars, plus the builtin containers and
scalars that pickle encodes without any global (dict, list, tuple, str, bytes,
int, float, bool, None) and a few harmless builtin types (set, frozenset,
complex, slice, range). Anything else is refused with a
:class:`~replay.errors.DataError` naming the file and the class, before it is
imported or called.

The allow-list follows numpy's own pickle format (``ndarray.__reduce__``
returns ``numpy.core.multiarray._reconstruct`` - ``numpy._core.multiarray``
since numpy 2 - with ``numpy.ndarray`` and a ``numpy.dtype``; numpy scalars use
``numpy.core.multiarray.scalar``). Protocol-2 pickles written by Python 3
encode ``bytes`` through ``_codecs.encode(str, 'latin1')``; that one call is
admitted, restricted to the latin-1 codec.

**Bounded cost.** The file's size is checked before it is read
(:func:`replay.data.limits.read_bounded`, kind ``recording``), and no allow-listed
constructor builds more than the stream can hold: what ``bytearray(n)``, ``range``,
``_reconstruct(ndarray, shape, dtype)``, a dtype's item size and ``scalar`` would build is
counted against a budget of the stream's length plus :data:`BUILD_SLACK_BYTES` before it is
built (a genuine pickle carries its arrays' bytes; numpy's own ``_reconstruct`` call asks for an
empty placeholder that ``__setstate__`` then points at the stream's bytes). ``numpy.ndarray``
resolves to a token that ``_reconstruct`` accepts and nothing can call, so a view with chosen
strides (a zero-stride array declaring gigabytes over 8 bytes) cannot be built. Such a pickle is
one :class:`~replay.errors.DataError` (cause ``file_size``), costing milliseconds.
"""

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


# (module, name) -> factory returning the object to hand to pickle.
_ALLOWED: dict[tuple[str, str], Any] = {}
for _mod in ("numpy.core", "numpy._core"):
    _ALLOWED[(f"{_mod}.multiarray", "_reconstruct")] = lambda u: u.reconstruct
    _ALLOWED[(f"{_mod}.multiarray", "scalar")] = lambda u: u.scalar
    # protocol-5 pickles of contiguous arrays: _frombuffer(buffer, dtype, shape, order)
    _ALLOWED[(f"{_mod}.numeric", "_frombuffer")] = lambda u: u.frombuffer
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
    """What ``numpy.ndarray`` resolves to: the class as :func:`_reconstruct`'s argument, never a
    callable (a direct ``ndarray(shape, dtype, buffer, offset, strides)`` builds a view with chosen
    strides: a zero-stride view of 8 bytes declaring 50 GB)."""

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
    """:class:`pickle.Unpickler` that resolves only allow-listed globals (see module doc), each
    constructor bounded: everything the allow-listed constructors build, together, is at most the
    stream's length plus :data:`BUILD_SLACK_BYTES` (a genuine pickle carries the bytes of its
    arrays; only a hostile one asks a constructor for more than it holds).

    Args:
        file: the binary stream.
        stream_bytes: its length, bytes (the budget).
    """

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
        """Take ``n`` bytes from the budget before building ``what.format(*args)``, or refuse (the
        description is formatted only then: a recording's pickle holds thousands of small arrays)."""
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

    def frombuffer(self, buffer, dtype, shape, order):
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
    """Unpickle ``data`` with :class:`SafeUnpickler`.

    Args:
        data: the pickle bytes.
        source: file name used in error messages.

    Raises:
        DataError: a refused class (named in the message), a truncated or corrupt stream, a
            constructor asking for more bytes than the stream holds (cause ``file_size``).
    """
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
    """Read and safely unpickle the file at ``path``.

    Returns:
        The unpickled object (numpy arrays, dicts, lists, tuples, str, numbers, ...).

    Raises:
        DataError: the file is missing/unreadable, larger than the recording size limit (checked
            before it is read: :func:`replay.data.limits.check_size`), truncated or corrupt, it
            names a class outside the allow-list (the message gives the file and the class), or a
            constructor asks for more than the file holds (cause ``file_size``).
    """
    path = Path(path)
    return loads_pickle(read_bounded(path, "recording"), path)
