"""The hand's size: wrist to middle fingertip within :data:`HAND_LENGTH_RANGE_M`, else refused naming the unit that
fits (before the timing checks: a hand in mm read as m moves 1000x too fast)."""

from __future__ import annotations

import numpy as np

from replay.checks.hand_points import hand_points
from replay.data.types import Recording
from replay.errors import DataError

#: m, around the adult 159-205 mm (5th percentile women to 95th men; Pheasant and Haslegrave, Bodyspace 2006)
HAND_LENGTH_RANGE_M = (0.06, 0.4)
#: m: the unit named brings the length closest to this (mid adult range)
TYPICAL_HAND_M = 0.18
#: wrist, middle MCP, PIP, DIP, tip (manopth ids)
MIDDLE_CHAIN = (0, 9, 10, 11, 12)
UNIT_FACTORS = (
    (0.001, "millimetres"),
    (0.01, "centimetres"),
    (0.0254, "inches"),
    (0.1, "decimetres"),
    (1000.0, "kilometres"),
)


def hand_length(rec: Recording) -> tuple[float | None, str]:
    """(median length in the recording's unit, field): the middle finger's chain (landmarks), else the largest box
    side (MANO vertices); (None, "") without either."""
    pts, field = hand_points(rec)
    if pts is None or field not in ("landmarks", "mano.vertices"):
        return None, ""
    fin = np.all(np.isfinite(pts.reshape(len(pts), -1)), axis=1)
    if not fin.any():
        return None, ""
    p = pts[fin]
    if field == "landmarks":
        c = p[:, list(MIDDLE_CHAIN)]
        length = np.linalg.norm(np.diff(c, axis=1), axis=2).sum(axis=1)
    else:
        length = np.ptp(p, axis=1).max(axis=1)
    return float(np.median(length)), field


def check_hand_scale(rec: Recording) -> dict:
    """Figures ``hand_length_mm``. Raises DataError (cause ``units``): outside :data:`HAND_LENGTH_RANGE_M`."""
    length, field = hand_length(rec)
    if length is None:
        return {}
    lo, hi = HAND_LENGTH_RANGE_M
    if lo <= length <= hi:
        return {"hand_length_mm": round(length * 1000, 1)}
    hint = ""
    fits = [(abs(np.log(length * f / TYPICAL_HAND_M)), f, name) for f, name in UNIT_FACTORS if lo <= length * f <= hi]
    if fits:
        _, f, name = min(fits)
        hint = f": the hand is in {name} (x {f:g} gives {length * f * 1000:.0f} mm)"
    raise DataError(
        rec.source,
        field,
        f"the hand is {length:.4g} m long (wrist to middle fingertip, read as "
        f"metres); a human hand is {lo * 1000:g}-{hi * 1000:g} mm{hint}; convert the "
        "hand to metres, like the object and the table",
        cause="units",
    )
