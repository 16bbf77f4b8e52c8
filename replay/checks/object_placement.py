"""The object's size and mass against what a hand holds, and its placement against the support and the recorded hand
(farther: the mesh is in another frame or unit than the poses)."""

from __future__ import annotations

import numpy as np
import trimesh

from replay.checks.geometry import to_object_frame, to_world
from replay.checks.hand import CARRY_DRIFT_MAX, CARRY_WINDOW_S, carry_drift
from replay.checks.hand_points import hand_points
from replay.data.mesh_io import shared_mesh, unit_hint
from replay.data.objects import asset_mass, asset_meshes
from replay.data.types import Recording
from replay.errors import DataError

OBJECT_EXTENT_RANGE_M = (0.005, 1.5)
#: kg; 23 kg: the load constant of the revised NIOSH lifting equation (Waters et al., Ergonomics 1993)
OBJECT_MASS_RANGE_KG = (0.001, 23.0)
#: m: the first frame's lowest collision point to the support, and the hand at the lift onset to the surface
REST_GAP_MAX_M = 0.05
HAND_GAP_MAX_M = 0.05


def check_object(rec: Recording) -> dict:
    """Figures ``extent_m``, ``mass_kg``, ``rest_gap_mm``, ``hand_gap_mm``. Raises DataError: size or mass outside a
    hand's (unit named), off its support at the first frame, the hand far from it at the lift onset."""
    track = rec.target_object
    visual = shared_mesh(track.asset.visual_mesh, "visual_mesh", track.asset.source)
    fig = _scale_and_mass(track.asset, visual)
    _, parts = asset_meshes(track.asset)
    fig["rest_gap_mm"] = _rest_gap_mm(rec, track, parts)
    _hand_gap(rec, track, visual, fig)
    return fig


def check_object_units(rec: Recording) -> dict:
    """``{extent_m, mass_kg}``, run before the object model check. Raises DataError (cause ``units``): outside
    :data:`OBJECT_EXTENT_RANGE_M` / :data:`OBJECT_MASS_RANGE_KG`."""
    track = rec.target_object
    return _scale_and_mass(track.asset, shared_mesh(track.asset.visual_mesh, "visual_mesh", track.asset.source))


def _scale_and_mass(asset, visual: trimesh.Trimesh) -> dict:
    """``{extent_m, mass_kg}`` of the asset; raises DataError outside the ranges (naming a unit that fits)."""
    extent = float(np.ptp(visual.bounds, axis=0).max())
    fig = {"extent_m": round(extent, 5)}
    lo, hi = OBJECT_EXTENT_RANGE_M
    if not lo <= extent <= hi:
        raise DataError(
            asset.visual_mesh,
            "scale",
            f"object is {extent:.4g} m across (largest bounding-box side); a "
            f"hand holds {lo * 1000:g} mm-{hi:g} m{unit_hint(extent)}: convert "
            "the meshes to metres",
            cause="units",
        )
    mass = asset_mass(asset)
    fig["mass_kg"] = round(mass, 5)
    lo, hi = OBJECT_MASS_RANGE_KG
    if not lo <= mass <= hi:
        raise DataError(
            asset.source or asset.visual_mesh,
            "mass",
            f"object weighs {mass:.4g} kg (density {asset.density:g} kg/m^3 x collision volume); a hand "
            f"lifts {lo * 1000:g} g-{hi:g} kg: mesh units or density wrong",
            cause="units",
        )
    return fig


def _rest_gap_mm(rec: Recording, track, parts: list) -> float:
    """Lowest collision vertex minus ``support_height`` at frame 0, mm; DataError beyond :data:`REST_GAP_MAX_M`."""
    low = min(float(to_world(track.pos[0], track.quat[0], p.vertices)[:, 2].min()) for p in parts)
    gap = low - float(rec.support_height)
    if abs(gap) > REST_GAP_MAX_M:
        where = "above" if gap > 0 else "below"
        raise DataError(
            rec.source,
            f"objects[{track.name}].pos",
            f"at the first frame the object's lowest point is "
            f"{abs(gap) * 1000:.0f} mm {where} the support (at most "
            f"{REST_GAP_MAX_M * 1000:g} mm): object mesh and poses in "
            "different frames or units",
            cause="object_frame",
        )
    return round(gap * 1000, 2)


def _hand_gap(rec: Recording, track, visual: trimesh.Trimesh, fig: dict) -> None:
    """Put ``hand_gap_mm`` (hand to visual surface, last tracked frame up to the lift onset) in ``fig``. Raises
    DataError beyond :data:`HAND_GAP_MAX_M`: field ``hand`` when another hand carries the object, else the hand
    points' field."""
    pts, field = hand_points(rec)
    v = np.flatnonzero(np.asarray(rec.valid, bool)[: rec.grasp_frame + 1])
    if pts is None or not v.size:
        return
    t = int(v[-1])
    # distances are the same in the object frame: the shared mesh keeps its triangle tree (no posed copy)
    _, d, _ = trimesh.proximity.closest_point(visual, to_object_frame(track.pos[t], track.quat[t], pts[t]))
    hg = float(np.min(d))
    fig["hand_gap_mm"] = round(hg * 1000, 2)
    if hg <= HAND_GAP_MAX_M:
        return
    carry = carry_drift(rec, pts, t)
    if carry is not None and carry[1] > 0 and carry[0] > CARRY_DRIFT_MAX * carry[1]:
        fig["carry_drift_mm"], fig["carry_travel_mm"] = round(carry[0] * 1000, 1), round(carry[1] * 1000, 1)
        side = rec.hand_side
        raise DataError(
            rec.source,
            "hand",
            f"the object is moved by a hand the recording does not store: at "
            f"the lift onset (frame {t}) the recorded {side} hand is "
            f"{hg * 1000:.0f} mm from it and does not carry it (in "
            f"{CARRY_WINDOW_S:g} s the object drifts {carry[0] * 1000:.0f} mm "
            f"in the hand's frame while travelling {carry[1] * 1000:.0f} mm); "
            f"refused: replaying the {side} hand would not be this grasp",
            cause="other_hand",
        )
    raise DataError(
        rec.source,
        field,
        f"at the lift onset (frame {t}) the recorded hand is {hg * 1000:.0f} mm "
        f"from the object's surface (at most {HAND_GAP_MAX_M * 1000:g} mm): object "
        "mesh and poses in different frames or units",
        cause="object_frame",
    )
