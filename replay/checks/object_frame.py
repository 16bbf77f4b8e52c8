"""Object-frame validation (``scripts/validate_object_frame.py``, ``docs/fidelity.md``): hull gap, mass, rest, lift
onset and the hand at the grasp frame, per object. World frame; quaternions xyzw."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from replay.data.adapter_fields import LIFT_THRESHOLD_M, lift_onset
from replay.data.objects import asset_meshes
from replay.data.types import ObjectAsset, ObjectTrack, Recording
from replay.fileio import atomic_write_text
from replay.results.files import json_default

#: kg/m^3: effective density flagged outside (foam ~100; solid steel's 8000 only with hollow parts)
DENSITY_RANGE = (100.0, 5000.0)
#: s before the 1 cm lift onset left out of the at-rest window (the lift itself starts there)
REST_MARGIN_S = 0.25
#: at rest: translation (mm) and rotation (deg) from frame 0 below these
REST_TRANSLATION_MM = 5.0
REST_ROTATION_DEG = 5.0
#: pickup motion onset: the first frame moved more than this from frame 0 (mm, deg)
MOTION_MM, MOTION_DEG = 2.0, 2.0
N_SAMPLES = 4000
TIP_IDS = (4, 8, 12, 16, 20)
TIP_NAMES = ("thumb", "index", "middle", "ring", "pinky")


def _stats_mm(x_m: np.ndarray) -> dict:
    x = np.asarray(x_m, float) * 1000.0
    if x.size == 0:
        return {"median": None, "p90": None, "max": None, "n": 0}
    return {
        "median": round(float(np.median(x)), 3),
        "p90": round(float(np.percentile(x, 90)), 3),
        "max": round(float(np.max(x)), 3),
        "n": int(x.size),
    }


@dataclass
class _Hulls:
    meshes: list[trimesh.Trimesh]
    equations: list[np.ndarray]  # (F, 4): n.x + d, n outward unit, <= 0 inside
    union_surface: trimesh.Trimesh


def _hulls(parts: list[trimesh.Trimesh]) -> _Hulls:
    meshes, eqs = [], []
    for p in parts:
        h = p.convex_hull
        meshes.append(h)
        eqs.append(ConvexHull(np.asarray(h.vertices)).equations)
    return _Hulls(meshes, eqs, trimesh.util.concatenate(meshes))


def _plane_dist(eq: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """max over faces of n.x + d: exact -depth inside a convex hull, lower bound of distance outside."""
    return (pts @ eq[:, :3].T + eq[:, 3]).max(axis=1)


def signed_distance_to_parts(hulls: _Hulls, pts: np.ndarray) -> np.ndarray:
    """(N,) m of ``pts`` (N, 3) to the union of convex parts: + outside (exact), - the largest depth inside a part."""
    s = np.stack([_plane_dist(eq, pts) for eq in hulls.equations])  # (P, N)
    inside = (s < 0).any(axis=0)
    out = np.empty(len(pts))
    if inside.any():
        depth = np.where(s[:, inside] < 0, -s[:, inside], 0.0).max(axis=0)
        out[inside] = -depth
    if (~inside).any():
        _, d, _ = trimesh.proximity.closest_point(hulls.union_surface, pts[~inside])
        out[~inside] = d
    return out


def _union_boundary_samples(hulls: _Hulls, n: int, seed: int, tol: float = 1e-5) -> np.ndarray:
    """Points sampled on the parts' surfaces, kept if outside every other part by more than ``tol`` m."""
    pts, face = trimesh.sample.sample_surface(hulls.union_surface, n, seed=seed)
    owner = np.searchsorted(np.cumsum([len(m.faces) for m in hulls.meshes]), face, side="right")
    keep = np.ones(len(pts), bool)
    for j, eq in enumerate(hulls.equations):
        keep &= (owner == j) | (_plane_dist(eq, pts) > tol)
    return pts[keep]


def asset_figures(asset: ObjectAsset, n: int = N_SAMPLES, seed: int = 0) -> dict:
    """Hull gap, protrusion, volumes, mass and density of one asset (mm, m^3, kg, kg/m^3). The hull gap: signed
    distance of visual-surface samples to the collision parts (+: a finger sinks before contact); effective density
    over the visual volume."""
    visual, parts = asset_meshes(asset)
    hulls = _hulls(parts)
    vis_pts, _ = trimesh.sample.sample_surface(visual, n, seed=seed)
    sd = signed_distance_to_parts(hulls, np.asarray(vis_pts))
    bpts = _union_boundary_samples(hulls, n, seed + 1)
    _, prot, _ = trimesh.proximity.closest_point(visual, bpts)

    col_vol = float(sum(h.volume for h in hulls.meshes))
    mass = float(asset.mass) if asset.mass is not None else float(asset.density * col_vol)
    if visual.is_watertight and visual.volume > 0:
        vis_vol, approx = float(visual.volume), False
    else:
        vis_vol, approx = float(visual.convex_hull.volume), True
    eff = mass / vis_vol if vis_vol > 0 else math.inf
    return {
        "visual_mesh": str(asset.visual_mesh),
        "n_parts": len(parts),
        "hull_gap_mm": _stats_mm(np.abs(sd)),
        "hull_gap_signed_mm": {
            "mean": round(float(sd.mean() * 1000), 3),
            "frac_outside_1mm": round(float((sd > 0.001).mean()), 4),
            "frac_buried_1mm": round(float((sd < -0.001).mean()), 4),
        },
        "hull_protrusion_mm": _stats_mm(prot),
        "collision_volume_m3": col_vol,
        "visual_volume_m3": vis_vol,
        "visual_volume_is_convex_hull": approx,
        "hull_to_visual_volume": round(col_vol / vis_vol, 4) if vis_vol > 0 else None,
        "declared_density_kg_m3": float(asset.density),
        "mass_kg": round(mass, 5),
        "effective_density_kg_m3": round(eff, 2),
        "density_flag": not (DENSITY_RANGE[0] <= eff <= DENSITY_RANGE[1]),
    }


def _world(mesh: trimesh.Trimesh, pos: np.ndarray, quat_xyzw: np.ndarray) -> trimesh.Trimesh:
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat(quat_xyzw).as_matrix()
    T[:3, 3] = pos
    return mesh.copy().apply_transform(T)


def rest_figures(track: ObjectTrack, support_height: float) -> dict:
    """Frame-0 lowest points (collision parts, visual) minus the support height, mm."""
    visual, parts = asset_meshes(track.asset)
    low_col = min(_world(p, track.pos[0], track.quat[0]).bounds[0, 2] for p in parts)
    low_vis = _world(visual, track.pos[0], track.quat[0]).bounds[0, 2]
    return {
        "rest_gap_collision_mm": round((low_col - support_height) * 1000, 3),
        "rest_gap_visual_mm": round((low_vis - support_height) * 1000, 3),
    }


def lift_figures(track: ObjectTrack, fps: float) -> dict:
    """Lift onset, motion onset (:data:`MOTION_MM`, :data:`MOTION_DEG`) and rest before them (tracked objects)."""
    onset = lift_onset(track.pos, LIFT_THRESHOLD_M)
    if onset is None:
        return {"lift_onset_frame": None, "at_rest_before": None}
    trans = np.linalg.norm(track.pos[: onset + 1] - track.pos[0], axis=1) * 1000
    rel = Rotation.from_quat(track.quat[: onset + 1]) * Rotation.from_quat(track.quat[0]).inv()
    ang = np.degrees(rel.magnitude())
    moved = np.flatnonzero((trans > MOTION_MM) | (ang > MOTION_DEG))
    end = max(1, onset - int(round(REST_MARGIN_S * fps)))
    tmax, rmax = float(trans[:end].max()), float(ang[:end].max())
    return {
        "lift_onset_frame": onset,
        "lift_onset_s": round(onset / fps, 4),
        "motion_onset_frame": int(moved[0]) if moved.size else onset,
        "rest_window_frames": [0, end],
        "rest_max_translation_mm": round(tmax, 3),
        "rest_max_rotation_deg": round(rmax, 3),
        "at_rest_before": bool(tmax < REST_TRANSLATION_MM and rmax < REST_ROTATION_DEG),
    }


def hand_figures(rec: Recording) -> dict:
    """Least signed distance, mm (< 0 inside), of the hand points and fingertips to the visual surface at grasp."""
    g = rec.grasp_frame
    track = rec.target_object
    visual, _ = asset_meshes(track.asset)
    mesh = _world(visual, track.pos[g], track.quat[g])
    out: dict = {"grasp_frame": g, "grasp_s": round(float(rec.time[g]), 4)}

    def signed(pts: np.ndarray) -> np.ndarray:
        _, d, _ = trimesh.proximity.closest_point(mesh, pts)
        if mesh.is_watertight:
            d = np.where(mesh.contains(pts), -d, d)
        return d

    if rec.mano is not None and rec.mano.vertices is not None:
        d = signed(np.asarray(rec.mano.vertices[g], float))
        out["hand_points"] = "mano_vertices"
        out["min_hand_object_mm"] = round(float(d.min()) * 1000, 3)
    if rec.landmarks is not None and rec.valid[g]:
        d = signed(np.asarray(rec.landmarks[g], float))
        out.setdefault("hand_points", "landmarks")
        out["min_landmark_object_mm"] = round(float(d.min()) * 1000, 3)
        out["fingertip_object_mm"] = {n: round(float(d[i]) * 1000, 3) for n, i in zip(TIP_NAMES, TIP_IDS)}
        out.setdefault("min_hand_object_mm", out["min_landmark_object_mm"])
    return out


def validate_recording(rec: Recording, n: int = N_SAMPLES, seed: int = 0, *, asset_cache: dict | None = None) -> dict:
    """All object-frame figures of one recording, JSON-ready."""
    t0 = time.perf_counter()
    asset_cache = {} if asset_cache is None else asset_cache
    objs = []
    for i, tr in enumerate(rec.objects):
        key = (str(tr.asset.visual_mesh), tuple(map(str, tr.asset.collision_meshes)), tr.asset.density, tr.asset.mass)
        if key not in asset_cache:
            asset_cache[key] = asset_figures(tr.asset, n, seed)
        entry = {"name": tr.name, "target": i == rec.target, "tracked": tr.tracked}
        entry.update(asset_cache[key])
        entry.update(rest_figures(tr, rec.support_height))
        if "support_height_collision" in rec.meta:  # GRAB: the table's collision part is higher
            entry["rest_gap_vs_support_collision_mm"] = round(
                entry["rest_gap_collision_mm"] - (rec.meta["support_height_collision"] - rec.support_height) * 1000, 3
            )
        if tr.tracked:
            entry.update(lift_figures(tr, rec.fps))
        objs.append(entry)
    flags = []
    for o in objs:
        if o["density_flag"]:
            flags.append(
                f"{o['name']}: effective density {o['effective_density_kg_m3']} kg/m^3 outside {DENSITY_RANGE}"
            )
        if o.get("at_rest_before") is False:
            flags.append(
                f"{o['name']}: moves before lift onset "
                f"({o['rest_max_translation_mm']} mm, {o['rest_max_rotation_deg']} deg)"
            )
    return {
        "sequence": rec.name,
        "dataset": rec.dataset,
        "source": str(rec.source),
        "frames": rec.num_frames,
        "fps": rec.fps,
        "support_height_m": round(float(rec.support_height), 5),
        "support_rule": rec.meta.get("support_rule"),
        "grasp_rule": rec.meta.get("grasp_rule"),
        "objects": objs,
        "hand": hand_figures(rec),
        "flags": flags,
        "seconds": round(time.perf_counter() - t0, 2),
    }


PHYSICAL_KEYS = ("collision_parts", "object_track", "object_rest", "penetration", "hand_shape")


def physical_figures(rec: Recording) -> dict:
    """The physical-consistency figures the input checks stored in ``rec.meta["input_checks"]``, JSON-ready."""
    checks = rec.meta.get("input_checks", {})
    return {k: checks[k] for k in PHYSICAL_KEYS if k in checks}


def physical_line(fig: dict) -> str:
    parts = fig.get("collision_parts", {})
    track = [t for t in fig.get("object_track", {}).values()]
    rest, pen, shape = fig.get("object_rest", {}), fig.get("penetration", {}), fig.get("hand_shape", {})
    out = []
    if parts:
        out.append(f"parts fill >= {min(p['min_fill'] for p in parts.values())}")
    if track:
        out.append(
            f"track jumps {sum(len(t['jumps']) for t in track)}, noise {max(t['noise_rms_mm'] for t in track)} mm"
        )
    if rest:
        out.append(
            f"rest gap {rest['rest_gap_mm']} mm, still {rest['still_mm']} mm / {rest['still_deg']} deg, "
            f"centre of mass {rest['com_margin_mm']} mm inside its support"
        )
    if pen:
        out.append(f"hand up to {pen['max_mm']} mm inside ({pen['point']}, frame {pen['frame']})")
    if shape:
        out.append(f"bone spread {shape['max_spread_pct']} % ({shape['bone']})")
    return "; ".join(out)


def summarize(results: list[dict]) -> dict:
    """Pooled figures over recordings: per-object gap statistics and counts of flags."""
    objs = {}
    for r in results:
        for o in r["objects"]:
            objs.setdefault(o["name"], o)
    gaps = [o["hull_gap_mm"] for o in objs.values()]

    def dist(key):
        vals = [g[key] for g in gaps if g[key] is not None]
        return {"median": round(float(np.median(vals)), 3), "max": round(float(np.max(vals)), 3)} if vals else None

    rest = [o["rest_gap_collision_mm"] for r in results for o in r["objects"] if o["target"]]
    hand = [r["hand"].get("min_hand_object_mm") for r in results]
    return {
        "recordings": len(results),
        "objects": len(objs),
        "frames": int(sum(r["frames"] for r in results)),
        "hull_gap_median_mm_over_objects": dist("median"),
        "hull_gap_p90_mm_over_objects": dist("p90"),
        "hull_gap_max_mm_over_objects": dist("max"),
        "objects_median_gap_above_5mm": sorted(n for n, o in objs.items() if o["hull_gap_mm"]["median"] > 5),
        "objects_p90_gap_above_5mm": sorted(n for n, o in objs.items() if o["hull_gap_mm"]["p90"] > 5),
        "density_flagged": sorted(n for n, o in objs.items() if o["density_flag"]),
        "effective_density_kg_m3": {n: o["effective_density_kg_m3"] for n, o in sorted(objs.items())},
        "rest_gap_target_mm": _spread(rest),
        "not_at_rest_before_lift": [
            r["sequence"] for r in results for o in r["objects"] if o["target"] and o.get("at_rest_before") is False
        ],
        "min_hand_object_mm_at_grasp": _spread(hand),
        "flags": [f for r in results for f in r["flags"]],
        "input_flags": {r["sequence"]: r["input_flags"] for r in results if r.get("input_flags")},
        "hand_inside_object_mm": _spread(
            [r.get("physical_checks", {}).get("penetration", {}).get("max_mm") for r in results]
        ),
    }


def _spread(vals: list) -> dict | None:
    """``{median, min, max}`` of the numbers in ``vals`` (None skipped), or None."""
    v = [x for x in vals if x is not None]
    return (
        {"median": round(float(np.median(v)), 3), "min": round(float(np.min(v)), 3), "max": round(float(np.max(v)), 3)}
        if v
        else None
    )


def write_report(path: str | Path, payload: dict) -> Path:
    return atomic_write_text(Path(path), json.dumps(payload, indent=1, default=json_default) + "\n")
