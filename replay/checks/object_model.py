"""The object model against the recording: the scale the grip and the rest ask of it (rule: docs/input-checks.md);
a refuted model is refused before the placement and rest checks it would trigger."""

from __future__ import annotations

import numpy as np

from replay.checks.frames import approach_window, index_runs
from replay.checks.geometry import ConvexParts, collision_parts, to_object_frame, to_world
from replay.checks.hand_points import hand_points
from replay.checks.object_rest import REST_GAP_FLAG_M, REST_GAP_REFUSE_M
from replay.checks.penetration import PENETRATION_FLAG_M
from replay.data.types import Recording
from replay.errors import DataError

#: m: a holding hand's deepest point lies at most GRIP_DEPTH_M inside the surface and GRIP_GAP_M outside it
GRIP_DEPTH_M = PENETRATION_FLAG_M
GRIP_GAP_M = 0.015
#: m: least origin height above the model's lowest point for a rest scale (a few mm of gap stays a small scale)
REST_LEVER_MIN_M = 0.005
GRIP_ONLY_FACTOR = 2.0
REST_ONLY_FACTOR = 1.25
#: judged only with the object frame's origin in this middle part of the model's bounding box, per axis
ORIGIN_BOX = (0.25, 0.75)
#: scales tried: 1/20 .. 20, 5 % apart (a 1000x model is the unit check's)
SCALES = np.exp(np.linspace(np.log(0.05), np.log(20.0), 121))
#: size ratios named as a unit (within 10 %; not inch/cm: 2.54x is as near the size steps of a set of objects)
UNIT_RATIOS = {10.0: "centimetres for millimetres", 25.4: "inches for millimetres", 100.0: "metres for centimetres"}


def scaled_distance(parts: ConvexParts, pts: np.ndarray, s: float) -> np.ndarray:
    """(N,) m hull-plane distance (> 0 outside) of object-frame ``pts`` (N, 3) to the parts scaled by ``s``."""
    return np.min([(pts @ eq[:, :3].T + s * eq[:, 3]).max(axis=1) for eq in parts.equations], axis=0)


def grip_scales(rec: Recording, parts: ConvexParts) -> tuple[float, float, int] | None:
    """``(lo, hi, frame)``: the range of :data:`SCALES` at which the hand's deepest point at the last tracked frame
    before the lift onset is between :data:`GRIP_DEPTH_M` inside and :data:`GRIP_GAP_M` outside; None without hand
    points; NaN both when no scale fits."""
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
    one = int(np.argmin(np.abs(np.log(SCALES))))
    runs = index_runs(np.flatnonzero(ok))  # contiguous scale ranges
    a, b = min(runs, key=lambda r: 0 if r[0] <= one <= r[1] else min(abs(r[0] - one), abs(r[1] - one)))
    return float(SCALES[a]), float(SCALES[b]), f


def rest_scale(rec: Recording, parts: ConvexParts) -> dict:
    """``{frame, gap_mm, scale}`` at the approach start: the model's lowest point above the support, and origin
    height over the support / over the lowest point (None for a lever under :data:`REST_LEVER_MIN_M`)."""
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
    """The scale the recording implies when it refutes the model (docs/input-checks.md), else None."""
    lo, hi, rs = grip[0], grip[1], rest["scale"]
    if not np.isfinite(lo):
        return None
    if lo <= 1.0 <= hi:  # the grip cannot tell; the rest alone, where the grip holds its scale too
        ok = rs is not None and SCALES[0] <= rs <= SCALES[-1] and lo <= rs <= hi
        far = abs(rest["gap_mm"]) > REST_GAP_REFUSE_M * 1000 and abs(np.log(rs or 1.0)) > np.log(REST_ONLY_FACTOR)
        return rs if ok and far else None
    step = SCALES[1] / SCALES[0]
    if rs is not None:  # resting as recorded (no gap), a hand off the model is the hand's fault
        return rs if abs(rest["gap_mm"]) > REST_GAP_FLAG_M * 1000 and lo / step <= rs <= hi * step else None
    if hi < 1 / GRIP_ONLY_FACTOR:
        return hi
    if lo > GRIP_ONLY_FACTOR:
        return lo
    return None


def check_object_model(rec: Recording) -> dict:
    """Figures ``grip_scale`` ([lo, hi]), ``grip_frame``, ``rest_scale``, ``rest_gap_mm``, ``origin_in_box``. Raises
    DataError (cause ``object_model_mismatch``, field ``visual_mesh``): another size than the model (ratio named)."""
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
