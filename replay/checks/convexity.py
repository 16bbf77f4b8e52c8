"""Collision parts are convex: MuJoCo and Newton collide with each part's convex hull, silently
(google-deepmind/mujoco#831, newton-physics/newton#4065), so a non-convex part is refused naming the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial import ConvexHull

from replay.data.asset_memo import memo
from replay.data.mesh_io import shared_mesh
from replay.data.types import Recording
from replay.errors import DataError

#: least part volume / hull volume, and deepest vertex inside the hull (m): room for meshing tolerance
FILL_MIN = 0.98
CONCAVITY_MAX_M = 0.001


def part_convexity(path: str | Path, source: str | Path | None = None) -> dict:
    """``{fill, concavity_mm, watertight}`` of one part: volume over hull volume, and its deepest vertex's depth inside
    the hull (mm); DataError when unreadable."""
    return memo(
        "part_convexity",
        [path],
        {},
        compute=lambda: _part_convexity(path, source),
        code=(__name__, "replay.data.mesh_io"),
    )


def _part_convexity(path, source) -> dict:
    mesh = shared_mesh(path, "collision_meshes", source)
    hull = mesh.convex_hull
    eq = ConvexHull(np.asarray(hull.vertices)).equations
    depth = -(np.asarray(mesh.vertices, float) @ eq[:, :3].T + eq[:, 3]).max(axis=1)
    fill = float(abs(mesh.volume) / hull.volume) if hull.volume > 0 else 0.0
    return {
        "fill": round(fill, 5),
        "concavity_mm": round(max(0.0, float(depth.max())) * 1000, 3),
        "watertight": bool(mesh.is_watertight),
    }


def check_convex_parts(rec: Recording) -> dict:
    """``{object: {"min_fill", "max_concavity_mm"}}``. Raises DataError naming the file: a part below
    :data:`FILL_MIN` or beyond :data:`CONCAVITY_MAX_M`."""
    figs: dict = {}
    seen: set = set()
    for tr in rec.objects:
        asset = tr.asset
        fills, conc = [], []
        for i, part in enumerate(asset.collision_meshes):
            if str(part) in seen:
                continue
            seen.add(str(part))
            f = part_convexity(part, asset.source)
            fills.append(f["fill"])
            conc.append(f["concavity_mm"])
            if f["fill"] < FILL_MIN or f["concavity_mm"] > CONCAVITY_MAX_M * 1000:
                raise DataError(
                    part,
                    f"collision_meshes[{i}]",
                    f"collision part of {asset.name!r} is not convex: its volume is {f['fill']:.0%} of its "
                    f"convex hull's (at least {FILL_MIN:.0%}) and a vertex lies {f['concavity_mm']:.1f} mm inside "
                    f"the hull (at most {CONCAVITY_MAX_M * 1000:g} mm); the simulator collides with the hull, a "
                    "solid the object does not have: decompose it into convex parts (e.g. CoACD) and list each",
                    cause="collision_parts",
                )
        if fills:
            figs[asset.name] = {"min_fill": min(fills), "max_concavity_mm": max(conc)}
    return figs
