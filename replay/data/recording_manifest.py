"""The user's own ``recordings.json`` beside the recordings (never fetched), stating what the files do not:
``{"fps": 30}`` or ``{"fps": {"cubesmall_lift": 30, "*": 120}}`` (Hz, per file stem); ``--fps`` wins over it."""

from __future__ import annotations

import math
from pathlib import Path

from replay.data.limits import MAX_PLAUSIBLE_FPS_HZ, load_json
from replay.errors import DataError

MANIFEST_NAME = "recordings.json"


def manifest_fps(recording: str | Path) -> tuple[float | None, Path | None]:
    """(fps Hz, manifest path) stated for ``recording``, else (None, None). Raises DataError (cause ``frame_rate``):
    a manifest too large, not JSON or too deep, or an ``fps`` not a positive rate up to ``MAX_PLAUSIBLE_FPS_HZ``."""
    path = Path(recording).parent / MANIFEST_NAME
    if not path.is_file():
        return None, None
    doc = load_json(path, "the recording manifest")
    fps = doc.get("fps") if isinstance(doc, dict) else None
    field = "fps"
    if isinstance(fps, dict):
        stem = Path(recording).stem
        field = f"fps.{stem}" if stem in fps else "fps.*"
        fps = fps.get(stem, fps.get("*"))
    if fps is None:
        return None, None
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or not fps > 0:
        raise DataError(
            path,
            field,
            f"expected a positive frame rate in Hz, a finite number (or a mapping of them), got {fps!r}",
            cause="frame_rate",
        )
    if fps > MAX_PLAUSIBLE_FPS_HZ:
        raise DataError(
            path,
            field,
            f"implausible frame rate {fps:g} Hz (a hand recording is read at up to {MAX_PLAUSIBLE_FPS_HZ:g} Hz)",
            cause="frame_rate",
        )
    return float(fps), path
