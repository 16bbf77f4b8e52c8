"""The object model against the recording: is the mesh the object the hand holds?

An object-ID or model mix-up (another object's folder, a mesh exported at another scale)
poses the wrong shape at the recorded poses. What the recording itself says about the object
it holds gives two independent measures of the model's size, each as the **scale** ``s`` by
which the model (its collision parts, scaled about the object frame's origin, the point the
poses place) would have to be multiplied to fit:

* **the grip** (:func:`grip_scales`): at the lift onset the hand holds the object, so its
  points (:func:`~replay.checks.hand_points.hand_points`) touch the surface: the deepest is at
  most :data:`GRIP_DEPTH_M` inside (the penetration check's flag depth,
  :data:`~replay.checks.penetration.PENETRATION_FLAG_M`, just past the clean mirror's deepest
  12.1 mm) and no farther than :data:`GRIP_GAP_M` = 15 mm outside (3x the clean mirror's
  largest hand gap at the lift onset, 5.0 mm, :mod:`replay.checks.object_placement`). The
  scales that satisfy both form an interval ``[lo, hi]``; measured on the clean mirror (30 GRAB
  lifts, 2 TACO) every interval holds 1 (``hi`` at least 1.06, cubelarge_lift; ``lo`` at
  most 0.84, piggybank_lift);
* **the rest** (:func:`rest_scale`): before the approach the object stands on its support, so
  its lowest collision point is at the support height: ``s = (origin height above the support) /
  (origin height above the model's lowest point)``, defined where the origin is at least
  :data:`REST_LEVER_MIN_M` = 5 mm above the lowest point (a gap error of a few mm is then a
  scale error of tens of percent at most). Clean mirror: 0.79 (stapler_lift) to 1.17.

**Refused** (:func:`check_object_model`, cause ``object_model_mismatch``) when the grip's interval
excludes 1 and the rest names a scale inside it, with the model resting more than
:data:`~replay.checks.object_rest.REST_GAP_FLAG_M` off its support as given (both independent
measures say the same: the model is another size than the object); or, where the rest cannot
tell (no lever, or the model rests as recorded is not the case), when the grip's interval is
beyond :data:`GRIP_ONLY_FACTOR` = 2 from 1 (the hand would be a whole object-size inside or off
the model: no tracking error of a hand is that large). A model the rest agrees with
(within the flag gap) is never refused here: a hand off that model is the hand's fault
(penetration, frames). Where the grip holds the model both as it is and at the rest's
scale (a mug held by its handle touches it over 0.28-3.6x), the rest alone decides: a model
off its support by more than :data:`~replay.checks.object_rest.REST_GAP_REFUSE_M` (the rest
check's refusal) whose rest scale is beyond :data:`REST_ONLY_FACTOR` = 1.25 from 1 (beyond the
clean mirror's 0.79-1.17, stapler_lift and toothbrush_lift) is named a model of another size:
the hand holds it where it is recorded, so the poses are in the model's frame, and only its
size (or the support's height) can be wrong. Runs before the placement and rest checks, whose frame-error
sentences a wrong model would otherwise trigger. Not judged where the object frame's origin lies
outside the middle half of the model's bounding box on any axis (:data:`ORIGIN_BOX`; every
model of the mirror has it at 0.49-0.51: the centre): a scale about it would not be a scale of
the object, and a mesh shifted from its frame is what the placement and rest checks name ("38 mm into the support ... poses in another
frame"), and after the unit check of the model's size (a mesh 1000x is a unit, not a model).
"""

from __future__ import annotations

import numpy as np

from replay.checks.frames import approach_window
from replay.checks.geometry import ConvexParts, collision_parts, to_object_frame, to_world
from replay.checks.hand_points import hand_points
from replay.checks.object_rest import REST_GAP_FLAG_M, REST_GAP_REFUSE_M
from replay.checks.penetration import PENETRATION_FLAG_M
from replay.data.types import Recording
from replay.errors import DataError

GRIP_DEPTH_M = PENETRATION_FLAG_M
GRIP_GAP_M = 0.015
REST_LEVER_MIN_M = 0.005
GRIP_ONLY_FACTOR = 2.0
REST_ONLY_FACTOR = 1.25
#: the object frame's origin within this middle part of the model's bounding box, per axis (module doc)
ORIGIN_BOX = (0.25, 0.75)
#: scales tried: 1/20 .. 20, 5 % apart (a model in centimetres read as millimetres is 10x: a size
#: error this check names; a 1000x one the unit check names first)
SCALES = np.exp(np.linspace(np.log(0.05), np.log(20.0), 121))
#: size ratios that are a unit, not a model: cm/mm, inch/mm, m/cm (within 10 %; not inch/cm: 2.54x is
#: as near the size steps between objects of a set, e.g. GRAB's cubes, as to a unit)
UNIT_RATIOS = {10.0: "centimetres for millimetres", 25.4: "inches for millimetres", 100.0: "metres for centimetres"}


def scaled_distance(parts: ConvexParts, pts: np.ndarray, s: float) -> np.ndarray:
    """(N,) hull-plane distance (m, > 0 outside, < 0 inside; the nearest part) of object-frame points
    ``pts`` (N, 3) to the parts scaled by ``s`` about the origin: a face ``n.x + d`` becomes
    ``n.x + s d``."""
    out = np.full(len(pts), np.inf)
    for eq in parts.equations:
        d = (pts @ eq[:, :3].T + s * eq[:, 3]).max(axis=1)
        out = np.minimum(out, d)
    return out


def grip_scales(rec: Recording, parts: ConvexParts) -> tuple[float, float, int] | None:
    """``(lo, hi, frame)``: the contiguous range of :data:`SCALES` (the one holding 1, else the nearest)
    at which the hand at the last tracked frame up to the lift onset touches the scaled model
    (module doc), or None without hand points; NaN both when no scale does."""
    pts, _ = hand_points(rec)
    v = np.flatnonzero(np.asarray(rec.valid, bool)[: rec.grasp_frame + 1])
    if pts is None or not v.size:
        return None
    f = int(v[-1])
    tr = rec.target_object
    P = to_object_frame(tr.pos[f], tr.quat[f], pts[f])
    inner = np.array([scaled_distance(parts, P, s).min() for s in SCALES])  # the hand's deepest point
    ok = (inner >= -GRIP_DEPTH_M) & (inner <= GRIP_GAP_M)
    if not ok.any():
        return float("nan"), float("nan"), f
    idx = np.flatnonzero(ok)
    runs = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)  # contiguous scale ranges
    one = int(np.argmin(np.abs(np.log(SCALES))))
    run = min(runs, key=lambda r: 0 if r[0] <= one <= r[-1] else min(abs(r[0] - one), abs(r[-1] - one)))
    return float(SCALES[run[0]]), float(SCALES[run[-1]]), f


def rest_scale(rec: Recording, parts: ConvexParts) -> dict:
    """At the approach start: ``{frame, gap_mm}`` (the model's lowest point above the support as
    given) and ``scale`` (module doc; None where the lever is under :data:`REST_LEVER_MIN_M`)."""
    s, _ = approach_window(rec)
    tr = rec.target_object
    V = to_world(tr.pos[s], tr.quat[s], np.concatenate(parts.vertices))
    z0, low, sup = float(tr.pos[s][2]), float(V[:, 2].min()), float(rec.support_height)
    lever = z0 - low
    return {
        "frame": s,
        "gap_mm": round((low - sup) * 1000, 2),
        "scale": round((z0 - sup) / lever, 3) if lever >= REST_LEVER_MIN_M else None,
    }


def _verdict(grip, rest) -> float | None:
    """The scale the recording implies when it refutes the model (module doc), else None."""
    lo, hi = grip[0], grip[1]
    if not np.isfinite(lo):
        return None
    if lo <= 1.0 <= hi:  # the grip cannot tell; the rest alone, where the grip holds its scale too
        rs = rest["scale"]
        ok = rs is not None and SCALES[0] <= rs <= SCALES[-1] and lo <= rs <= hi
        far = abs(rest["gap_mm"]) > REST_GAP_REFUSE_M * 1000 and abs(np.log(rs or 1.0)) > np.log(REST_ONLY_FACTOR)
        return rs if ok and far else None
    rs = rest["scale"]
    step = SCALES[1] / SCALES[0]
    if abs(rest["gap_mm"]) > REST_GAP_FLAG_M * 1000 and rs is not None:
        return rs if lo / step <= rs <= hi * step else None
    if abs(rest["gap_mm"]) <= REST_GAP_FLAG_M * 1000 and rs is not None:
        return None  # the model rests as recorded: a hand off it is the hand's fault
    if hi < 1 / GRIP_ONLY_FACTOR:
        return hi
    if lo > GRIP_ONLY_FACTOR:
        return lo
    return None


def check_object_model(rec: Recording) -> dict:
    """Does the model fit the object the recording holds (module doc)?

    Returns:
        figures: ``grip_scale`` ([lo, hi]) and ``grip_frame``, ``rest_scale``, ``rest_gap_mm``.

    Raises:
        DataError: (cause ``object_model_mismatch``, field ``visual_mesh`` of the asset) the grip and
            the rest both put the object at another size than the model, naming the ratio.
    """
    tr = rec.target_object
    parts = collision_parts(tr.asset)
    rest = rest_scale(rec, parts)
    grip = grip_scales(rec, parts)
    figs = {"rest_scale": rest["scale"], "rest_gap_mm": rest["gap_mm"]}
    if grip is None:
        return figs
    figs.update(grip_scale=[round(grip[0], 3), round(grip[1], 3)], grip_frame=grip[2])
    V = np.concatenate(parts.vertices)
    where = -V.min(axis=0) / np.ptp(V, axis=0)  # the origin's place in the bounding box, 0..1 per axis
    figs["origin_in_box"] = [round(float(x), 3) for x in where]
    if not np.all((where >= ORIGIN_BOX[0]) & (where <= ORIGIN_BOX[1])):  # a scale about it would not be the object's
        return figs
    s = _verdict(grip, rest)
    if s is None:
        return figs
    ratio = 1.0 / s
    size = f"{ratio:.2g}x" if ratio >= 1 else f"{ratio:.2g}x (1/{s:.2g})"
    unit = next(
        (
            f" (or a mesh in {u}: {k:g}x)"
            for k, u in UNIT_RATIOS.items()
            if abs(np.log(max(ratio, s) / k)) < np.log(1.1)
        ),
        "",
    )
    rest_txt = (
        f"; at rest (frame {rest['frame']}) its lowest point is {abs(rest['gap_mm']):.0f} mm "
        f"{'into' if rest['gap_mm'] < 0 else 'above'} the support, which a {s:.2g}x model would "
        "touch"
        if rest["scale"] is not None and abs(rest["gap_mm"]) > REST_GAP_FLAG_M * 1000
        else ""
    )
    raise DataError(
        tr.asset.source or tr.asset.visual_mesh,
        "visual_mesh",
        f"the model of {tr.name!r} is {size} the object the hand holds: wrong object model{unit}? at the lift "
        f"onset (frame {grip[2]}) the recorded hand touches it only scaled {grip[0]:.2g}-{grip[1]:.2g}x "
        f"(its deepest point within {GRIP_DEPTH_M * 1000:g} mm inside, none over {GRIP_GAP_M * 1000:g} mm "
        f"off){rest_txt}: refused before any frame error is supposed; check the object's name and model "
        f"files ({tr.asset.visual_mesh.name})",
        cause="object_model_mismatch",
    )
