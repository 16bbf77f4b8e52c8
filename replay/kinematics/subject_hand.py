"""The recording's own hand from its landmarks (manopth, world, m): bone lengths, finger bases (docs/hand.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.errors import DataError
from replay.kinematics.model import LANDMARK_SOURCE, NUM_BODIES

#: manosim finger body -> (its joint landmark, the next landmark along its finger), manopth ids
BONE_LANDMARKS = {b: (k, k + 1) for k, (b, kind) in enumerate(LANDMARK_SOURCE) if kind == "anchor" and b > 0}
#: bodies whose bone ends at a fingertip landmark (not a joint)
TIP_BODIES = tuple(b for b, (_, nxt) in BONE_LANDMARKS.items() if LANDMARK_SOURCE[nxt][1] == "tip")
#: finger base bodies (children of the palm), thumb first, and their landmarks
BASE_BODIES = (13, 1, 4, 10, 7)
BASE_LANDMARKS = tuple(BONE_LANDMARKS[b][0] for b in BASE_BODIES)

#: used frames needed for a median
MIN_FRAMES = 10
#: m: a bone's length range (human phalanges and the thumb metacarpal: 15-55 mm; catches mm read as m)
BONE_RANGE_M = (0.005, 0.08)
#: m: a finger base's distance from the wrist (MANO's wrist to MCPs: 35-100 mm)
PALM_RANGE_M = (0.015, 0.15)
#: largest spread (p95 - p5) of a bone (of its length) and of a palm coordinate (m); replay.checks.hand_shape's flag
RIGID_SPREAD_MAX = 0.05
PALM_SPREAD_MAX_M = 0.002


@dataclass(frozen=True)
class SubjectHand:
    """``bone_length``, ``bone_spread`` (16,) m (row 0 is 0); ``palm`` (5, 3) m, finger bases in :func:`palm_frame`;
    ``palm_spread`` (5,) m; ``frames`` used."""

    side: str
    bone_length: np.ndarray
    bone_spread: np.ndarray
    palm: np.ndarray
    palm_spread: np.ndarray
    frames: int
    source: str | None = None

    def rounded(self, step_m: float = 1e-5) -> SubjectHand:
        """Lengths and palm rounded to ``step_m`` (m): what a fitted hand is built from and keyed by."""
        r = lambda a: np.round(np.asarray(a) / step_m) * step_m  # noqa: E731
        return SubjectHand(
            self.side, r(self.bone_length), self.bone_spread, r(self.palm), self.palm_spread, self.frames, self.source
        )

    def key_values(self, step_m: float = 1e-5) -> list[int]:
        """Lengths and palm in integer units of ``step_m`` (the cache key)."""
        return [int(v) for v in np.round(np.concatenate([self.bone_length, self.palm.ravel()]) / step_m)]

    def summary(self) -> dict:
        """JSON-ready: bone lengths, spreads, palm points (mm), frames."""
        mm = lambda a: [round(float(v) * 1000, 3) for v in a]  # noqa: E731
        return {
            "side": self.side,
            "bone_length_mm": {f"mano_body_{b}": mm([self.bone_length[b]])[0] for b in BONE_LANDMARKS},
            "bone_spread_mm": {f"mano_body_{b}": mm([self.bone_spread[b]])[0] for b in BONE_LANDMARKS},
            "palm_mm": {f"mano_body_{b}": mm(p) for b, p in zip(BASE_BODIES, self.palm)},
            "palm_spread_mm": mm(self.palm_spread),
            "frames": self.frames,
        }


def palm_frame(landmarks: np.ndarray) -> np.ndarray:
    """(T, 3, 3) rows = world axes of a palm frame from (T, 21, 3) landmarks: x wrist -> middle MCP, z normal to x and
    index MCP -> pinky MCP, y = z cross x."""
    x = landmarks[:, 9] - landmarks[:, 0]
    x = x / np.linalg.norm(x, axis=-1, keepdims=True)
    z = np.cross(x, landmarks[:, 5] - landmarks[:, 17])
    z = z / np.linalg.norm(z, axis=-1, keepdims=True)
    return np.stack([x, np.cross(z, x), z], axis=1)


def measure_hand(
    landmarks: np.ndarray, valid: np.ndarray | None, side: str, *, source: str | Path | None = None
) -> SubjectHand:
    """The hand of (T, 21, 3) world m landmarks; DataError: bad shape, few frames, a bone or base off or not rigid."""
    L = np.asarray(landmarks, dtype=np.float64)
    if L.ndim != 3 or L.shape[1:] != (21, 3):
        raise DataError(source, "landmarks", f"expected shape (T, 21, 3), got {L.shape}")
    use = np.all(np.isfinite(L.reshape(len(L), -1)), axis=1)
    if valid is not None:
        v = np.asarray(valid, dtype=bool)
        if v.shape != use.shape:
            raise DataError(source, "valid", f"expected shape {use.shape}, got {v.shape}")
        use &= v
    L = L[use]
    if len(L) < MIN_FRAMES:
        raise DataError(source, "landmarks", f"{len(L)} valid finite frames; a fitted hand needs {MIN_FRAMES}")
    length, spread = np.zeros(NUM_BODIES), np.zeros(NUM_BODIES)
    for b, (j, k) in BONE_LANDMARKS.items():
        d = np.linalg.norm(L[:, k] - L[:, j], axis=-1)
        length[b] = np.median(d)
        spread[b] = np.percentile(d, 95) - np.percentile(d, 5)
        _check_range(source, f"landmarks {j}-{k} (mano_body_{b})", length[b], BONE_RANGE_M)
        if b not in TIP_BODIES and spread[b] > RIGID_SPREAD_MAX * length[b]:
            raise DataError(
                source,
                "landmarks",
                f"bone {j}-{k} (mano_body_{b}) changes length by {spread[b] * 1000:.1f} mm over the take "
                f"(p95 - p5, above {RIGID_SPREAD_MAX:.0%}): not one hand, no fitted hand can be built",
            )
    R = palm_frame(L)
    rel = L[:, list(BASE_LANDMARKS)] - L[:, None, 0]
    local = np.einsum("tij,tkj->tki", R, rel)  # (T, 5, 3) in the palm frame
    palm = np.median(local, axis=0)
    palm_spread = np.max(np.percentile(local, 95, axis=0) - np.percentile(local, 5, axis=0), axis=-1)
    for b, p, s in zip(BASE_BODIES, palm, palm_spread):
        _check_range(
            source, f"landmarks 0-{BONE_LANDMARKS[b][0]} (palm, mano_body_{b})", np.linalg.norm(p), PALM_RANGE_M
        )
        if s > PALM_SPREAD_MAX_M:
            raise DataError(
                source,
                "landmarks",
                f"the base of mano_body_{b} moves {s * 1000:.1f} mm in the palm over the take (p95 - p5, above "
                f"{PALM_SPREAD_MAX_M * 1000:g} mm): the palm is not rigid, no fitted hand can be built",
            )
    return SubjectHand(side, length, spread, palm, palm_spread, int(len(L)), None if source is None else str(source))


def _check_range(source, what: str, value: float, bounds: tuple[float, float]) -> None:
    """DataError naming ``what`` when ``value`` (m) is outside ``bounds`` (m)."""
    lo, hi = bounds
    if not lo <= value <= hi:
        unit = " (landmarks in millimetres?)" if value > 100 * hi else ""
        raise DataError(
            source,
            "landmarks",
            f"{what} is {value * 1000:.4g} mm long, outside {lo * 1000:g}-{hi * 1000:g} mm{unit}: not a hand in metres",
        )
