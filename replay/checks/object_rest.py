"""The object at rest before the grasp: on its support, still until the hand comes, able to stand (a shifted mesh
floats or sinks: nothing re-centres a mesh, google-deepmind/mujoco#409)."""

from __future__ import annotations

import numpy as np
from scipy.spatial import ConvexHull, QhullError
from scipy.spatial.transform import Rotation

from replay.checks.frames import approach_window
from replay.checks.geometry import ConvexParts, collision_parts, frames_to_object_frame, to_world
from replay.checks.hand_points import hand_points
from replay.data.types import Recording
from replay.errors import DataError

#: m: lowest collision vertex to the support, flagged / refused beyond
REST_GAP_FLAG_M = 0.0075
REST_GAP_REFUSE_M = 0.015
#: m: the object must be still until the hand points come this near its parts
HAND_NEAR_M = 0.03
STILL_FLAG_MM, STILL_FLAG_DEG = 5.0, 5.0
#: refused above ``ReplayConfig.diag_push_mm``'s 20 mm / 20 deg: a grasp displaced more is not the recorded one
STILL_REFUSE_MM, STILL_REFUSE_DEG = 20.0, 20.0
#: support polygon: vertices within STABLE_BAND_M (or STABLE_BAND_FRAC of the size) of the lowest, at least
#: STABLE_MIN_WIDTH_M wide, holding the centre of mass
STABLE_BAND_M = 0.005
STABLE_BAND_FRAC = 0.05
STABLE_MIN_WIDTH_M = 0.002


def support_polygon(parts: ConvexParts, pos: np.ndarray, quat: np.ndarray) -> dict:
    """``{lowest_z_m, width_mm, com_margin_mm}`` at ``pos`` (3,) m / ``quat`` (4,) xyzw: the lowest collision vertex
    (world z), the support polygon's least width, the centre of mass's projection inside it (> 0)."""
    V = to_world(pos, quat, np.concatenate(parts.vertices))
    com = to_world(pos, quat, parts.center_of_mass()[None])[0, :2]
    low = float(V[:, 2].min())
    band = max(STABLE_BAND_M, STABLE_BAND_FRAC * float(np.ptp(V, axis=0).max()))
    B = V[V[:, 2] <= low + band, :2]
    try:
        h = ConvexHull(B)
    except (QhullError, ValueError):  # a point or an edge
        d = np.linalg.norm(B - com, axis=1).min() if len(B) < 2 else _segment_distance(B, com)
        return {"lowest_z_m": low, "width_mm": 0.0, "com_margin_mm": round(-float(d) * 1000, 2)}
    e = h.equations
    P = B[h.vertices]
    width = float(np.abs(P @ e[:, :2].T + e[:, 2]).max(axis=0).min())  # the narrowest of the hull's widths
    margin = -float((com @ e[:, :2].T + e[:, 2]).max())
    return {"lowest_z_m": low, "width_mm": round(width * 1000, 2), "com_margin_mm": round(margin * 1000, 2)}


def _segment_distance(B: np.ndarray, c: np.ndarray) -> float:
    """Distance from ``c`` (2,) to the segment spanned by collinear points ``B`` (N, 2)."""
    d = B[-1] - B[0]
    t = (B - B[0]) @ d / max(float(d @ d), 1e-18)
    a, b = B[int(np.argmin(t))], B[int(np.argmax(t))]
    ab = b - a
    u = np.clip((c - a) @ ab / max(float(ab @ ab), 1e-18), 0.0, 1.0)
    return float(np.linalg.norm(a + u * ab - c))


def hand_free_until(rec: Recording, parts: ConvexParts, s: int, *, g: int) -> int:
    """First frame in ``[s, g]`` with the hand within :data:`HAND_NEAR_M` of the parts (or untracked), else ``g``."""
    pts, _ = hand_points(rec)
    tr = rec.target_object
    valid = np.asarray(rec.valid, bool)
    if pts is None:
        return s
    f = np.arange(s, g + 1)
    bad = f[~valid[f]]  # untracked: a frame of its own, never transformed
    ok = f[valid[f]]
    if ok.size:
        local = frames_to_object_frame(tr.pos[ok], tr.quat[ok], pts[ok])  # (F, K, 3), every frame in one pass
        near = ok[parts.plane_distance(local.reshape(-1, 3)).reshape(len(ok), -1).min(axis=1) < HAND_NEAR_M]
    else:
        near = ok
    return min([int(x[0]) for x in (bad, near) if x.size], default=g)  # the first of either, else g


def _still(rec: Recording, s: int, near: int) -> tuple[float, float]:
    """Largest displacement (mm) and turn (deg) of the target over frames ``[s, near)`` from frame ``s``."""
    tr = rec.target_object
    if near <= s + 1:
        return 0.0, 0.0
    mm = float(np.linalg.norm(tr.pos[s:near] - tr.pos[s], axis=1).max() * 1000)
    deg = float(
        np.degrees((Rotation.from_quat(tr.quat[s:near]) * Rotation.from_quat(tr.quat[s]).inv()).magnitude()).max()
    )
    return mm, deg


def check_object_rest(rec: Recording) -> tuple[dict, dict]:
    """(flags ``object_rest``, figures). Raises DataError (field ``objects[<name>].pos`` / ``.quat``): floating or sunk
    beyond :data:`REST_GAP_REFUSE_M`, moving beyond :data:`STILL_REFUSE_MM` / :data:`STILL_REFUSE_DEG` before the hand
    comes, or unable to stand."""
    s, g = approach_window(rec)
    tr = rec.target_object
    parts = collision_parts(tr.asset)
    sup = support_polygon(parts, tr.pos[s], tr.quat[s])
    gap = sup["lowest_z_m"] - float(rec.support_height)
    near = hand_free_until(rec, parts, s, g=g)
    mm, deg = _still(rec, s, near)
    figs = {
        "frame": s,
        "rest_gap_mm": round(gap * 1000, 2),
        "still_frames": [s, near],
        "still_mm": round(mm, 2),
        "still_deg": round(deg, 2),
        "support_width_mm": sup["width_mm"],
        "com_margin_mm": sup["com_margin_mm"],
    }
    where = "above" if gap > 0 else "into"
    if abs(gap) > REST_GAP_REFUSE_M:
        raise DataError(
            rec.source,
            f"objects[{tr.name}].pos",
            f"at the approach start (frame {s}) the object's lowest collision point is {abs(gap) * 1000:.1f} mm "
            f"{where} the support (at most {REST_GAP_REFUSE_M * 1000:g} mm): it would "
            f"{'fall' if gap > 0 else 'be pushed out'} as the replay settles it; a mesh shifted from the "
            "frame its poses refer to, or poses in another frame",
            cause="object_rest",
        )
    if mm > STILL_REFUSE_MM or deg > STILL_REFUSE_DEG:
        raise DataError(
            rec.source,
            f"objects[{tr.name}].pos",
            f"the object moves {mm:.1f} mm / {deg:.1f} deg between frames {s} and {near} while the hand is "
            f"over {HAND_NEAR_M * 1000:g} mm away (at most {STILL_REFUSE_MM:g} mm / {STILL_REFUSE_DEG:g} deg): "
            "nothing the recording holds moves it (a tracking fault)",
            cause="object_rest",
        )
    if sup["width_mm"] < STABLE_MIN_WIDTH_M * 1000 or sup["com_margin_mm"] < 0:
        raise DataError(
            rec.source,
            f"objects[{tr.name}].quat",
            f"at the approach start (frame {s}) the object cannot stand: it rests on a support "
            f"{sup['width_mm']:.1f} mm wide with its centre of mass {-sup['com_margin_mm']:.1f} mm outside it, "
            "so it would tip over while the replay settles it (an orientation or mesh frame that is wrong)",
            cause="object_rest",
        )
    flags = []
    if abs(gap) > REST_GAP_FLAG_M:
        flags.append(
            f"floats {gap * 1000:.1f} mm above the support at frame {s}"
            if gap > 0
            else f"sunk {-gap * 1000:.1f} mm into the support at frame {s}"
        )
    if mm > STILL_FLAG_MM or deg > STILL_FLAG_DEG:
        flags.append(f"moves {mm:.1f} mm / {deg:.1f} deg over frames {s}-{near} before the hand comes near")
    return ({"object_rest": f"{tr.name}: " + "; ".join(flags)} if flags else {}), figs
