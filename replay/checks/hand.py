"""The hand: its side from the palm landmarks, and whether the recorded hand carries the object."""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation

from replay.checks.hand_points import INDEX_MCP, PINKY_MCP, THUMB_CMC, WRIST
from replay.data.types import Recording
from replay.errors import DataError

#: a side is decided by |median chirality| >= CHIRALITY_MIN with one sign in >= CHIRALITY_AGREE of the frames
CHIRALITY_MIN = 0.1
CHIRALITY_AGREE = 0.95
#: datasets whose adapter assumes the side (GRAB stores none; TACO's is fitted, HUG-Bench names it)
ASSUMED_SIDE_DATASETS = ("grab",)
#: over CARRY_WINDOW_S s after the lift onset, a carried object drifts in the carrying palm's frame by at most
#: CARRY_DRIFT_MAX times its world travel (farther: another hand, one the file does not store, moves it)
CARRY_WINDOW_S = 0.5
CARRY_DRIFT_MAX = 0.35


def palm_chirality(landmarks: np.ndarray) -> np.ndarray:
    """(T,) in [-1, 1], > 0 for a right hand: ``((index_mcp - wrist) x (pinky_mcp - wrist)) . (thumb_cmc - wrist)``
    of unit vectors, landmarks (T, 21, 3)."""
    L = np.asarray(landmarks, float)
    a = L[:, INDEX_MCP] - L[:, WRIST]
    b = L[:, PINKY_MCP] - L[:, WRIST]
    c = L[:, THUMB_CMC] - L[:, WRIST]
    n = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) * np.linalg.norm(c, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("ti,ti->t", np.cross(a, b), c) / n


def landmark_side(rec: Recording) -> tuple[str | None, dict]:
    """(``"right"``, ``"left"`` or None if undecided, figures) from :func:`palm_chirality`."""
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
    """(recording, flags, figures): on a confident mismatch the recording takes the landmarks' side
    (``flags["hand_side_from_landmarks"]``). Raises DataError: no consistent side (:data:`ASSUMED_SIDE_DATASETS`)."""
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
    """Per-frame palm frame of landmarks (T, 21, 3): x wrist -> index MCP, z normal to the palm; None otherwise."""
    if pts.ndim != 3 or pts.shape[1] != 21:
        return None
    x = pts[:, INDEX_MCP] - pts[:, WRIST]
    z = np.cross(x, pts[:, PINKY_MCP] - pts[:, WRIST])
    y = np.cross(z, x)
    m = np.stack([v / np.linalg.norm(v, axis=1, keepdims=True) for v in (x, y, z)], axis=2)
    return Rotation.from_matrix(m)


def carry_drift(rec: Recording, pts: np.ndarray, onset: int) -> tuple[float, float] | None:
    """(drift m, travel m) of the object origin over :data:`CARRY_WINDOW_S` from the lift onset, in the recorded palm
    frame and the world; None without landmarks."""
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
