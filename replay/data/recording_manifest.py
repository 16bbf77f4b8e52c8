"""A user's own recording manifest: what the user states about recordings whose files do not say it.

``recordings.json`` beside the recordings (e.g. ``grab/recordings/recordings.json``), written by
the user, never fetched::

    {"fps": 30}                                      # every recording in the folder
    {"fps": {"cubesmall_lift": 30, "*": 120}}        # per recording (file stem), "*" for the rest

Only ``fps`` (Hz) is read so far (:func:`manifest_fps`); a stated rate replaces the one the
adapter takes from the dataset's documentation (:func:`replay.checks.time_base.with_fps`, source
``user (recordings.json)``). ``--fps`` on the command line wins over the manifest.
"""

from __future__ import annotations

import math
from pathlib import Path

from replay.data.limits import MAX_PLAUSIBLE_FPS_HZ, load_json
from replay.errors import DataError

MANIFEST_NAME = "recordings.json"


def manifest_fps(recording: str | Path) -> tuple[float | None, Path | None]:
    """(fps Hz, manifest path) the user's ``recordings.json`` beside ``recording`` states for it,
    else (None, None) (no manifest, or no ``fps`` for this recording).

    Raises:
        DataError: the manifest is too large, not JSON or nested too deeply to parse
            (:func:`replay.data.limits.load_json`), or its ``fps`` is not a positive finite number
            (JSON's ``Infinity``, ``NaN``) up to :data:`~replay.data.limits.MAX_PLAUSIBLE_FPS_HZ`, or a
            mapping of them (the field named, cause ``frame_rate``).
    """
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
