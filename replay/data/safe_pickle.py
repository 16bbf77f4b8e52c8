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
"""

from __future__ import annotations

import builtins
import codecs
import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

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
    _ALLOWED[(f"{_mod}.multiarray", "_reconstruct")] = lambda: _core().multiarray._reconstruct
    _ALLOWED[(f"{_mod}.multiarray", "scalar")] = lambda: _core().multiarray.scalar
    # protocol-5 pickles of contiguous arrays: _frombuffer(buffer, dtype, shape, order)
    _ALLOWED[(f"{_mod}.numeric", "_frombuffer")] = lambda: _core().numeric._frombuffer
_ALLOWED[("numpy", "ndarray")] = lambda: np.ndarray
_ALLOWED[("numpy", "dtype")] = lambda: np.dtype
for _name in ("set", "frozenset", "complex", "slice", "range", "bytearray"):
    for _mod in ("builtins", "__builtin__"):
        _ALLOWED[(_mod, _name)] = (lambda n=_name: getattr(builtins, n))
_ALLOWED[("_codecs", "encode")] = lambda: _latin1_encode


class _Refused(pickle.UnpicklingError):
    def __init__(self, module: str, name: str):
        self.qualname = f"{module}.{name}"
        super().__init__(self.qualname)


class SafeUnpickler(pickle.Unpickler):
    """:class:`pickle.Unpickler` that resolves only allow-listed globals (see module doc)."""

    def find_class(self, module: str, name: str) -> Any:  # noqa: D401 - pickle API
        factory = _ALLOWED.get((module, name))
        if factory is None:
            raise _Refused(module, name)
        return factory()


def loads_pickle(data: bytes, source: str | Path | None = None) -> Any:
    """Unpickle ``data`` with :class:`SafeUnpickler`.

    Args:
        data: the pickle bytes.
        source: file name used in error messages.

    Raises:
        DataError: a refused class (named in the message), a truncated or corrupt stream.
    """
    try:
        return SafeUnpickler(io.BytesIO(data)).load()
    except _Refused as exc:
        raise DataError(
            source, None,
            f"refusing to unpickle class {exc.qualname!r}: only numpy arrays and builtin "
            "containers/scalars are allowed in dataset pickles",
        ) from None
    except EOFError:
        raise DataError(source, None, "pickle is truncated (unexpected end of file)") from None
    except (pickle.UnpicklingError, ValueError, TypeError, AttributeError, IndexError,
            KeyError, UnicodeDecodeError, MemoryError, OverflowError) as exc:
        # Corrupt streams surface as any of these from the C unpickler.
        raise DataError(source, None, f"corrupt or truncated pickle ({type(exc).__name__}: {exc})") from None


def load_pickle(path: str | Path) -> Any:
    """Read and safely unpickle the file at ``path``.

    Returns:
        The unpickled object (numpy arrays, dicts, lists, tuples, str, numbers, ...).

    Raises:
        DataError: the file is missing/unreadable, truncated or corrupt, or it names a
            class outside the allow-list (the message gives the file and the class).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(path, None, "file not found") from None
    except OSError as exc:
        raise DataError(path, None, f"cannot read file: {exc}") from None
    return loads_pickle(data, path)
