"""Checks: is a recording sound enough to replay honestly, before any physics.

A layer above :mod:`replay.data` (which reads recordings as their adapters give them) and
below the simulation:

* :mod:`replay.checks.recording_checks` - :func:`~replay.checks.recording_checks.check_recording` runs
  every input check, one module per concern: :mod:`~replay.checks.frames` (untracked frames,
  timing), :mod:`~replay.checks.hand` (handedness, which hand carries the object),
  :mod:`~replay.checks.object_placement` (units, scale, mass, placement),
  :mod:`~replay.checks.intent`; each refuses with a one-line
  :class:`~replay.errors.DataError`, or repairs and flags in ``Recording.meta["input_flags"]``;
* :mod:`replay.checks.object_frame` - the object-frame validation (hull gap, density,
  resting, lift onset, hand-object distance at the grasp frame).

:func:`load_recording` is the loader every replay uses: the adapter, then the checks.
"""

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
    checks: bool = True,
    fps: float | None = None,
    object_time_offset_s: float | None = None,
    **kwargs,
) -> Recording:
    """Load sequence ``name`` of ``dataset`` into the canonical :class:`Recording`.

    With ``checks`` (default) the recording then passes
    :func:`replay.checks.recording_checks.check_recording`: untracked frames are marked in
    ``valid``, the hand side is checked against the landmarks, and too few / too sparse /
    too fast frames, object scale, mass and placement are input errors; named flags go
    to ``meta["input_flags"]``.

    Args:
        dataset: ``"grab"``, ``"taco"`` or ``"hug-bench"``.
        name: a name from :func:`replay.data.list_sequences`.
        data_dir: staged data folder (default ``data/`` or ``$REPLAY_DATA``; falls back to
            ``$REPLAY_MIRROR``), see :func:`replay.data.locate.dataset_dir`.
        checks: run the input checks (False: the adapter's output as is).
        fps: the recording's frame rate, Hz, as the user states it (``--fps``): replaces the
            adapter's (:func:`replay.checks.time_base.with_fps`; ``meta["fps_source"]`` says so).
            Without it, a rate the user's ``recordings.json`` beside the recording states
            (:mod:`replay.data.recording_manifest`) does the same.
        object_time_offset_s: s the object stream runs behind the hand's, as the user states it
            (``--object-time-offset``; < 0: ahead): the object tracks are shifted by it before the
            checks (:func:`replay.checks.stream_sync.with_object_time_offset`); None or 0: as recorded.
        **kwargs: passed to the adapter (e.g. ``hand="left"`` for HUG-Bench).

    Raises:
        DataError: unknown dataset or sequence, any adapter error (file + field), or
            (``checks``) an input error of :mod:`replay.checks.recording_checks`.
    """
    rec = read_recording(dataset, name, data_dir, **kwargs)
    if fps is not None:
        rec = with_fps(rec, fps, "user (--fps)")
    elif (stated := manifest_fps(rec.source))[0] is not None:  # the user's recordings.json
        rec = with_fps(rec, stated[0], f"user ({stated[1].name})")
    if object_time_offset_s:
        rec = with_object_time_offset(rec, object_time_offset_s)
    return check_recording(rec) if checks else rec
