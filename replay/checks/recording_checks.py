"""Input checks: a recording that cannot be replayed honestly is an input error, never a physics outcome.

:func:`check_recording` runs after a dataset adapter (:func:`replay.checks.load_recording`
calls it) and before any kinematics or simulation. Each check either raises a one-line
:class:`~replay.errors.DataError` (file, field, what is wrong, what to do) or repairs
the recording and records a named flag in ``recording.meta["input_flags"]`` (the study
writes it into the rollout JSON as ``input_flags``; the validators report it). The
figures each check measured are in ``recording.meta["input_checks"]``.

One module per concern, each with its classes of fault, thresholds and their sources
(measured on the data mirror: the 30 GRAB s1 lifts, 83,160 frames at 120 Hz, and the 2
TACO sequences at 30 fps):

* :mod:`replay.checks.hand_scale` - the hand's size: landmarks in another length unit;
* :mod:`replay.checks.missing_frames` - frames missing from every stream (double-length steps),
  named as missing before the frame rate is judged;
* :mod:`replay.checks.time_base` - the frame rate against the take's motion, sample-and-hold;
* :mod:`replay.checks.frames` - untracked frames (at the origin, collapsed, frozen, MANO
  zeros: marked untracked) and timing before the grasp (too few, too sparse, too fast);
* :mod:`replay.checks.finger_swap` - finger landmark chains exchanged for some frames;
* :mod:`replay.checks.hand` - the hand's side from the palm landmarks, and whether the
  recorded hand carries the object;
* :mod:`replay.checks.object_placement` - object scale, mass (units) and placement against
  the support and the recorded hand;
* :mod:`replay.checks.intent` - what the person did after the grasp, from the sequence name;
* :mod:`replay.checks.hand_points` - the hand points every check looks at.

Physical consistency (a recording can be well formed and still describe something that
cannot happen):

* :mod:`replay.checks.quaternions` - every quaternion stream made sign-continuous first;
* :mod:`replay.checks.convexity` - collision parts are convex (the simulator uses hulls);
* :mod:`replay.checks.object_mass` - the mass as simulated (MuJoCo's compile) against the asset's;
* :mod:`replay.checks.object_model` - the object model's size against the grip and the rest the
  recording shows (a wrong model named before any frame error);
* :mod:`replay.checks.stream_sync` - the object stream's time offset against the hand's;
* :mod:`replay.checks.object_track` - jumps and noise of the object track no hand explains;
* :mod:`replay.checks.object_rest` - the object on its support, still, able to stand;
* :mod:`replay.checks.penetration` - how deep the recorded hand is inside the object;
* :mod:`replay.checks.hand_shape` - the hand's bone lengths stay constant;
* :mod:`replay.checks.geometry` - convex parts as half-spaces, shared by them.

Every refusal and flag carries a cause code (:mod:`replay.checks.causes`); the flags are ordered
most specific cause first.

Degenerate collision parts (flat, too few vertices) are checked where the parts are loaded
(:mod:`replay.data.mesh_checks`); native crashes of the convex decomposition are isolated in
:mod:`replay.data.isolate`.
"""

from __future__ import annotations

import contextlib
import dataclasses

from replay.checks.causes import CAUSES, flag_cause, most_specific_first
from replay.checks.convexity import check_convex_parts
from replay.checks.finger_swap import check_finger_swap
from replay.checks.frames import (
    check_timing,
    mark_untracked,
    untracked_frames,
)
from replay.checks.hand import (
    check_handedness,
)
from replay.checks.hand_scale import check_hand_scale
from replay.checks.hand_shape import check_hand_shape
from replay.checks.intent import INTENT_UNKNOWN, recording_intent
from replay.checks.missing_frames import check_missing_frames
from replay.checks.object_mass import check_object_mass
from replay.checks.object_model import check_object_model
from replay.checks.object_placement import (
    check_object,
    check_object_units,
)
from replay.checks.object_rest import check_object_rest
from replay.checks.object_track import check_object_track
from replay.checks.penetration import check_penetration
from replay.checks.quaternions import continuous_quaternions
from replay.checks.stream_sync import check_stream_sync
from replay.checks.time_base import check_time_base, sample_and_hold
from replay.data.types import Recording
from replay.errors import DataError

#: the physical-consistency checks after the object's scale and placement, in order:
#: (figures key, check returning (flags, figures)); the object track and the collision
#: parts are checked before the placement (:func:`check_recording`)
PHYSICAL_CHECKS = (
    ("object_rest", check_object_rest),
    ("penetration", check_penetration),
    ("hand_shape", check_hand_shape),
)

#: what frames missing would make fire: the frame rate (acceleration spikes), the hand's speed
TIMING_CONSEQUENCES = (check_time_base, check_timing)
#: what a wrong model or a stream offset would make fire: placement, rest, penetration
PLACEMENT_CONSEQUENCES = (check_object, check_object_rest, check_penetration)

__all__ = [
    "check_timing",
    "mark_untracked",
    "untracked_frames",
    "check_handedness",
    "INTENT_UNKNOWN",
    "recording_intent",
    "check_object",
    "check_recording",
    "PHYSICAL_CHECKS",
]


def check_recording(rec: Recording) -> Recording:
    """Run every input check on a canonical recording (module doc); return the checked copy.

    The returned recording has untracked frames marked False in ``valid``, the hand side
    the landmarks show, ``meta["input_flags"]`` (named flags, e.g. ``{"untracked_frames": 11}``,
    most specific cause first, :mod:`replay.checks.causes`; empty when the recording is clean)
    and ``meta["input_checks"]`` (what was measured).

    The most specific causes are tested before the checks they explain: frames missing before
    the frame rate and the hand's speed; a wrong object model and a stream offset before the
    placement, rest and penetration checks. A refusal of one of them names the later checks
    that would fire on the same recording as its consequences (:func:`consequences`).

    Raises:
        DataError: an input error of a check (module doc lists them), naming the file and field,
            its ``cause`` set (:data:`replay.checks.causes.CAUSES`).
    """
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
    if intent not in ("lift", INTENT_UNKNOWN):
        flags["intent"] = (
            f"{intent}: the recorded motion after the grasp is not a lift (the lift protocol "
            "replaces it; --protocol recorded replays it)"
        )
    rank = most_specific_first(CAUSES)
    flags = {k: flags[k] for k in sorted(flags, key=lambda k: rank.index(flag_cause(k)))}
    meta = dict(rec.meta, input_flags=flags, input_checks=figs, intent=intent)
    return dataclasses.replace(rec, meta=meta)


def _object_and_streams(rec: Recording, flags: dict, figs: dict) -> None:
    """The object model against the recording and the streams' sync (before the placement they would
    explain, each naming its consequences), then the object's scale, mass and placement."""
    check_object_units(rec)  # a model 1000x, or 10x heavy, is a unit: said first
    with _naming_consequences(rec, PLACEMENT_CONSEQUENCES):
        figs["object_model"] = check_object_model(rec)
    with _naming_consequences(rec, PLACEMENT_CONSEQUENCES):
        f, figs["stream_sync"] = check_stream_sync(rec)
    flags.update(f)
    figs["object"] = check_object(rec)


def consequences(rec: Recording, probes) -> list[str]:
    """The causes of the ``probes`` (checks) that refuse or flag ``rec``, most specific first: what a
    more specific refusal explains. A probe returns its ``(flags, figures)`` or figures, or raises."""
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
    """Re-raise a :class:`DataError` of the block with the causes of ``probes`` that fire on ``rec``
    (:func:`consequences`, its own cause left out) added to its sentence."""
    try:
        yield
    except DataError as e:
        also = [c for c in consequences(rec, probes) if c != e.cause]
        if not also:
            raise
        raise DataError(
            e.path, e.field, f"{e.message} (the {', '.join(also)} check(s) fire too, as consequences)", cause=e.cause
        ) from None
