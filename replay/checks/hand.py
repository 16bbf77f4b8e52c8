"""The hand: its side from the palm landmarks, and whether the recorded hand carries the object.

**Handedness** (:func:`palm_chirality`): the sign of the triple product
``((index_mcp - wrist) x (pinky_mcp - wrist)) . (thumb_cmc - wrist)`` (unit vectors):
these four MANO joints move rigidly with the palm, so the sign is the hand's side in
every frame (+0.303 in all 83,160 GRAB right-hand frames; a mirrored hand gives -0.303).
Checked where the adapter *assumes* the side (:data:`ASSUMED_SIDE_DATASETS`: GRAB stores
no side); TACO's side is checked by the MANO fingertip fit
(:func:`replay.kinematics.coords.complete_hand`), HUG-Bench names it per hand in the file. A
confident mismatch (median ``|chirality|`` >= :data:`CHIRALITY_MIN` = 0.1 and the same
sign in >= 95 % of the tracked frames) replays the recording with the matching manosim
hand and says so in the flag ``hand_side_from_landmarks``; an undecided sign is an error.
**Which hand moves the object** (:func:`replay.checks.object_placement.check_object`,
:func:`carry_drift`): when the
recorded hand is farther than
:data:`~replay.checks.object_placement.HAND_GAP_MAX_M` from the object at the lift onset
and the object does not move with it (over :data:`CARRY_WINDOW_S` its origin drifts in
the recorded palm frame by more than :data:`CARRY_DRIFT_MAX` times its travel), the
object was moved by a hand the recording does not store (GRAB files hold the right
hand only; ``cubesmall_offhand_1``: 748 mm at the onset, drift 195 mm for 352 mm of
travel, the left hand takes it). Replaying the recorded hand would not be this grasp:
refused with that reason (``DataError`` on field ``hand``), never turned into a
``not_lifted``. A far hand that does carry the object (it moves with the hand) means a
mesh in another frame or unit than the poses: the placement error of
:mod:`replay.checks.object_placement`.

Thresholds measured on the data mirror (the 30 GRAB s1 lifts, 83,160 frames at 120 Hz,
and the 2 TACO sequences at 30 fps); :mod:`replay.checks.recording_checks` runs every check.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation

from replay.checks.hand_points import INDEX_MCP, PINKY_MCP, THUMB_CMC, WRIST
from replay.data.types import Recording
from replay.errors import DataError

CHIRALITY_MIN = 0.1
CHIRALITY_AGREE = 0.95
ASSUMED_SIDE_DATASETS = ("grab",)
#: Which hand carries the object (module doc): over CARRY_WINDOW_S (s) after the lift onset,
#: the object's origin drifts in the recorded hand's palm frame by at most CARRY_DRIFT_MAX
#: times its travel in the world when that hand carries it. Measured on the mirror's 39
#: GRAB recordings with a lift onset: <= 0.20 on the 38 carried by the recorded right hand
#: (phone_call_1 0.20, stapler_staple_1 0.20, the 30 lifts <= 0.11), 0.55 on
#: cubesmall_offhand_1 (the left hand takes it); 0.35 lies between.
CARRY_WINDOW_S = 0.5
CARRY_DRIFT_MAX = 0.35


def palm_chirality(landmarks: np.ndarray) -> np.ndarray:
    """Per-frame handedness sign of the palm, (T,) in [-1, 1]; > 0 for a right hand.

    ``((index_mcp - wrist) x (pinky_mcp - wrist)) . (thumb_cmc - wrist)`` with the three
    vectors normalised (manopth landmark order, world frame, any unit). MANO's palm joints
    move rigidly with the wrist, so the value is constant per hand: +0.303 on every frame of
    the mirror's GRAB right hands (subject s1); mirroring a hand flips its sign.

    Args:
        landmarks: (T, 21, 3).
    """
    L = np.asarray(landmarks, float)
    a = L[:, INDEX_MCP] - L[:, WRIST]
    b = L[:, PINKY_MCP] - L[:, WRIST]
    c = L[:, THUMB_CMC] - L[:, WRIST]
    n = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) * np.linalg.norm(c, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("ti,ti->t", np.cross(a, b), c) / n


def landmark_side(rec: Recording) -> tuple[str | None, dict]:
    """The hand side the landmarks' palms show (:func:`palm_chirality`), or None if undecided.

    Returns:
        (``"right"``, ``"left"`` or None, figures ``chirality_median``, ``agree``).
    """
    if rec.landmarks is None:
        return None, {}
    v = np.asarray(rec.valid, bool)
    chi = palm_chirality(np.asarray(rec.landmarks)[v])
    chi = chi[np.isfinite(chi)]
    if chi.size == 0:
        return None, {}
    med = float(np.median(chi))
    agree = float(np.mean(np.sign(chi) == np.sign(med)))
    fig = {"chirality_median": round(med, 4), "agree": round(agree, 4)}
    if abs(med) < CHIRALITY_MIN or agree < CHIRALITY_AGREE:
        return None, fig
    return ("right" if med > 0 else "left"), fig


def check_handedness(rec: Recording) -> tuple[Recording, dict, dict]:
    """Compare the side the adapter assumed with the landmarks' palms (module doc, handedness).

    Returns:
        (recording, flags, figures): on a confident mismatch the recording has the side
        the landmarks show, and ``flags["hand_side_from_landmarks"]`` says which.

    Raises:
        DataError: the palms do not show a consistent side (dataset in
            :data:`ASSUMED_SIDE_DATASETS` only).
    """
    if rec.dataset not in ASSUMED_SIDE_DATASETS or rec.landmarks is None:
        return rec, {}, {}
    side, fig = landmark_side(rec)
    fig["assumed"] = rec.hand_side
    if side is None:
        raise DataError(
            rec.source,
            "landmarks",
            f"cannot tell the hand's side from the palm landmarks (chirality "
            f"median {fig.get('chirality_median')}, sign agreement "
            f"{fig.get('agree')}; need |median| >= {CHIRALITY_MIN} and "
            f">= {CHIRALITY_AGREE:.0%}): landmarks out of manopth order?",
            cause="handedness",
        )
    if side == rec.hand_side:
        return rec, {}, fig
    flags = {
        "hand_side_from_landmarks": f"{side} (the {rec.dataset} adapter assumed {rec.hand_side}; "
        f"replayed with the {side}-hand model)"
    }
    meta = dict(rec.meta, hand_side_assumed=rec.hand_side)
    return dataclasses.replace(rec, hand_side=side, meta=meta), flags, fig


def palm_frames(pts: np.ndarray) -> Rotation | None:
    """Per-frame palm frame from the landmarks (wrist, index MCP, pinky MCP: rigid on the
    palm): x wrist->index MCP, z normal to the palm plane; None for other hand points."""
    if pts.ndim != 3 or pts.shape[1] != 21:
        return None
    x = pts[:, INDEX_MCP] - pts[:, WRIST]
    z = np.cross(x, pts[:, PINKY_MCP] - pts[:, WRIST])
    y = np.cross(z, x)
    m = np.stack([v / np.linalg.norm(v, axis=1, keepdims=True) for v in (x, y, z)], axis=2)
    return Rotation.from_matrix(m)


def carry_drift(rec: Recording, pts: np.ndarray, onset: int) -> tuple[float, float] | None:
    """How far the object drifts in the recorded hand's palm frame while it travels, over
    :data:`CARRY_WINDOW_S` from the lift onset: (drift m, travel m), both the largest
    displacement from the onset frame (object origin; drift in the palm frame of
    :func:`palm_frames`, travel in the world). None without landmarks or frames."""
    frames = palm_frames(pts)
    if frames is None:
        return None
    end = int(min(rec.num_frames - 1, np.searchsorted(rec.time, rec.time[onset] + CARRY_WINDOW_S)))
    sl = slice(onset, end + 1)
    pos = np.asarray(rec.target_object.pos, float)[sl]
    local = frames[sl].inv().apply(pos - pts[sl, WRIST])
    drift = float(np.linalg.norm(local - local[0], axis=1).max())
    travel = float(np.linalg.norm(pos - pos[0], axis=1).max())
    return drift, travel
