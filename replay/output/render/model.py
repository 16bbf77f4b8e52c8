"""The render-only MuJoCo model: one mocap body per saved body, the support as simulated; saved poses set into it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import mujoco
import numpy as np
import trimesh

from replay.errors import DataError
from replay.output.render.clip import PoseTrack, SceneObject, Support
from replay.output.render.style import FOVY_DEG, SKIN_RGBA, TABLE_RGBA, VISIBLE_GROUPS
from replay.sim.scene_spec import support_box


@dataclass
class _HandGeom:
    body: str
    type: int
    size: np.ndarray
    pos: np.ndarray
    quat: np.ndarray  # wxyz, in the body frame
    mesh: tuple[np.ndarray, np.ndarray] | None  # (V,3) verts, (T,3) faces in the geom frame


@lru_cache(maxsize=8)
def _hand_visual(mjcf: str) -> tuple[tuple[str, ...], tuple[_HandGeom, ...]]:
    """(body names, visible geoms in their body frames) of a hand MJCF, read from the compiled model (default
    classes, ``fromto`` capsules and mesh re-centring resolved as for the simulation). Raises DataError."""
    try:
        m = mujoco.MjModel.from_xml_path(mjcf)
    except Exception as exc:  # noqa: BLE001
        raise DataError(mjcf, None, f"MuJoCo cannot load the hand MJCF: {exc}") from None
    bodies = tuple(m.body(i).name for i in range(1, m.nbody))
    geoms = []
    for g in range(m.ngeom):
        if int(m.geom_group[g]) not in VISIBLE_GROUPS or m.geom_rgba[g, 3] == 0:
            continue
        body = m.body(int(m.geom_bodyid[g])).name
        if not body:  # world geoms (none in manosim) are not part of the hand
            continue
        mesh = None
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            k = int(m.geom_dataid[g])
            va, vn = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
            fa, fn = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
            mesh = (m.mesh_vert[va : va + vn].astype(np.float64).copy(), m.mesh_face[fa : fa + fn].copy())
        geoms.append(
            _HandGeom(
                body, int(m.geom_type[g]), m.geom_size[g].copy(), m.geom_pos[g].copy(), m.geom_quat[g].copy(), mesh
            )
        )
    return bodies, tuple(geoms)


@lru_cache(maxsize=64)
def _load_mesh(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V, 3) m and triangles (T, 3) of a visual mesh file (trimesh)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(p, None, "object visual mesh not found")
    try:
        mesh = trimesh.load(p, force="mesh", process=False)
    except Exception as exc:  # noqa: BLE001
        raise DataError(p, None, f"cannot read the mesh: {exc}") from None
    v = np.asarray(mesh.vertices, dtype=np.float64)
    f = np.asarray(mesh.faces, dtype=np.int32)
    if v.shape[0] < 4 or f.shape[0] < 1 or not np.all(np.isfinite(v)):
        raise DataError(p, None, f"mesh is empty or non-finite ({v.shape[0]} vertices, {f.shape[0]} faces)")
    return v, f


def build_render_model(
    hand_mjcf: str | Path | None,
    objects: Sequence[SceneObject],
    support: Support | None,
    *,
    size: tuple[int, int],
) -> mujoco.MjModel:
    """A render-only MuJoCo model: one mocap body per drawn body (hand bodies first, MJCF order, then ``objects``,
    each named ``obj.body``; :func:`mocap_index`), no joints, no contacts; the hand's visible geoms skin coloured
    (``hand_mjcf`` None: no hand), ``support`` a table-top box and floor or a plane (None: none), ``size`` (W, H) px.
    Raises DataError: unreadable hand MJCF or object mesh."""
    spec = mujoco.MjSpec()
    spec.modelname = "replay_render"
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    _set_visual(spec, int(size[0]), int(size[1]))
    if support is not None:
        _add_support(spec, support)
    if hand_mjcf is not None:
        _add_hand(spec, Path(hand_mjcf))
    for j, obj in enumerate(objects):
        v, f = _load_mesh(str(Path(obj.mesh).resolve()) if Path(obj.mesh).exists() else str(obj.mesh))
        mname = _add_mesh(spec, f"obj_mesh_{j}", v, f)
        b = spec.worldbody.add_body(name=obj.body, mocap=True, mass=1e-3, inertia=[1e-6, 1e-6, 1e-6])
        b.add_geom(
            type=mujoco.mjtGeom.mjGEOM_MESH, meshname=mname, rgba=list(obj.rgba), contype=0, conaffinity=0, group=0
        )
    try:
        return spec.compile()
    except Exception as exc:  # noqa: BLE001
        raise DataError(hand_mjcf, None, f"could not build the render model: {exc}") from None


def _add_mesh(spec: mujoco.MjSpec, name: str, v: np.ndarray, f: np.ndarray) -> str:
    """Add a mesh of vertices (V, 3) m and triangles (T, 3) as ``name``; returns ``name``."""
    spec.add_mesh(
        name=name,
        uservert=v.ravel().tolist(),
        userface=f.ravel().tolist(),
        inertia=mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL,
    )
    return name


def _set_visual(spec: mujoco.MjSpec, w: int, h: int) -> None:
    """Offscreen buffer (``w`` x ``h`` px, at least 64), camera, light and sky of the render model."""
    spec.visual.global_.offwidth = max(w, 64)
    spec.visual.global_.offheight = max(h, 64)
    spec.visual.global_.fovy = FOVY_DEG
    spec.visual.quality.offsamples = 0  # MSAA costs ~2x on llvmpipe
    spec.visual.quality.shadowsize = 0
    spec.visual.map.znear = 0.005
    spec.visual.map.zfar = 60.0
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.55, 0.55, 0.55]
    spec.visual.headlight.specular = [0.1, 0.1, 0.1]
    spec.stat.extent = 1.0
    spec.stat.center = [0.0, 0.0, 0.0]
    spec.worldbody.add_light(
        name="key",
        type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
        dir=[0.3, 0.4, -1.0],
        diffuse=[0.45, 0.45, 0.45],
        specular=[0.15, 0.15, 0.15],
        castshadow=False,
    )
    spec.add_texture(
        name="sky",
        type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
        rgb1=[0.78, 0.84, 0.92],
        rgb2=[0.35, 0.38, 0.45],
        width=64,
        height=64,
    )


def _add_support(spec: mujoco.MjSpec, sup: Support) -> None:
    """The support as simulated: a plane at ``sup.height``, or the table-top box over a floor."""
    world = spec.worldbody
    spec.add_texture(
        name="grid",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        rgb1=[0.62, 0.60, 0.57],
        rgb2=[0.52, 0.50, 0.47],
        width=64,
        height=64,
    )
    mat = spec.add_material(name="grid", texrepeat=[20, 20], reflectance=0.0)
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
    if sup.table_top_xy is None:
        world.add_geom(
            name="support",
            type=mujoco.mjtGeom.mjGEOM_PLANE,
            size=[2.0, 2.0, 0.05],
            pos=[0, 0, float(sup.height)],
            material="grid",
            contype=0,
            conaffinity=0,
        )
        return
    centre, half = support_box(sup.height, sup.table_top_xy, sup.thickness)  # the simulated box, over a floor
    world.add_geom(
        name="support",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=list(half),
        pos=list(centre),
        rgba=list(TABLE_RGBA),
        contype=0,
        conaffinity=0,
    )
    world.add_geom(
        name="floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[3.0, 3.0, 0.05],
        pos=[centre[0], centre[1], float(sup.floor_z)],
        material="grid",
        contype=0,
        conaffinity=0,
    )


def _add_hand(spec: mujoco.MjSpec, hand_path: Path) -> None:
    """One mocap body per hand body of the MJCF with its visible geoms, skin coloured. Raises DataError: the MJCF
    missing or unloadable."""
    if not hand_path.is_file():
        raise DataError(hand_path, None, "hand MJCF not found")
    bodies, geoms = _hand_visual(str(hand_path.resolve()))
    body_specs = {}
    for b in bodies:
        body_specs[b] = spec.worldbody.add_body(name=b, mocap=True, mass=1e-3, inertia=[1e-6, 1e-6, 1e-6])
    for i, g in enumerate(geoms):
        kw = dict(
            type=mujoco.mjtGeom(g.type),
            size=g.size.tolist(),
            pos=g.pos.tolist(),
            quat=g.quat.tolist(),
            rgba=list(SKIN_RGBA),
            contype=0,
            conaffinity=0,
            group=0,
        )
        if g.mesh is not None:
            kw["meshname"] = _add_mesh(spec, f"hand_mesh_{i}", *g.mesh)
        body_specs[g.body].add_geom(**kw)


def mocap_index(model: mujoco.MjModel, track: PoseTrack) -> tuple[np.ndarray, np.ndarray]:
    """(mocap ids (K,), track columns (K,)) of every mocap body of the render model. Raises DataError: a drawn body
    has no saved pose."""
    mids, cols = [], []
    for b in range(1, model.nbody):
        mid = int(model.body_mocapid[b])
        if mid < 0:
            continue
        mids.append(mid)
        cols.append(track.index(model.body(b).name))
    return np.asarray(mids, dtype=np.int64), np.asarray(cols, dtype=np.int64)


def apply_poses(
    model: mujoco.MjModel, data: mujoco.MjData, track: PoseTrack, *, frame: int, mids: np.ndarray, cols: np.ndarray
) -> None:
    """The mocap bodies at ``track``'s poses of ``frame`` (xyzw to MuJoCo's wxyz), then ``mj_kinematics``."""
    data.mocap_pos[mids] = track.body_pos[frame, cols]
    data.mocap_quat[mids] = track.body_quat[frame, cols][:, [3, 0, 1, 2]]
    mujoco.mj_kinematics(model, data)
