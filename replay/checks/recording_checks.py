"""Input checks: a recording that cannot be replayed honestly is an input error (a one-line DataError with a cause) or
a flag in ``meta["input_flags"]``, never a physics outcome."""

from __future__ import annotations

import contextlib
import dataclasses

from replay.checks.causes import CAUSES, flag_cause, most_specific_first
from replay.checks.convexity import check_convex_parts
from replay.checks.finger_swap import check_finger_swap
from replay.checks.frames import check_timing, mark_untracked, untracked_frames
from replay.checks.hand import check_handedness
from replay.checks.hand_scale import check_hand_scale
from replay.checks.hand_shape import check_hand_shape
from replay.checks.intent import INTENT_LIFT, INTENT_UNKNOWN, name_flags, recording_intent
from replay.checks.missing_frames import check_missing_frames
from replay.checks.object_mass import check_object_mass
from replay.checks.object_model import check_object_model
from replay.checks.object_placement import check_object, check_object_units
from replay.checks.object_rest import check_object_rest
from replay.checks.object_track import check_object_track
from replay.checks.penetration import check_penetration
from replay.checks.quaternions import continuous_quaternions
from replay.checks.stream_sync import check_stream_sync
from replay.checks.time_base import check_time_base, sample_and_hold
from replay.data.types import Recording
from replay.errors import DataError

#: (figures key, check returning (flags, figures)) run after the object's placement, in order
PHYSICAL_CHECKS = (
    ("object_rest", check_object_rest),
    ("penetration", check_penetration),
    ("hand_shape", check_hand_shape),
)

#: checks that frames missing, or a wrong model or stream offset, make fire (named as consequences)
TIMING_CONSEQUENCES = (check_time_base, check_timing)
PLACEMENT_CONSEQUENCES = (check_object, check_object_rest, check_penetration)


def check_recording(rec: Recording) -> Recording:
    """The checked copy of ``rec``: untracked frames False in ``valid``, the landmarks' side, ``meta["input_flags"]``
    (most specific cause first) and ``meta["input_checks"]`` (figures); a refusal names the checks it explains as
    consequences. Raises DataError naming file, field and ``cause``."""
    flags: dict = {}
    figs: dict = {}
    rec, q = continuous_quaternions(rec)  # before anything differences or interpolates a quaternion
    if q:
        figs["quaternion_sign_flips"] = q
    figs["hand_scale"] = check_hand_scale(rec)  # a unit error explains speeds and gaps: said first
    hold = sample_and_hold(untracked_frames(rec)["repeated"])
    rec, n = mark_untracked(rec)
    if n and not hold:
        flags["untracked_frames"] = n
    with _naming_consequences(rec, TIMING_CONSEQUENCES):  # missing frames explain a speed spike, a "rate"
        rec, f, figs["missing_frames"] = check_missing_frames(rec)
    flags.update(f)
    f, figs["time_base"] = check_time_base(rec, hold)  # a wrong clock explains an implausible speed
    flags.update(f)
    figs["timing"] = check_timing(rec)  # first: a recording with no tracked frames says so
    f, figs["finger_swap"] = check_finger_swap(rec)  # before the side: a swap flips the palm in its frames
    flags.update(f)
    rec, f, figs["handedness"] = check_handedness(rec)
    flags.update(f)
    f, figs["object_track"] = check_object_track(rec)  # a jump explains a misplaced object: said first
    flags.update(f)
    figs["collision_parts"] = check_convex_parts(rec)
    _object_and_streams(rec, flags, figs)
    f, figs["object_mass"] = check_object_mass(rec)  # the mass the simulator will use, against the asset's
    flags.update(f)
    for key, check in PHYSICAL_CHECKS:
        f, figs[key] = check(rec)
        flags.update(f)
    intent = recording_intent(rec)
    flags.update(name_flags(rec))
    if intent not in (INTENT_LIFT, INTENT_UNKNOWN):
        flags["intent"] = (
            f"{intent}: the recorded motion after the grasp is not a lift (the lift protocol "
            "replaces it; --protocol recorded replays it)"
        )
    rank = most_specific_first(CAUSES)
    flags = {k: flags[k] for k in sorted(flags, key=lambda k: rank.index(flag_cause(k)))}
    meta = dict(rec.meta, input_flags=flags, input_checks=figs, intent=intent)
    return dataclasses.replace(rec, meta=meta)


def _object_and_streams(rec: Recording, flags: dict, figs: dict) -> None:
    """The object model and the streams' sync, then the object's scale, mass and placement."""
    check_object_units(rec)  # a model 1000x, or 10x heavy, is a unit: said first
    with _naming_consequences(rec, PLACEMENT_CONSEQUENCES):
        figs["object_model"] = check_object_model(rec)
    with _naming_consequences(rec, PLACEMENT_CONSEQUENCES):
        f, figs["stream_sync"] = check_stream_sync(rec)
    flags.update(f)
    figs["object"] = check_object(rec)


def consequences(rec: Recording, probes) -> list[str]:
    """The causes of ``probes`` that refuse or flag ``rec``, most specific first."""
    out = []
    for probe in probes:
        try:
            r = probe(rec)
        except DataError as e:
            out.append(e.cause or "input")
            continue
        except Exception:  # a check that cannot even run on the faulty input: nothing to name
            continue
        if isinstance(r, tuple) and isinstance(r[0], dict):
            out += [flag_cause(k) for k in r[0]]
    return most_specific_first(out)


@contextlib.contextmanager
def _naming_consequences(rec: Recording, probes):
    """Re-raise a :class:`DataError` of the block with the other causes of ``probes`` that fire on ``rec`` added."""
    try:
        yield
    except DataError as e:
        also = [c for c in consequences(rec, probes) if c != e.cause]
        if not also:
            raise
        raise DataError(
            e.path, e.field, f"{e.message} (the {', '.join(also)} check(s) fire too, as consequences)", cause=e.cause
        ) from None
