"""How deep the recorded hand is inside the object's collision parts over the approach (the solver pushes a deep
fingertip out: google-deepmind/mujoco#752)."""

from __future__ import annotations

import numpy as np

from replay.checks.frames import approach_window
from replay.checks.geometry import ConvexParts, collision_parts, frames_to_object_frame
from replay.checks.hand_points import hand_points
from replay.data.types import LANDMARK_NAMES, Recording
from replay.errors import DataError

#: m, flagged deeper (GRAB's fitted hands sink into the objects a little: 4DVLab/DexGrasp-Anything#30)
PENETRATION_FLAG_M = 0.013
#: refused deeper than a fingertip's width, or than this fraction of the way to a thin part's centre
PENETRATION_REFUSE_M = 0.02
PENETRATION_CORE_FRAC = 0.8


def hand_depths(rec: Recording, parts: ConvexParts, frames: np.ndarray) -> np.ndarray:
    """(F, P, K) m: each hand point's depth inside each part at ``frames`` (< 0: a lower bound of the distance)."""
    pts, _ = hand_points(rec)
    tr = rec.target_object
    frames = np.asarray(frames, int)
    local = frames_to_object_frame(tr.pos[frames], tr.quat[frames], pts[frames])  # (F, K, 3)
    d = -parts.part_plane_distance(local.reshape(-1, 3))  # (P, F*K): every frame's points in one pass
    return d.reshape(len(d), len(frames), -1).transpose(1, 0, 2)


def check_penetration(rec: Recording) -> tuple[dict, dict]:
    """(flag ``penetration``, figures ``max_mm``, ``frame``, ``point``, ``at_onset_mm``); empty without hand points.
    Raises DataError naming the hand points' field: deeper than :data:`PENETRATION_REFUSE_M` or
    :data:`PENETRATION_CORE_FRAC` of the way to a part's centre."""
    pts, field = hand_points(rec)
    s, g = approach_window(rec)
    frames = np.flatnonzero(np.asarray(rec.valid, bool)[s : g + 1]) + s
    if pts is None or field not in ("landmarks", "mano.vertices") or not frames.size:
        return {}, {}
    parts = collision_parts(rec.target_object.asset)
    D = hand_depths(rec, parts, frames)
    i, p, k = np.unravel_index(int(np.argmax(D)), D.shape)
    deepest, f = float(D[i, p, k]), int(frames[i])
    name = LANDMARK_NAMES[int(k)] if field == "landmarks" else f"{field}[{int(k)}]"
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
