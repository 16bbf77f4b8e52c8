"""A study's append-only ``<stem>.records.jsonl``, one fsync'd JSON line per finished job (a kill loses the running
jobs and a torn last line)::

    {"key": "mug_lift", "sequence": "mug_lift", "protocol": "lift", "status": "ok",
     "json": "study_rollouts/mug_lift.json", "config_hash": "...", "wall_s": 12.3, "job_s": 4.1}

``status`` ``ok`` (``json`` relative to the study folder, written first), ``refused`` / ``error`` (``reason``),
``storage``; ``wall_s`` the study's wall time then, ``job_s`` the job's, s."""

from __future__ import annotations

import json
import os
from pathlib import Path

from replay.results.convert import ResultsFormatError
from replay.results.files import finite

RECORDS_SUFFIX = ".records.jsonl"


def records_path(study_path: str | Path) -> Path:
    p = Path(study_path)
    return p.with_name(p.stem + RECORDS_SUFFIX)


def append_record(path: str | Path, lines: list[dict]) -> None:
    """Append ``lines`` in one fsync'd write (NaN and inf as null); OSError if it cannot be written."""
    text = "".join(json.dumps(finite(ln), separators=(",", ":"), default=str) + "\n" for ln in lines)
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def read_records(path: str | Path) -> list[dict]:
    """The records at ``path`` ([] without a file; a torn last line dropped). ResultsFormatError: a line before the last
    is not a JSON object."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ResultsFormatError(path, None, f"cannot be read ({e.strerror or e})") from None
    lines = raw.split(b"\n")
    complete, tail = lines[:-1], lines[-1]  # tail: b"" after a final newline, else a torn line
    out = []
    for n, ln in enumerate(complete, 1):
        if not ln.strip():
            continue
        try:
            doc = json.loads(ln)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            if n == len(complete) and not tail:  # the last line, torn inside its text
                break
            raise ResultsFormatError(
                path,
                f"line {n}",
                "is not a JSON object (a damaged records file: remove it and resume from the rollout JSONs)",
            )
        out.append(doc)
    return out


def repair_tail(path: str | Path) -> int:
    """Cut a torn last line off ``path``; returns the bytes removed."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return 0
    keep = raw.rfind(b"\n") + 1  # after the last newline: a torn line, if any
    if keep:  # the last complete line: torn inside its text (not JSON) is cut too
        start = raw.rfind(b"\n", 0, keep - 1) + 1
        try:
            whole = isinstance(json.loads(raw[start:keep]), dict)
        except ValueError:
            whole = not raw[start:keep].strip()
        keep = keep if whole else start
    if keep == len(raw):
        return 0
    with open(p, "r+b") as f:
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return len(raw) - keep


def latest_by_key(records: list[dict]) -> dict[str, dict]:
    """``{key: its last record}`` (a job run again, e.g. on resume, counts by its latest line)."""
    return {str(r["key"]): r for r in records if "key" in r}
