"""Bounded cost for every file the data hands the pipeline: a size limit per kind checked before a byte is read
(``REPLAY_MAX_<KIND>_MB``, read at each check), and JSON that cannot blow the stack."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from replay.errors import DataError

#: MB (10^6 bytes) per kind: each over 100x the largest real file of its kind on the mirror
DEFAULT_LIMITS_MB = {"recording": 1000.0, "mesh": 200.0, "mjcf": 1.0, "json": 16.0}
_KIND_WORDS = {"recording": "a recording", "mesh": "a mesh", "mjcf": "an MJCF file", "json": "a JSON file"}
#: Hz: 20x the highest common capture rate (480 Hz): above it a rate is a wrong number, not a fast camera
MAX_PLAUSIBLE_FPS_HZ = 10_000.0


def limit_env(kind: str) -> str:
    """The environment variable that sets ``kind``'s limit: ``REPLAY_MAX_<KIND>_MB``."""
    return f"REPLAY_MAX_{kind.upper()}_MB"


def limit_bytes(kind: str) -> int:
    """``kind``'s limit in bytes; DataError when ``$REPLAY_MAX_<KIND>_MB`` is not a positive number."""
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


def check_size(path: str | Path, kind: str, field: str | None = None, *, source: str | Path | None = None) -> int:
    """The size (bytes) of ``path`` (link followed), refused above ``kind``'s limit before anything reads it. Raises
    DataError: missing or not a regular file; too large (cause ``file_size``; says how to raise it)."""
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
    """The bytes of ``path``, never past ``stat``'s size plus one; DataError as :func:`check_size`, or unreadable."""
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
    """The JSON at ``path``; DataError when missing, too large, not UTF-8, not JSON, or nested too deeply."""
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
