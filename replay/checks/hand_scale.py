"""The hand's size: landmarks (or MANO vertices) in metres, like the object and the table.

A hand exported in millimetres (or centimetres, inches) beside an object and table in
metres is 1000x (100x, 39x) a human hand. Read as metres it moves 1000x too fast and sits
metres from the object, so later checks would blame the frame rate or the frames: this
check runs first and names the unit.

**Hand length** (:func:`hand_length`): with landmarks (manopth order), the median over
the finite frames of the middle finger's chain length, wrist -> MCP -> PIP -> DIP -> tip
(pose-independent: the sum of its bones); with MANO vertices only, the median of each
frame's largest bounding-box side of the 778 vertices. Adult hand length (wrist crease to
middle fingertip) spans 159-205 mm between the 5th percentile of women and the 95th of men
(Pheasant and Haslegrave, Bodyspace, 3rd ed. 2006); a 4-year-old's is ~110 mm. Measured on
the clean mirror: GRAB's subject s1 178.4-179.0 mm (chain; 40 recordings), TACO 151-157 mm (vertex extent, fingers flexed).
:data:`HAND_LENGTH_RANGE_M` = 60-400 mm: outside, refused (field ``landmarks`` or
``mano.vertices``) with the unit that brings it into the range. A hand within the range
but off by a power of ten against the object is the object's unit, checked by
:mod:`replay.checks.object_placement`.
"""

from __future__ import annotations

import numpy as np

from replay.checks.hand_points import hand_points
from replay.data.types import Recording
from replay.errors import DataError

HAND_LENGTH_RANGE_M = (0.06, 0.4)
#: the unit named is the one that brings the length closest to this (the middle of the adult range), m
TYPICAL_HAND_M = 0.18
#: wrist, middle MCP, PIP, DIP, tip (manopth ids)
MIDDLE_CHAIN = (0, 9, 10, 11, 12)
#: (factor to metres, unit name) a hand's length is checked against
UNIT_FACTORS = (
    (0.001, "millimetres"),
    (0.01, "centimetres"),
    (0.0254, "inches"),
    (0.1, "decimetres"),
    (1000.0, "kilometres"),
)


def hand_length(rec: Recording) -> tuple[float | None, str]:
    """(hand length in the recording's length unit (m when right), field): module doc; (None, "")
    without landmarks or MANO vertices, or with no finite frame."""
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
    """The hand's length against a human hand's (module doc).

    Returns:
        figures: ``hand_length_mm`` (empty without landmarks or vertices).

    Raises:
        DataError: a length outside :data:`HAND_LENGTH_RANGE_M`, naming the unit that fits.
    """
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
