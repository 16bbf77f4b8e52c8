"""The intent: what the person did after the grasp, where the dataset names it (``meta["intent"]``); a GRAB
intent other than ``lift`` is flagged, as the lift protocol replaces the motion after the grasp."""

from __future__ import annotations

from replay.data.types import Recording
from replay.datasets import DATASETS

INTENT_UNKNOWN = "unknown"
#: the intent of a lift recording (GRAB ``<object>_lift``): what the lift protocol replays as recorded
INTENT_LIFT = "lift"


def recording_intent(rec: Recording) -> str:
    """The intent from the sequence name: GRAB ``<object>_lift`` or ``<object>_<intent>_<n>``; else
    :data:`INTENT_UNKNOWN`."""
    if rec.dataset not in DATASETS or not DATASETS[rec.dataset].names_object:
        return INTENT_UNKNOWN
    parts = str(rec.name).split("_")
    if len(parts) >= 3 and parts[-1].isdigit():
        return parts[-2]
    if len(parts) >= 2 and not parts[-1].isdigit():
        return parts[-1]
    return INTENT_UNKNOWN
