"""The object at rest before the grasp: on its support, still until the hand comes, able to stand.

The replay places the object at its recorded pose at the start of the approach
(:func:`replay.checks.frames.approach_window`) and lets it settle before the hand moves,
so that pose must be one the object can rest in. Checked for the target object, with its
collision parts (what the simulator collides with) posed at that frame (world, m;
quaternions xyzw):

* **On the support**: its lowest collision vertex within :data:`REST_GAP_FLAG_M` of
  ``support_height`` (flagged beyond, refused beyond :data:`REST_GAP_REFUSE_M`). A float
  falls during the settle and a sink is pushed out of the table, so the hand meets the
  object elsewhere than recorded. A mesh whose vertices were shifted from the frame the
  poses refer to shows up here as a float or a sink: nothing re-centres a mesh
  (google-deepmind/mujoco#409), the scene poses the vertices as the file has them
  (:mod:`replay.sim.world_builder`).
* **Still**: from the start of the approach until the hand first comes within
  :data:`HAND_NEAR_M` of the collision parts, the object moves at most
  :data:`STILL_FLAG_MM` / :data:`STILL_FLAG_DEG` from its first pose (flagged beyond,
  refused beyond :data:`STILL_REFUSE_MM` / :data:`STILL_REFUSE_DEG`): nothing the recording
  holds moves it. The hand's distance is the hull-plane lower bound of
  :class:`~replay.checks.geometry.ConvexParts` (an untracked frame ends the stretch).
* **Able to stand**: its support polygon, the 2-D convex hull of the collision vertices
  within :data:`STABLE_BAND_M` (or :data:`STABLE_BAND_FRAC` of its size, if larger: a
  tilt of ~3 deg) of its lowest vertex, is at least :data:`STABLE_MIN_WIDTH_M` wide and
  holds the projection of its centre of mass
  (:meth:`~replay.checks.geometry.ConvexParts.center_of_mass`); else it would tip over
  while settling: refused.

Thresholds and the clean mirror (30 GRAB lifts, 10 intents, 2 TACO; at the approach
start; refused recordings excluded):

* rest gap -4.53 mm (stapler_lift, its parts 4.5 mm into the table's visual top) to
  +2.73 mm (waterbottle_lift); TACO -0.20 and -0.05 mm (its support is the object's own
  lowest point). :data:`REST_GAP_FLAG_M` = 7.5 mm (1.65x the largest), refused at
  :data:`REST_GAP_REFUSE_M` = 15 mm;
* still before the hand is near: at most 0.65 mm (waterbottle_lift) and 2.0 deg
  (flashlight_lift); TACO's hand is near from the first frame. Flagged above 5 mm / 5 deg
  (:data:`replay.checks.object_frame.REST_TRANSLATION_MM`'s values), refused above 20 mm /
  20 deg (``ReplayConfig.diag_push_mm``: a grasp displaced by more is not the recorded one);
* support polygon at least 17.0 mm wide with the centre of mass at least 6.8 mm inside it
  (both knife_lift, lying on its side); :data:`STABLE_MIN_WIDTH_M` = 2 mm (an edge or a
  point is 0), the centre of mass anywhere inside.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import ConvexHull, QhullError
from scipy.spatial.transform import Rotation

from replay.checks.frames import approach_window
from replay.checks.geometry import ConvexParts, collision_parts, frames_to_object_frame, to_world
from replay.checks.hand_points import hand_points
from replay.data.types import Recording
from replay.errors import DataError

REST_GAP_FLAG_M = 0.0075
REST_GAP_REFUSE_M = 0.015
HAND_NEAR_M = 0.03
STILL_FLAG_MM, STILL_FLAG_DEG = 5.0, 5.0
STILL_REFUSE_MM, STILL_REFUSE_DEG = 20.0, 20.0
STABLE_BAND_M = 0.005
STABLE_BAND_FRAC = 0.05
STABLE_MIN_WIDTH_M = 0.002


def support_polygon(parts: ConvexParts, pos: np.ndarray, quat: np.ndarray) -> dict:
    """The object's support at pose ``pos`` (3,) m / ``quat`` (4,) xyzw (module doc).

    Returns:
        ``{lowest_z_m, width_mm, com_margin_mm}``: the lowest collision vertex (world z), the
        polygon's smallest width, and how far inside it (> 0) or outside (< 0) the centre of
        mass projects; width 0 for a point or edge support (margin: minus the distance to it).
    """
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


def hand_free_until(rec: Recording, parts: ConvexParts, s: int, g: int) -> int:
    """First frame in ``[s, g]`` whose hand points come within :data:`HAND_NEAR_M` of the collision
    parts (or are untracked); ``g`` if none."""
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
    """Support, stillness and stability of the target before the grasp (module doc).

    Returns:
        (flags, figures): flag ``object_rest``; figures ``frame``, ``rest_gap_mm``,
        ``still_frames``, ``still_mm``, ``still_deg``, ``support_width_mm``, ``com_margin_mm``.

    Raises:
        DataError: floating or sunk beyond :data:`REST_GAP_REFUSE_M`, moving beyond
            :data:`STILL_REFUSE_MM` / :data:`STILL_REFUSE_DEG` before the hand comes, or unable
            to stand; field ``objects[<name>].pos`` / ``.quat``.
    """
    s, g = approach_window(rec)
    tr = rec.target_object
    parts = collision_parts(tr.asset)
    sup = support_polygon(parts, tr.pos[s], tr.quat[s])
    gap = sup["lowest_z_m"] - float(rec.support_height)
    near = hand_free_until(rec, parts, s, g)
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
