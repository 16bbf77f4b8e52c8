"""The object's mass as simulated (MuJoCo, overlaps counted twice) against the asset's own; the parts judged by
overlap and share outside the visual hull."""

from __future__ import annotations

import mujoco
import numpy as np

from replay.checks.geometry import ConvexParts, collision_parts
from replay.data.asset_memo import memo
from replay.data.mesh_io import shared_mesh
from replay.data.objects import asset_meshes
from replay.data.types import Recording
from replay.errors import DataError

#: flag / refuse: the parts' summed hull volume over their union's (1: each volume once; a part listed twice: 2)
OVERLAP_FLAG = 1.08
OVERLAP_REFUSE = 1.25
#: flag / refuse: share of the parts' union farther than OUTSIDE_TOL_M (m) outside the visual mesh's hull
OUTSIDE_FLAG = 0.1
OUTSIDE_REFUSE = 0.25
OUTSIDE_TOL_M = 0.002
#: simulated / asset mass below these: parts that fill less than the object (one missing, one shrunk)
UNDERFILL_FLAG = 0.9
UNDERFILL_REFUSE = 0.7
SAMPLES = 40_000
OUTSIDE_SAMPLES = 4000


def simulated_mass(asset) -> tuple[float, np.ndarray]:
    """(mass kg, principal inertia (3,) kg·m^2) of the parts as one MuJoCo body, scaled to a stated ``asset.mass``;
    DataError (cause ``collision_parts``) when MuJoCo cannot compile them."""
    spec = mujoco.MjSpec()
    body = spec.worldbody.add_body(name="object")
    body.add_freejoint()
    for i, path in enumerate(asset.collision_meshes):
        mesh = shared_mesh(path, "collision_meshes", asset.source)
        spec.add_mesh(
            name=f"part{i}",
            uservert=np.asarray(mesh.vertices, float).ravel().tolist(),
            userface=np.asarray(mesh.faces, int).ravel().tolist(),
        )
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=f"part{i}", density=float(asset.density))
    try:
        m = spec.compile()
    except Exception as e:  # MuJoCo's compiler error (a degenerate part)
        raise DataError(
            asset.source, "collision_meshes", f"MuJoCo cannot compile the collision parts: {e}", cause="collision_parts"
        ) from None
    mass, inertia = float(m.body_mass[1]), np.array(m.body_inertia[1], float)
    if asset.mass is not None and mass > 0:  # the scene scales the density-derived figures to the stated mass
        inertia *= float(asset.mass) / mass
        mass = float(asset.mass)
    return mass, inertia


def part_overlap(parts: list, visual, cp: ConvexParts | None = None) -> dict:
    """``{overlap, outside, union_m3}`` from :data:`SAMPLES` points (seed 0): summed hull volume over the union's, and
    the union's share over :data:`OUTSIDE_TOL_M` outside the visual convex hull."""
    cp = ConvexParts.from_meshes(parts) if cp is None else cp
    lo = np.min([p.bounds[0] for p in parts], axis=0)
    hi = np.max([p.bounds[1] for p in parts], axis=0)
    pts = np.random.default_rng(0).uniform(lo, hi, size=(SAMPLES, 3))
    inside = cp.inside_any(pts)  # = (part_plane_distance(pts) <= 0).any(axis=0), with fewer faces tested
    union = float(np.prod(hi - lo)) * inside.mean()
    hull = ConvexParts.from_meshes([visual.convex_hull])
    ins = pts[inside][:OUTSIDE_SAMPLES]
    out = hull.part_plane_distance(ins)[0] > OUTSIDE_TOL_M if len(ins) else np.zeros(0, bool)
    return {
        "overlap": round(float(cp.volumes.sum()) / union, 3) if union > 0 else None,
        "outside": round(float(out.mean()), 3) if out.size else None,
        "union_m3": union,
    }


def measure_object_mass(asset) -> dict:
    """What :func:`check_object_mass` judges, memoised per content; DataError as :func:`simulated_mass`."""
    sim, inertia = simulated_mass(asset)
    visual, parts = asset_meshes(asset)
    if asset.mass is not None:
        own, rule = float(asset.mass), "stated mass"
    elif visual.is_watertight:
        own, rule = float(abs(visual.volume)) * float(asset.density), "watertight visual volume x density"
    else:
        own, rule = None, "visual mesh not watertight"
    fill = part_overlap(parts, visual, collision_parts(asset))
    return {
        "simulated_kg": sim,
        "inertia_kg_m2": [float(x) for x in inertia],
        "asset_kg": own,
        "asset_rule": rule,
        "overlap": fill["overlap"],
        "outside": fill["outside"],
    }


def check_object_mass(rec: Recording) -> tuple[dict, dict]:
    """(flag ``object_mass``, figures ``simulated_kg``, ``inertia_kg_m2`` (3,), ``asset_kg``, ``ratio``, ``overlap``,
    ...). Raises DataError (field ``collision_meshes``): overlap, outside share or underfill past refusal."""
    asset = rec.target_object.asset
    m = memo(
        "object_mass",
        [asset.visual_mesh, *asset.collision_meshes],
        {"density": float(asset.density), "mass": asset.mass},
        compute=lambda: measure_object_mass(asset),
        code=(__name__, "replay.checks.geometry", "replay.data.mesh_io", "replay.data.objects"),
    )
    sim, inertia, own, rule = m["simulated_kg"], m["inertia_kg_m2"], m["asset_kg"], m["asset_rule"]
    figs = {
        "simulated_kg": round(sim, 5),
        "inertia_kg_m2": [float(f"{x:.4g}") for x in inertia],
        "density": float(asset.density),
        "asset_kg": None if own is None else round(own, 5),
        "asset_rule": rule,
        "ratio": round(sim / own, 3) if own else None,
    }
    fill = {"overlap": m["overlap"], "outside": m["outside"]}
    figs.update(fill)
    both = (
        f"{asset.name} is simulated at {sim:.4g} kg (density {asset.density:g} kg/m^3 x the collision parts' "
        f"volume{'' if asset.mass is None else ', scaled to the stated mass'})"
        + (f", the asset weighs {own:.4g} kg ({rule})" if own else "")
    )
    ov, ou, r = fill["overlap"] or 1.0, fill["outside"] or 0.0, figs["ratio"] or 1.0
    why = (
        f"the collision parts overlap: their volumes sum to {ov:.2f}x the volume they fill"
        if ov > OVERLAP_FLAG
        else f"{ou * 100:.0f} % of the collision parts lie outside the visual mesh's hull (a part scaled or misplaced?)"
        if ou > OUTSIDE_FLAG
        else f"the collision parts fill {r:.2f}x the object's volume (a part missing or shrunk?)"
    )
    if ov > OVERLAP_REFUSE or ou > OUTSIDE_REFUSE or r < UNDERFILL_REFUSE:
        raise DataError(
            asset.source or asset.visual_mesh,
            "collision_meshes",
            f"{both}: {why}; refused: fix the parts (each volume once, inside the object)",
            cause="object_mass",
        )
    flags: dict = {}
    if ov > OVERLAP_FLAG or ou > OUTSIDE_FLAG or r < UNDERFILL_FLAG:
        flags["object_mass"] = f"{both}: {why}"
    dsrc = str(asset.density_source or "")
    if dsrc.startswith("default") and asset.mass is None:
        flags["object_mass"] = f"{asset.name}: no density stated; the simulator uses {dsrc}"
    return flags, figs
