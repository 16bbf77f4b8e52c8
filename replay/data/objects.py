"""Object asset loaders (GRAB, TACO, HUG-Bench), each an ObjectAsset in the object frame (m) of the dataset's poses."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import trimesh

from replay.data.asset_memo import memo
from replay.data.coacd import convex_decomposition
from replay.data.limits import load_json
from replay.data.mesh_checks import check_collision_part
from replay.data.mesh_io import load_mesh, shared_mesh
from replay.data.types import DEFAULT_DENSITY, ObjectAsset
from replay.errors import DataError


def asset_meshes(asset: ObjectAsset) -> tuple[trimesh.Trimesh, list[trimesh.Trimesh]]:
    """An asset's shared visual mesh and collision parts (object frame, m; read only); DataError: unreadable."""
    visual = shared_mesh(asset.visual_mesh, "visual_mesh", asset.source)
    parts = [shared_mesh(p, f"collision_meshes[{i}]", asset.source) for i, p in enumerate(asset.collision_meshes)]
    return visual, parts


def collision_volume(asset: ObjectAsset) -> float:
    """Sum of the collision parts' convex-hull volumes, m^3, overlaps counted twice (as MuJoCo weighs geoms)."""
    return float(
        memo(
            "collision_volume",
            list(asset.collision_meshes),
            {},
            compute=lambda: _hull_volume_sum(asset),
            code=(__name__, "replay.data.mesh_io"),
        )
    )


def _hull_volume_sum(asset) -> float:
    """:func:`collision_volume` measured (kept per content: :mod:`replay.data.asset_memo`)."""
    _, parts = asset_meshes(asset)
    return float(sum(p.convex_hull.volume for p in parts))


def asset_mass(asset: ObjectAsset) -> float:
    """``asset.mass`` if set, else ``density * collision_volume``, kg."""
    if asset.mass is not None:
        return float(asset.mass)
    return float(asset.density * collision_volume(asset))


def load_taco_object(obj_path: str | Path, name: str | None = None) -> ObjectAsset:
    """ObjectAsset of a TACO ``<seq>.obj`` (m), the default material, cached CoACD parts; DataError: unreadable."""
    obj_path = Path(obj_path)
    load_mesh(obj_path, "mesh")
    parts = convex_decomposition(obj_path)
    return ObjectAsset(
        name=name or obj_path.stem,
        visual_mesh=obj_path,
        collision_meshes=parts,
        source=obj_path,
        density_source=f"dataset: TACO states no material; object_sim's {DEFAULT_DENSITY:g} kg/m^3 (module doc)",
    )


_PART_RE = re.compile(r"(coacd|convex|part|collision|decomp|hull)", re.I)


def hug_collision_files(sim_assets: Path) -> list[Path]:
    """Convex parts of a HUG ``sim_assets`` folder: meshes but ``visual.obj`` whose path mentions coacd, convex, part,
    collision, decomp or hull; sorted."""
    out = []
    for p in sorted(sim_assets.rglob("*")):
        if p.suffix.lower() not in (".obj", ".stl", ".ply") or p.name == "visual.obj":
            continue
        if _PART_RE.search(str(p.relative_to(sim_assets))):
            out.append(p)
    return out


def load_hug_object(sim_assets: str | Path, name: str | None = None) -> tuple[ObjectAsset, np.ndarray]:
    """ObjectAsset and ``world_position`` (3,) m of a HUG-Bench ``<object>/sim_assets`` folder (world-aligned, metric
    meshes). Raises DataError: missing ``visual.obj``, ``properties.json`` or ``world_position``, malformed values, no
    convex part."""
    sim_assets = Path(sim_assets)
    name = name or sim_assets.parent.name
    visual = sim_assets / "visual.obj"
    load_mesh(visual, "visual.obj")
    props_path = sim_assets / "properties.json"
    if not props_path.is_file():
        raise DataError(props_path, None, "properties.json not found")
    props = load_json(props_path, "properties.json")
    if not isinstance(props, dict):
        raise DataError(props_path, None, f"expected a JSON object, got {type(props).__name__}")
    if "world_position" not in props:
        raise DataError(props_path, "world_position", "missing")
    try:
        wp = np.asarray(props["world_position"], float).reshape(3)
    except (TypeError, ValueError):
        raise DataError(props_path, "world_position", f"expected 3 numbers, got {props['world_position']!r}") from None
    if not np.all(np.isfinite(wp)):
        raise DataError(props_path, "world_position", "not finite")
    parts = hug_collision_files(sim_assets)
    if not parts:
        raise DataError(sim_assets, "collision", "no convex decomposition part found beside visual.obj")
    for i, p in enumerate(parts):
        check_collision_part(p, f"collision[{i}]")
    density = float(props.get("density", DEFAULT_DENSITY))
    mass = props.get("mass")
    asset = ObjectAsset(
        name=name,
        visual_mesh=visual,
        collision_meshes=parts,
        density=density,
        mass=None if mass is None else float(mass),
        source=props_path,
    )
    return asset, wp


def hug_object_pose(asset: ObjectAsset, world_position: np.ndarray) -> tuple[np.ndarray, str]:
    """World position (m) of a HUG asset's object frame, and the reading: ``"mesh_in_world"`` when the visual box
    centre is within 1 cm of ``world_position``, else ``"mesh_local"``."""
    mesh = load_mesh(asset.visual_mesh, "visual_mesh", asset.source)
    centre = mesh.bounds.mean(axis=0)
    if np.linalg.norm(centre - world_position) < 0.01:
        return np.zeros(3), "mesh_in_world"
    return np.asarray(world_position, float) - centre, "mesh_local"
