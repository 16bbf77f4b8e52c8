"""Input checks: is a recording sound enough to replay, before any physics (``docs/input-checks.md``)."""

from __future__ import annotations

from pathlib import Path

from replay.checks.recording_checks import check_recording
from replay.checks.stream_sync import with_object_time_offset
from replay.checks.time_base import with_fps
from replay.data import read_recording
from replay.data.recording_manifest import manifest_fps
from replay.data.types import Recording


def load_recording(
    dataset: str,
    name: str,
    data_dir: str | Path | None = None,
    *,
    checks: bool = True,
    fps: float | None = None,
    object_time_offset_s: float | None = None,
    **kwargs,
) -> Recording:
    """Sequence ``name`` of ``dataset`` through its adapter, then the input checks (``checks`` False: none).

    ``fps`` (Hz, ``--fps``) replaces the adapter's rate, else ``recordings.json``'s does; ``object_time_offset_s``: s
    the object stream runs behind the hand's (< 0: ahead); ``kwargs`` go to the adapter. Raises DataError: unknown
    dataset or sequence, an adapter error, or (``checks``) an input error."""
    rec = read_recording(dataset, name, data_dir, **kwargs)
    if fps is not None:
        rec = with_fps(rec, fps, "user (--fps)")
    elif (stated := manifest_fps(rec.source))[0] is not None:  # the user's recordings.json
        rec = with_fps(rec, stated[0], f"user ({stated[1].name})")
    if object_time_offset_s:
        rec = with_object_time_offset(rec, object_time_offset_s)
    return check_recording(rec) if checks else rec
