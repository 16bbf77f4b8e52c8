"""The object's visual mesh geoms as its file writes them: the physics choice ``object_visual_geoms``.

object_sim's ``object.xml`` (GRAB) holds, beside its ``object_col`` collision parts, one visual mesh
geom per object in class ``grab``, which sets no ``contype``/``conaffinity``/``density``: as written,
MuJoCo collides it (as its convex hull, MuJoCo's rule for mesh geoms) with MuJoCo's default contact
values (condim 3, friction 1 0.005 0.0001, margin 0) and weighs it at MuJoCo's default density,
1000 kg/m^3 (MuJoCo XML reference, ``geom``). Under ``object_visual_geoms = "inert"`` (both named
physics) the replay leaves it out; under ``"as_written"`` :func:`add_written_visual` adds each one to
the object's body as a Newton mesh shape with those contact values, and its mass and inertia as MuJoCo
computes them for that mesh geom (:func:`mujoco_mass_properties`: MuJoCo's own compile of the mesh alone;
Newton's mesh integral differs: measured on the mug, 0.62 kg for the whole object against MuJoCo's 1.26).
``tests/test_authored_reference.py`` compares the compiled models with MuJoCo's.
An asset whose file writes no visual geom (a TACO or HUG-Bench mesh: no MJCF) gets nothing added.

Units: m, kg/m^3; the meshes are in the object frame, as the collision parts.
"""

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

#: the Newton shape label of the k-th visual geom (``object_visual0``, ...): how the compiled model's
#: geoms are told apart from the collision parts (``object_part<k>``)
VISUAL_LABEL = "object_visual"


def written_visual_geoms(asset: ObjectAsset) -> list[dict]:
    """``[{"name", "mesh": Path, "density" kg/m^3, "friction" (3,), "condim", "margin" m, "collides"}]``: the
    asset's visual mesh geoms as its object_sim ``object.xml`` writes them (attributes resolved through its
    default classes over MuJoCo's own geom defaults); ``[]`` when the asset has no such file.

    Raises:
        DataError: the file does not parse (:func:`replay.data.object_mjcf.grab_object_info`).
    """
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


def add_written_visual(builder: newton.ModelBuilder, body: int, asset: ObjectAsset, gap: float) -> list[int]:
    """Add the asset's written visual geoms (:func:`written_visual_geoms`) to ``body`` as mesh shapes that
    collide (where the file lets them) and weigh; ``gap`` m: the scene's geom gap. Returns the new shape
    indices (builder), ``[]`` for an asset that writes none.

    Raises:
        DataError: a mesh file missing or unreadable (names it).
    """
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
    """``(mass kg, com (3,) m, inertia (3, 3) kg m^2 about the com)`` in the mesh file's frame of a mesh geom
    of ``density`` kg/m^3 as MuJoCo computes it (its compile of a model holding that geom alone, MuJoCo's
    default mesh inertia rule)."""
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
    """``body``'s mass properties with a part of ``mass`` kg at ``com`` (3,) m, ``inertia`` (3, 3) about it
    (body frame) added: masses summed, inertias moved to the joint centre of mass (parallel axis theorem)."""
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
