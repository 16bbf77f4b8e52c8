"""The one writer (atomic) and reader of each result file; readers check ``format_version`` and raise a one-line
:class:`~replay.results.records.ResultsFormatError` naming the file and field."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import numpy as np

from replay.fileio import atomic_write_bytes, atomic_write_text
from replay.results.convert import ResultsFormatError, check_version
from replay.results.records import FORMAT_VERSION, ROW_FIELDS, RolloutRecord, StudyRecord


def json_default(o):
    """``json.dumps``'s ``default``: NumPy scalars and arrays, paths, dataclass records (``to_dict``)."""
    if isinstance(o, (np.integer, np.floating, np.bool_)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    if dataclasses.is_dataclass(o):
        return o.to_dict()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def finite(x):
    """``x`` with every non-finite float as None, at any depth (JSON has no NaN)."""
    if isinstance(x, float) and not np.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x


def dumps(obj) -> str:
    """JSON text (NaN and inf written as null)."""
    return json.dumps(finite(json.loads(json.dumps(obj, default=json_default))), indent=1)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ResultsFormatError(path, None, "not found; run scripts/run_study.py first") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsFormatError(path, None, f"not a readable JSON file: {exc}") from None


def write_rollout(path: str | Path, rec: RolloutRecord) -> dict:
    """Write a rollout JSON atomically; returns the JSON object as written (NaN -> None)."""
    text = dumps(rec.to_dict())
    atomic_write_text(path, text)
    return json.loads(text)


def read_rollout(path: str | Path) -> RolloutRecord:
    """Raises: ResultsFormatError (missing, unreadable, other version)."""
    return RolloutRecord.from_dict(_read_json(Path(path)), path)


def write_study(path: str | Path, study: StudyRecord, csvs: dict[str, str] | None = None) -> dict:
    """Write the study JSON and ``csvs`` ``{suffix: CSV text}`` (``<path stem><suffix>.csv``); returns the JSON
    object."""
    text = dumps(study.to_dict())
    atomic_write_text(path, text)
    p = Path(path)
    for suffix, body in (csvs or {}).items():
        atomic_write_text(p.with_suffix(f"{suffix}.csv"), body)
    return json.loads(text)


def read_study(path: str | Path) -> StudyRecord:
    """Raises: ResultsFormatError (missing, unreadable, other version, no rows)."""
    return StudyRecord.from_dict(_read_json(Path(path)), path)


#: what a spreadsheet evaluates at the start of a cell (OWASP, "CSV Injection": =, +, -, @, tab, CR)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A string starting with one of :data:`_FORMULA_START` with a leading ``'`` (OWASP), so a spreadsheet never
    evaluates it; numbers unchanged."""
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def rows_csv(rows: list[dict], fields: list[str] | tuple[str, ...] = ROW_FIELDS) -> str:
    """CSV text of study rows (dicts as JSON, None empty, cells through :func:`csv_cell`); CRLF lines (RFC 4180), so a
    cell holding CR is quoted too."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow([csv_cell(k) for k in fields])
    for r in rows:
        w.writerow([csv_cell(_cell_text(r.get(k))) for k in fields])
    return buf.getvalue()


def _cell_text(v):
    if v is None:
        return ""
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


def write_poses(path: str | Path, poses: dict) -> None:
    """Write a poses npz (:data:`POSES_KEYS`) atomically, with ``format_version``."""
    buf = io.BytesIO()
    np.savez_compressed(buf, format_version=np.int32(FORMAT_VERSION), **poses)
    atomic_write_bytes(path, buf.getvalue())


def check_poses_version(path: str | Path, z) -> None:
    """Raises ResultsFormatError unless the opened npz ``z`` is of :data:`FORMAT_VERSION`."""
    check_version(z["format_version"] if "format_version" in z.files else None, path)
