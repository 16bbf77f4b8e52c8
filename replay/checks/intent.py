"""The intent where the dataset names it (``meta["intent"]``): a GRAB intent other than ``lift`` is flagged (the lift
protocol replaces the motion after the grasp); a name not GRAB's is ``unknown``, flagged ``sequence_name``."""

from __future__ import annotations

import re

from replay.data.types import Recording
from replay.datasets import DATASETS

INTENT_UNKNOWN = "unknown"
#: the intent of a lift recording (GRAB ``<object>_lift``): what the lift protocol replays as recorded
INTENT_LIFT = "lift"
#: GRAB's sequence names, ``<object>_lift`` or ``<object>_<intent>_<take>``, in lowercase letters and digits (GRAB's
#: files: ``mug_lift``, ``mug_pass_1``, ``camera_takepicture_1``; Taheri et al. 2020, GRAB, ECCV, its data release)
GRAB_NAME = re.compile(r"(?P<object>[a-z0-9]+)_(?P<intent>[a-z]+)(?:_(?P<take>[0-9]+))?")
#: the flag of a name that is not :data:`GRAB_NAME` (``input_flags``; names no part of the name: it may hold anything)
NAME_FLAG = "sequence_name"


def name_parts(dataset: str, name: str) -> re.Match | None:
    """``object``, ``intent``, ``take`` of a GRAB name's last path part; None for other datasets or names."""
    if dataset not in DATASETS or not DATASETS[dataset].names_object:
        return None
    return GRAB_NAME.fullmatch(str(name).split("/")[-1])


def recording_intent(rec: Recording) -> str:
    """The intent from the sequence name, else :data:`INTENT_UNKNOWN`."""
    m = name_parts(rec.dataset, rec.name)
    return INTENT_UNKNOWN if m is None else m["intent"]


def name_flags(rec: Recording) -> dict[str, str]:
    """``{"sequence_name": "unknown: ..."}`` for a GRAB name not :data:`GRAB_NAME`; ``{}`` otherwise."""
    if rec.dataset not in DATASETS or not DATASETS[rec.dataset].names_object or name_parts(rec.dataset, rec.name):
        return {}
    return {
        NAME_FLAG: f"{INTENT_UNKNOWN}: the file name is not GRAB's <object>_lift or <object>_<intent>_<take> "
        "(lowercase letters and digits), so no intent is read from it (grouped as no intent named)"
    }
