"""Cause codes: the class of fault each input refusal (``DataError.cause``) and flag (``input_flags`` key) names,
most specific first (:data:`SPECIFICITY`)."""

from __future__ import annotations

import re
from collections import Counter

CAUSES = {
    "units": "a length or mass in another unit (millimetres for metres, ...)",
    "frames_missing": "frames missing from every stream (double-length steps, or gaps in the timestamps)",
    "object_model_mismatch": "the object model is not the object the recording holds (another or a scaled mesh)",
    "stream_offset": "the hand and object streams are out of sync (one runs behind the other)",
    "frame_rate": "the recording read at a frame rate its motion does not fit",
    "sample_and_hold": "a lower-rate stream written at a higher rate by repeating samples",
    "untracked_frames": "frames whose hand was not tracked (zeros, collapsed, frozen, NaN)",
    "stream_shape": "a stream of another shape or length than the others",
    "quaternion": "a quaternion stream not of unit length",
    "too_few_frames": "too few or too sparse tracked frames before the grasp",
    "hand_speed": "the hand moves faster than a hand can",
    "finger_swap": "finger landmark chains exchanged (a tracker identity swap)",
    "handedness": "the hand's side is not the one the file says",
    "other_hand": "the object is carried by a hand the recording does not store",
    "object_track": "jumps or noise in the object track that no hand explains",
    "collision_parts": "a collision part the simulator cannot use (not convex, degenerate)",
    "native_crash": "native code (the convex decomposition) crashed or hung on this input",
    "object_frame": "object mesh and poses in different frames (or the world not Z-up)",
    "object_mass": "the mass as simulated differs from the asset's",
    "object_rest": "the object cannot rest where the recording puts it before the grasp",
    "penetration": "the recorded hand deep inside the object",
    "hand_shape": "the hand's bones change length over the take",
    "intent": "the recorded motion after the grasp is not a lift",
    "sequence_name": "a file name not in its dataset's naming: the intent it would name is not read (unknown)",
    "file_size": "a file larger than its kind's limit, or declaring more than it holds (a size bomb)",
    "path_escape": "a path the data names that leaves its folder ('..', an absolute path, a symlink)",
    "input": "other bad input (the file and field named; no check named a class)",
}

#: flag key of ``input_flags`` -> its cause (a key not listed is its own cause, or ``input``)
FLAG_CAUSES = {"time_base": "frame_rate", "hand_side_from_landmarks": "handedness"}

#: causes from the most specific (said first) to the least; one not listed comes last
SPECIFICITY = (
    "units",
    "stream_shape",
    "quaternion",
    "frames_missing",
    "object_model_mismatch",
    "stream_offset",
    "sample_and_hold",
    "frame_rate",
    "finger_swap",
    "handedness",
    "other_hand",
    "object_track",
    "untracked_frames",
    "too_few_frames",
    "hand_speed",
    "collision_parts",
    "native_crash",
    "object_mass",
    "object_frame",
    "object_rest",
    "penetration",
    "hand_shape",
    "intent",
    "sequence_name",
    "file_size",
    "path_escape",
    "input",
)

_REFUSAL = re.compile(r"^\[([a-z_]+)\] ")


def refusal_cause(line: str) -> str | None:
    """The cause code of a study's refusal line (``[frames_missing] ...``), or None when it has none."""
    m = _REFUSAL.match(str(line))
    return m.group(1) if m else None


def flag_cause(key: str) -> str:
    """The cause of an ``input_flags`` key (:data:`FLAG_CAUSES`; a key that is a cause is its own)."""
    return FLAG_CAUSES.get(key, key if key in CAUSES else "input")


def flag_causes(flags: dict) -> list[str]:
    """The causes of a recording's ``input_flags``, each once, most specific first."""
    return most_specific_first({flag_cause(k) for k in flags or {}})


def most_specific_first(causes) -> list[str]:
    """``causes`` sorted by :data:`SPECIFICITY` (unknown ones last, by name)."""
    rank = {c: i for i, c in enumerate(SPECIFICITY)}
    return sorted(set(causes), key=lambda c: (rank.get(c, len(rank)), c))


def count_causes(input_flags: list[dict], failed: dict) -> dict:
    """``{"refused": {cause: n}, "flagged": {cause: n}}`` of the study's ``failed`` lines and its rollouts'
    ``input_flags`` (a recording counted once per cause)."""
    refused = Counter(c for line in failed.values() if (c := refusal_cause(line)) is not None)
    flagged = Counter(c for flags in input_flags for c in flag_causes(flags or {}))
    order = most_specific_first([*refused, *flagged])
    return {
        "refused": {c: refused[c] for c in order if c in refused},
        "flagged": {c: flagged[c] for c in order if c in flagged},
    }


def cause_counts_text(causes: dict | None) -> str | None:
    """``refused frames_missing 1, units 2; flagged untracked_frames 1`` of :func:`count_causes`, or None."""
    parts = [
        f"{what} " + ", ".join(f"{c} {n}" for c, n in (causes or {}).get(what, {}).items())
        for what in ("refused", "flagged")
        if (causes or {}).get(what)
    ]
    return "; ".join(parts) or None
