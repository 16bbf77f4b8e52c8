"""Bounded cost for every file the data hands the pipeline: size limits per kind, checked before a
byte is read, and JSON that cannot blow the stack.

A downloaded dataset decides how large its files are and what they claim to hold; a reader that
believes them can be made to allocate gigabytes (a tiny pickle calling ``bytearray(6 GiB)``, a
sparse 25 GB file read whole, an STL header declaring 2^31 triangles). Every reader therefore asks
:func:`check_size` (or :func:`read_bounded`) before reading, so a refusal costs one ``stat``.

Limits (MB, 10^6 bytes) per kind (:data:`DEFAULT_LIMITS_MB`), each raised (or lowered) with the
environment variable ``REPLAY_MAX_<KIND>_MB`` (e.g. ``REPLAY_MAX_RECORDING_MB=4000``; read at each
check, so it reaches every worker the study starts). Sources of the defaults (measured on the
offline mirror): the largest recording is 3.4 MB (GRAB mug_lift; TACO 20231104_017 3.2 MB), a
HUG-Bench ``aria_data.pkl`` holds minutes of 30 Hz tracking (tens of MB); the largest mesh is
0.54 MB (object_sim cubesmall.stl), the largest MJCF file 15 kB. Each default is over 100x the
largest real file of its kind.

:data:`MAX_PLAUSIBLE_FPS_HZ`: the highest frame rate a hand recording is read at. Optical motion
capture of hands runs at 30-480 Hz (the common rates of :mod:`replay.checks.time_base`); 10 kHz is
20x the highest of them: a rate above it is a wrong number, not a fast camera.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from replay.errors import DataError

#: size limit per kind of input file, MB (module doc gives the sources)
DEFAULT_LIMITS_MB = {"recording": 1000.0, "mesh": 200.0, "mjcf": 1.0, "json": 16.0}
#: what each kind is, for the refusal's sentence
_KIND_WORDS = {"recording": "a recording", "mesh": "a mesh", "mjcf": "an MJCF file", "json": "a JSON file"}
#: the highest frame rate a hand recording is read at, Hz (module doc)
MAX_PLAUSIBLE_FPS_HZ = 10_000.0


def limit_env(kind: str) -> str:
    """The environment variable that sets ``kind``'s limit: ``REPLAY_MAX_<KIND>_MB``."""
    return f"REPLAY_MAX_{kind.upper()}_MB"


def limit_bytes(kind: str) -> int:
    """``kind``'s size limit in bytes: ``$REPLAY_MAX_<KIND>_MB`` if set, else :data:`DEFAULT_LIMITS_MB`.

    Raises:
        DataError: the variable is not a positive number (field: the variable).
    """
    env = limit_env(kind)
    raw = os.environ.get(env)
    if raw in (None, ""):
        return int(DEFAULT_LIMITS_MB[kind] * 1e6)
    try:
        mb = float(raw)
    except ValueError:
        mb = float("nan")
    if not (math.isfinite(mb) and mb > 0):
        raise DataError(None, env, f"expected a positive size in MB, got {raw!r}")
    return int(mb * 1e6)


def check_size(path: str | Path, kind: str, field: str | None = None, source: str | Path | None = None) -> int:
    """The size (bytes) of the file at ``path``, refused above ``kind``'s limit before anything reads it.

    Args:
        path: the file (followed if a link).
        kind: ``"recording"``, ``"mesh"``, ``"mjcf"`` or ``"json"`` (:data:`DEFAULT_LIMITS_MB`).
        field: the field that named the file (e.g. ``"geom[contact0].mesh"``), for the message.
        source: the file that named it (named instead of ``path``, with ``path`` in the sentence).

    Raises:
        DataError: missing or not a regular file; larger than the limit (cause ``file_size``; the
            message says how to raise it).
    """
    path = Path(path)
    where = source if source is not None else path
    try:
        st = path.stat()
    except FileNotFoundError:
        raise DataError(where, field, f"file not found: {path}") from None
    except OSError as exc:
        raise DataError(where, field, f"cannot read {path}: {exc}") from None
    if not path.is_file():
        raise DataError(where, field, f"{path} is not a regular file")
    cap = limit_bytes(kind)
    if st.st_size > cap:
        what = "" if source is None else f"{path} "
        raise DataError(
            where,
            field,
            f"{what}is {st.st_size / 1e6:,.1f} MB, above the {cap / 1e6:g} MB limit for "
            f"{_KIND_WORDS[kind]}; if the file is genuine, raise it with "
            f"{limit_env(kind)}=<MB>",
            cause="file_size",
        )
    return st.st_size


def read_bounded(path: str | Path, kind: str, field: str | None = None) -> bytes:
    """The bytes of ``path`` after :func:`check_size`: the size ``stat`` gave, and one byte more to
    notice a file that grew meanwhile (refused then, never read past the limit).

    Raises:
        DataError: see :func:`check_size`; an unreadable file, or one that grew past the limit.
    """
    path = Path(path)
    size = check_size(path, kind, field)
    cap = limit_bytes(kind)
    try:
        with open(path, "rb") as f:
            data = f.read(size + 1)  # never a buffer of the limit's size: only what stat reported
            while len(data) <= cap and (more := f.read(min(1 << 20, cap + 1 - len(data)))):
                data += more
    except OSError as exc:
        raise DataError(path, field, f"cannot read file: {exc}") from None
    if len(data) > cap:
        raise DataError(path, field, f"grew past the {cap / 1e6:g} MB limit while read", cause="file_size")
    return data


def load_json(path: str | Path, what: str | None = None) -> Any:
    """Parse the JSON file at ``path`` with its size bounded (``json`` limit); nesting too deep for
    the parser is one :class:`DataError`, never a ``RecursionError`` traceback.

    Args:
        path: the file.
        what: what the file is, for the message (``"cannot read <what>: ..."``; None: the message
            alone, after the file's name).

    Raises:
        DataError: missing, too large, not UTF-8, not JSON, or nested too deeply to parse.
    """
    path = Path(path)
    data = read_bounded(path, "json")
    head = f"cannot read {what}: " if what else ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(path, None, f"{head}not UTF-8 ({exc})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise DataError(
            path, None, f"{head}nested too deeply to parse (a JSON file the pipeline reads nests a few levels)"
        ) from None
    except ValueError as exc:
        raise DataError(path, None, f"{head}not valid JSON ({exc})") from None
