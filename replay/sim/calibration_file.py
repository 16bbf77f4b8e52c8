"""The results file of the physics ``calibrated`` (``scripts/calibrate.py``; fields: docs/results.md), cached."""

from __future__ import annotations

import json
import os
from pathlib import Path

from replay.errors import DataError

CALIBRATION_FILE = Path(__file__).resolve().parents[1] / "results" / "calibration.json"
ENV = "REPLAY_CALIBRATION"

_cache: dict = {}


def calibration_path() -> Path:
    """The calibration file in effect: ``$REPLAY_CALIBRATION``, else :data:`CALIBRATION_FILE`."""
    return Path(os.environ.get(ENV) or CALIBRATION_FILE)


def read_calibration(path: Path | None = None) -> dict:
    """The calibration file, checked. Raises DataError: missing (run scripts/calibrate.py), not JSON, or without
    ``base`` / ``choice.overrides`` / ``choice.centres`` of the right types (names the file and field)."""
    p = Path(path) if path is not None else calibration_path()
    try:
        st = p.stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        raise DataError(
            p,
            None,
            "no calibration: the named physics 'calibrated' is chosen by scripts/calibrate.py "
            f"(or name a file in ${ENV})",
        ) from None
    if _cache.get(p, (None,))[0] == stamp:
        return _cache[p][1]
    try:
        doc = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise DataError(p, None, f"not a calibration JSON ({e})") from None
    choice = doc.get("choice") if isinstance(doc, dict) else None
    if not isinstance(choice, dict):
        raise DataError(p, "choice", "missing: scripts/calibrate.py writes it")
    if doc.get("base") not in ("replay", "authored"):
        raise DataError(p, "base", f"{doc.get('base')!r} is not a named physics (replay, authored)")
    for k in ("overrides", "centres"):
        if not isinstance(choice.get(k), dict):
            raise DataError(p, f"choice.{k}", "missing or not an object")
    _cache[p] = (stamp, doc)
    return doc
