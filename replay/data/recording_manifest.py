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

import json
from pathlib import Path

from replay.errors import DataError

MANIFEST_NAME = "recordings.json"


def manifest_fps(recording: str | Path) -> tuple[float | None, Path | None]:
    """(fps Hz, manifest path) the user's ``recordings.json`` beside ``recording`` states for it,
    else (None, None) (no manifest, or no ``fps`` for this recording).

    Raises:
        DataError: the manifest is not JSON, or its ``fps`` is not a positive number or a mapping of them.
    """
    path = Path(recording).parent / MANIFEST_NAME
    if not path.is_file():
        return None, None
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise DataError(path, None, f"cannot read the recording manifest: {e}") from None
    fps = doc.get("fps") if isinstance(doc, dict) else None
    if isinstance(fps, dict):
        fps = fps.get(Path(recording).stem, fps.get("*"))
    if fps is None:
        return None, None
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not fps > 0:
        raise DataError(path, "fps", f"expected a positive frame rate in Hz (or a mapping of them), got {fps!r}")
    return float(fps), path
