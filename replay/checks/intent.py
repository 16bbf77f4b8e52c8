"""The intent: what the person did after the grasp, where the dataset names it.

**Intent** (:func:`recording_intent`): what the person did after the grasp, from the
sequence name where the dataset encodes it (GRAB ``<object>_<intent>_<n>`` /
``<object>_lift``; :data:`INTENT_UNKNOWN` elsewhere), in ``meta["intent"]``; a GRAB
intent other than ``lift`` is flagged (``input_flags["intent"]``): the lift protocol
replaces the recorded motion after the grasp by a synthetic lift, the ``recorded``
protocol replays it (:mod:`replay.protocol.recorded_protocol`).
"""

from __future__ import annotations

from replay.data.types import Recording
from replay.datasets import DATASETS

#: intent of a recording whose dataset does not encode one in its names
INTENT_UNKNOWN = "unknown"
#: the intent of a lift recording (GRAB ``<object>_lift``): what the lift protocol replays as recorded
INTENT_LIFT = "lift"


def recording_intent(rec: Recording) -> str:
    """What the person does after the grasp, from the sequence name where the dataset encodes it.

    GRAB names are ``<object>_lift`` or ``<object>_<intent>_<n>`` (mirror README:
    pass, drink, pour, offhand, use, inspect, takepicture, call, staple). Other datasets:
    TACO names are a date and take, HUG-Bench scenes carry none: :data:`INTENT_UNKNOWN`.
    """
    if rec.dataset not in DATASETS or not DATASETS[rec.dataset].names_object:
        return INTENT_UNKNOWN
    parts = str(rec.name).split("_")
    if len(parts) >= 3 and parts[-1].isdigit():
        return parts[-2]
    if len(parts) >= 2 and not parts[-1].isdigit():
        return parts[-1]
    return INTENT_UNKNOWN
