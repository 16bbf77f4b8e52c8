"""The hand's shape is constant: each joint-to-joint landmark bone keeps its length over the take (a shape re-fitted
per frame, facebookresearch/InterHand2.6M#159, is fingertip error for the one-shape IK)."""

from __future__ import annotations

import numpy as np

from replay.checks.hand_points import CHAINS
from replay.data.types import LANDMARK_NAMES, Recording
from replay.errors import DataError

#: (parent, child) landmark ids of the joint-to-joint bones (manopth order; GRAB's tips slide on the pads: left out)
BONES = tuple(bone for c in CHAINS.values() for bone in zip(c, c[1:]))
#: percent spread flagged (a bone 5 % longer puts a fingertip ~2 mm off) and refused
SHAPE_SPREAD_FLAG_PCT = 5.0
SHAPE_SPREAD_REFUSE_PCT = 25.0


def bone_spreads(landmarks: np.ndarray) -> np.ndarray:
    """(15,) percent ``(p95 - p5) / median`` of each bone's length over finite frames of landmarks (T, 21, 3)."""
    L = np.asarray(landmarks, float)
    L = L[np.all(np.isfinite(L.reshape(len(L), -1)), axis=1)]
    out = np.zeros(len(BONES))
    for i, (a, b) in enumerate(BONES):
        n = np.linalg.norm(L[:, b] - L[:, a], axis=1)
        med = float(np.median(n)) if n.size else 0.0
        out[i] = (np.percentile(n, 95) - np.percentile(n, 5)) / med * 100 if med > 0 else 0.0
    return out


def check_hand_shape(rec: Recording) -> tuple[dict, dict]:
    """(flag ``hand_shape``, figures ``max_spread_pct``, ``bone``); empty without landmarks. Raises DataError (field
    ``landmarks``): a spread above :data:`SHAPE_SPREAD_REFUSE_PCT`."""
    if rec.landmarks is None:
        return {}, {}
    v = np.asarray(rec.valid, bool)
    if v.sum() < 2:
        return {}, {}
    sp = bone_spreads(np.asarray(rec.landmarks)[v])
    i = int(np.argmax(sp))
    bone = f"{LANDMARK_NAMES[BONES[i][0]]}-{LANDMARK_NAMES[BONES[i][1]]}"
    figs = {"max_spread_pct": round(float(sp[i]), 2), "bone": bone}
    what = f"the {bone} bone's length spreads {sp[i]:.1f} % over the take (p95 - p5 of its median)"
    if sp[i] > SHAPE_SPREAD_REFUSE_PCT:
        raise DataError(
            rec.source,
            "landmarks",
            f"{what}, above {SHAPE_SPREAD_REFUSE_PCT:g} %: the landmarks are not "
            "one hand (a shape re-fitted per frame?)",
            cause="hand_shape",
        )
    if sp[i] > SHAPE_SPREAD_FLAG_PCT:
        return {
            "hand_shape": f"{what}, above {SHAPE_SPREAD_FLAG_PCT:g} %: the hand's shape changes (re-fitted per "
            "frame?); the replayed hand keeps one shape"
        }, figs
    return {}, figs
