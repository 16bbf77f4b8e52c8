"""The object's visual mesh geoms as its ``object.xml`` writes them: the physics choice ``object_visual_geoms``
(docs/physics.md; ``inert`` leaves them out). Mass properties are MuJoCo's own (Newton's mesh integral differs).
Units m, kg/m^3, object frame."""

from __future__ import annotations

from pathlib import Path

import mujoco
import newton
import numpy as np
import warp as wp
from scipy.spatial.transform import Rotation

from replay.data.mesh_io import load_mesh
from replay.data.object_mjcf import grab_object_info
from replay.data.types import ObjectAsset

#: the Newton shape label of the k-th visual geom (``object_visual0``, ...; collision parts: ``object_part<k>``)
VISUAL_LABEL = "object_visual"


def written_visual_geoms(asset: ObjectAsset) -> list[dict]:
    """``[{"name", "mesh": Path, "density" kg/m^3, "friction" (3,), "condim", "margin" m, "collides"}]`` of the asset's
    ``object.xml`` visual geoms (default classes resolved); ``[]`` without one. Raises DataError: it does not parse."""
    src = Path(asset.source) if asset.source is not None else None
    if src is None or src.name != "object.xml":
        return []
    vis, _, _ = grab_object_info(src.parent).geoms
    out = []
    for g in vis:
        a = g.attrs
        collides = int(a.get("contype", 1)) != 0 or int(a.get("conaffinity", 1)) != 0
        out.append(
            {
                "name": a["name"],
                "mesh": g.mesh_file,
                "scale": g.mesh_scale,
                "density": float(a["density"]),
                "friction": tuple(float(x) for x in a["friction"].split()),
                "condim": int(a["condim"]),
                "margin": float(a["margin"]),
                "collides": collides,
            }
        )
    return out


def add_written_visual(builder: newton.ModelBuilder, body: int, asset: ObjectAsset, *, gap: float) -> list[int]:
    """Add the asset's written visual geoms to ``body`` as mesh shapes that weigh and collide where the file lets them;
    ``gap`` m. Returns the new shape indices. Raises DataError: a mesh file missing or unreadable."""
    shapes = []
    for k, g in enumerate(written_visual_geoms(asset)):
        mesh = load_mesh(g["mesh"], f"geom[{g['name']}].mesh", asset.source)
        v = np.asarray(mesh.vertices, np.float64) * (1.0 if g["scale"] is None else np.asarray(g["scale"], float))
        cfg = newton.ModelBuilder.ShapeConfig(
            density=0.0,
            mu=g["friction"][0],
            mu_torsional=g["friction"][1],
            mu_rolling=g["friction"][2],
            margin=g["margin"],
            gap=float(gap),
        )
        if not g["collides"]:
            cfg.has_shape_collision = False
            cfg.has_particle_collision = False
        s = builder.add_shape_mesh(
            body,
            mesh=newton.Mesh(v.astype(np.float32), np.asarray(mesh.faces).reshape(-1)),
            cfg=cfg,
            label=f"{VISUAL_LABEL}{k}",
            custom_attributes={"mujoco:condim": g["condim"]},
        )
        shapes.append(s)
        _add_mass(builder, body, *mujoco_mass_properties(g["mesh"], g["density"], g["scale"]))
    return shapes


def mujoco_mass_properties(mesh: Path, density: float, scale=None) -> tuple[float, np.ndarray, np.ndarray]:
    """``(mass kg, com (3,) m, inertia (3, 3) kg m^2 about the com)``, mesh file frame, of a mesh geom of ``density``
    kg/m^3 as MuJoCo's compile gives it."""
    sc = "" if scale is None else f' scale="{" ".join(str(float(x)) for x in scale)}"'
    spec = (
        f'<mujoco><asset><mesh name="v" file="{Path(mesh).resolve()}"{sc}/></asset><worldbody><body><freejoint/>'
        f'<geom type="mesh" mesh="v" density="{float(density)!r}"/></body></worldbody></mujoco>'
    )
    m = mujoco.MjModel.from_xml_string(spec)
    w, x, y, z = m.body_iquat[1]  # MuJoCo wxyz
    rot = Rotation.from_quat([x, y, z, w]).as_matrix()
    return float(m.body_mass[1]), np.array(m.body_ipos[1], float), rot @ np.diag(m.body_inertia[1]) @ rot.T


def _add_mass(builder: newton.ModelBuilder, body: int, mass: float, com: np.ndarray, inertia: np.ndarray) -> None:
    """Add a part of ``mass`` kg at ``com`` (3,) m with ``inertia`` (3, 3) to ``body`` (body frame; parallel axis)."""
    m0, c0 = float(builder.body_mass[body]), np.array(builder.body_com[body], float)
    i0 = np.array(builder.body_inertia[body], float).reshape(3, 3)
    total = m0 + mass
    c = (m0 * c0 + mass * com) / total

    def shift(mm, d):
        return mm * (float(d @ d) * np.eye(3) - np.outer(d, d))

    inertia_new = i0 + shift(m0, c0 - c) + inertia + shift(mass, com - c)
    builder.body_mass[body] = total
    builder.body_inv_mass[body] = 1.0 / total
    builder.body_com[body] = wp.vec3(*map(float, c))
    builder.body_inertia[body] = wp.mat33(*map(float, inertia_new.ravel()))
    builder.body_inv_inertia[body] = wp.mat33(*map(float, np.linalg.inv(inertia_new).ravel()))
