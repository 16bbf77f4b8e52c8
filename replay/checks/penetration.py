"""The hand against the object: how deep the recorded hand is inside the object before the grasp.

Over the approach up to the lift onset (:func:`replay.checks.frames.approach_window`, tracked
frames), every recorded hand point (:func:`replay.checks.hand_points.hand_points`: GRAB's 21
landmarks, joint centres and fingertip points; TACO's 778 MANO surface vertices) is put in
the object's frame and its depth inside the collision parts measured exactly from the part
hulls' face planes (:class:`~replay.checks.geometry.ConvexParts`; the deepest part where
parts overlap). The replay drives the simulated hand to these points: a fingertip recorded
deep inside the object is pushed out by the contact solver as the hand closes, and the
grasp comes out as the solver's, not the person's (google-deepmind/mujoco#752). Deeper
than :data:`PENETRATION_FLAG_M`: flagged (``input_flags["penetration"]``) with the depth,
point and frame; deeper than :data:`PENETRATION_REFUSE_M`, or (in a part too thin to hold that
depth) deeper than :data:`PENETRATION_CORE_FRAC` of the way to the part's centre
(:meth:`~replay.checks.geometry.ConvexParts.core_depths`): refused. A depth cannot show a
finger passing through a part thinner than twice :data:`PENETRATION_FLAG_M` (a knife's
blade): the check sees how deep, not how far through.

Thresholds and the clean mirror (30 GRAB lifts, 10 intents, 2 TACO): the deepest point over
the approach is 12.1 mm (stanfordbunny_lift, the index fingertip at the lift onset; GRAB's
fitted hands do sink into the objects, 4DVLab/DexGrasp-Anything#30), 11.6 mm
(binoculars_lift), at most 9.1 mm in the other 36; TACO 6.0 and 8.5 mm (MANO vertices).
:data:`PENETRATION_FLAG_M` = 13 mm (just past the deepest clean figure: any deeper
fingertip is beyond what this mirror's fits show); :data:`PENETRATION_REFUSE_M` = 20 mm,
a fingertip's width inside, and :data:`PENETRATION_CORE_FRAC` = 0.8 (the 40 mm cube's
centre is 20 mm deep: refused past 16 mm).
"""

from __future__ import annotations

import numpy as np

from replay.checks.frames import approach_window
from replay.checks.geometry import ConvexParts, collision_parts, frames_to_object_frame
from replay.checks.hand_points import hand_points
from replay.data.types import LANDMARK_NAMES, Recording
from replay.errors import DataError

PENETRATION_FLAG_M = 0.013
PENETRATION_REFUSE_M = 0.02
PENETRATION_CORE_FRAC = 0.8


def hand_depths(rec: Recording, parts: ConvexParts, frames: np.ndarray) -> np.ndarray:
    """(F, P, K) m: depth of each hand point inside each of the target's collision parts at
    ``frames`` (> 0 inside, < 0 outside: then a lower bound of the distance)."""
    pts, _ = hand_points(rec)
    tr = rec.target_object
    frames = np.asarray(frames, int)
    local = frames_to_object_frame(tr.pos[frames], tr.quat[frames], pts[frames])  # (F, K, 3)
    d = -parts.part_plane_distance(local.reshape(-1, 3))  # (P, F*K): every frame's points in one pass
    return d.reshape(len(d), len(frames), -1).transpose(1, 0, 2)


def _point_name(field: str, k: int) -> str:
    return LANDMARK_NAMES[k] if field == "landmarks" else f"{field}[{k}]"


def check_penetration(rec: Recording) -> tuple[dict, dict]:
    """Depth of the recorded hand inside the object over the approach (module doc).

    Returns:
        (flags, figures): flag ``penetration``; figures ``max_mm``, ``frame``, ``point``,
        ``at_onset_mm`` (at the last tracked frame up to the lift onset); empty without hand points.

    Raises:
        DataError: deeper than :data:`PENETRATION_REFUSE_M`, naming the hand points' field.
    """
    pts, field = hand_points(rec)
    s, g = approach_window(rec)
    frames = np.flatnonzero(np.asarray(rec.valid, bool)[s : g + 1]) + s
    if pts is None or field not in ("landmarks", "mano.vertices") or not frames.size:
        return {}, {}
    parts = collision_parts(rec.target_object.asset)
    D = hand_depths(rec, parts, frames)
    i, p, k = np.unravel_index(int(np.argmax(D)), D.shape)
    deepest, f, name = float(D[i, p, k]), int(frames[i]), _point_name(field, int(k))
    onset = float(D[-1].max())
    # refused: past the refusal depth, or (a part too thin for it) into the core of a part
    limit = np.minimum(PENETRATION_REFUSE_M, PENETRATION_CORE_FRAC * parts.core_depths())[None, :, None]
    through = (D > PENETRATION_FLAG_M) & (D > limit)
    figs = {"max_mm": round(deepest * 1000, 2), "frame": f, "point": name, "at_onset_mm": round(onset * 1000, 2)}
    what = (
        f"the recorded hand is {deepest * 1000:.1f} mm inside the object's collision parts ({name}, frame {f}; "
        f"{onset * 1000:.1f} mm at the lift onset, frame {int(frames[-1])})"
    )
    if through.any():
        core = float(parts.core_depths()[p]) * 1000
        raise DataError(
            rec.source,
            field,
            f"{what}: deeper than {PENETRATION_REFUSE_M * 1000:g} mm or "
            f"{PENETRATION_CORE_FRAC:.0%} of the way to the part's centre ({core:.1f} mm "
            "deep): the replayed finger would start through the object; hand and object "
            "poses disagree",
            cause="penetration",
        )
    if deepest > PENETRATION_FLAG_M:
        return {
            "penetration": f"{what}, beyond {PENETRATION_FLAG_M * 1000:g} mm: the contact solver pushes it out, "
            "the grasp replayed is the solver's"
        }, figs
    return {}, figs
