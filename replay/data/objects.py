"""Object asset loaders: GRAB (object_sim MJCF), TACO (.obj + CoACD), HUG-Bench (sim_assets).

Each loader returns a :class:`~replay.data.types.ObjectAsset` whose meshes are
in the object frame (metres) that the dataset's poses refer to.

* GRAB: ``grab/objects/<name>/object.xml`` (MuJoCo model from
  github.com/vikashplus/object_sim). It includes ``../common.xml`` (default
  classes), ``assets.xml`` (mesh declarations with upstream paths such as
  ``../object_sim/mug/mug.stl``, resolved here to the file of the same name
  beside ``object.xml``) and ``body.xml`` (geoms). Collision parts are the mesh
  geoms of default class ``object_col`` (the ``contact*.stl`` convex parts);
  density, friction and condim are read from the resolved geom attributes
  (defaults + overrides), not assumed. The recordings pose the *mesh files'*
  frame: the one mesh geom pose in object_sim (toothpaste, ``euler="1.57 0 0"``
  on both its visual and contact geoms) is upstream's presentation choice and
  is ignored by default (``apply_geom_pose=False``). Evidence (toothpaste_lift,
  frames 244-1444 every 50): median distance of the 3 nearest fingertip
  landmarks to the mesh surface 5.5 mm without the euler, 13.4 mm with it
  (12.5 mm with -1.57); resting bottom 2.3 mm above the table without it.
  Meshes with a ``scale`` (none in object_sim) or several visual meshes (the
  knife's blade and handle) are baked into single meshes in the cache
  (:mod:`replay.data.cache`) so that consumers only read files. Primitive
  decoration geoms (box/cylinder/ellipsoid caps, buttons) are not part of the
  asset: they are neither ``object_col`` parts nor meshes; their names are
  listed by :func:`grab_object_info`.
  The ``<body pos="0 0 0.05">`` in ``object.xml`` only places the object in
  upstream's stand-alone scene and is ignored: recordings pose the mesh origin.
* TACO: a decimated, non-watertight ``.obj`` with no convex decomposition; one
  is made with CoACD (:func:`convex_decomposition`) and cached by the mesh's
  SHA-256 and the CoACD settings.
* HUG-Bench: ``sim_assets/`` with ``visual.obj``, CoACD convex parts and
  ``properties.json`` (``world_position``: the object centre in the scene's
  Z-up world frame; meshes are world-aligned, so the object frame is the mesh
  frame translated to ``world_position``).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from replay.data.cache import cache_dir, sha256_text
from replay.data.mesh_checks import check_collision_part
from replay.data.mesh_io import load_mesh
from replay.data.types import ObjectAsset
from replay.errors import DataError
from replay.fileio import atomic_write_bytes, sha256_file

#: MuJoCo's built-in geom defaults (MuJoCo XML reference, ``geom`` element).
_MJ_GEOM_DEFAULTS = {"type": "sphere", "density": "1000", "friction": "1 0.005 0.0001", "condim": "3"}

#: TACO/HUG objects: no material data in the datasets. 1250 kg/m^3 is the
#: density object_sim gives every GRAB object (common.xml, class object_col);
#: the same value keeps masses comparable across datasets.
DEFAULT_DENSITY = 1250.0
DEFAULT_FRICTION = (1.0, 0.5, 0.01)
DEFAULT_CONDIM = 4

#: CoACD settings for TACO meshes, chosen on the two mirror meshes (1000
#: vertices, not watertight) by the hull-gap metric of
#: :mod:`replay.checks.object_frame` (median / p90 / max mm, 3000 samples):
#: with CoACD's manifold pre-processing on (resolution 20) 2.9/7.5/10.4 and
#: 3.6/6.1/10.8 mm and parts reaching 1.5-2 mm below the mesh's lowest point
#: (the voxel remesh inflates the shape); resolution 40: 1.7/4.9/6.8 and
#: 2.7/5.8/8.5 mm at 1.5-2x the time; pre-processing off: 0.56/3.0/6.1 and
#: 2.1/5.6/10.5 mm, no part below the mesh, and the fastest (~6-17 s on a shared
#: core). threshold 0.05 is CoACD's default concavity tolerance; 12 parts max.
COACD_SETTINGS = {
    "threshold": 0.05,
    "max_convex_hull": 12,
    "preprocess_mode": "off",
    "preprocess_resolution": 20,
    "resolution": 500,
    "mcts_nodes": 10,
    "mcts_iterations": 30,
    "mcts_max_depth": 2,
    "seed": 0,
}


# --------------------------------------------------------------------------- meshes


def asset_meshes(asset: ObjectAsset) -> tuple[trimesh.Trimesh, list[trimesh.Trimesh]]:
    """Load an asset's visual mesh and its collision parts (object frame, m)."""
    visual = load_mesh(asset.visual_mesh, "visual_mesh", asset.source)
    parts = [load_mesh(p, f"collision_meshes[{i}]", asset.source) for i, p in enumerate(asset.collision_meshes)]
    return visual, parts


def collision_volume(asset: ObjectAsset) -> float:
    """Sum of the convex-hull volumes of the collision parts, m^3.

    This is the volume a MuJoCo-style simulator multiplies by ``density`` (it
    computes each geom's mass separately, so overlapping parts count twice).
    """
    _, parts = asset_meshes(asset)
    return float(sum(p.convex_hull.volume for p in parts))


def asset_mass(asset: ObjectAsset) -> float:
    """``asset.mass`` if set, else ``density * collision_volume``, kg."""
    if asset.mass is not None:
        return float(asset.mass)
    return float(asset.density * collision_volume(asset))


def _bake(meshes: list[trimesh.Trimesh], key: str, name: str, sub: str) -> Path:
    """Concatenate ``meshes`` and write them once to the cache as STL; return the path."""
    out = cache_dir(sub) / f"{name}-{key[:16]}.stl"
    if not out.is_file():
        merged = trimesh.util.concatenate(meshes) if len(meshes) > 1 else meshes[0]
        atomic_write_bytes(out, trimesh.exchange.stl.export_stl(merged))
    return out


# --------------------------------------------------------------------------- GRAB (MJCF)


@dataclass
class _Geom:
    attrs: dict[str, str]
    mesh_file: Path | None
    mesh_scale: np.ndarray | None
    cls: str


@dataclass
class GrabObjectInfo:
    """What :func:`grab_object_info` read from an object_sim model (for provenance/tests)."""

    name: str
    xml: Path
    visual_files: list[Path]
    collision_files: list[Path]
    transformed: list[str] = field(default_factory=list)
    primitives: list[str] = field(default_factory=list)
    density: float = 0.0
    friction: tuple[float, float, float] = (0.0, 0.0, 0.0)
    condim: int = 0
    geoms: tuple = field(default=(), repr=False)  # (visual _Geoms, collision _Geoms, angle in degrees?)


def _parse_xml(path: Path) -> ET.Element:
    if not path.is_file():
        raise DataError(path, None, "MJCF file not found")
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise DataError(path, None, f"invalid XML: {exc}") from None


def _expand_includes(elem: ET.Element, base: Path, depth: int = 0) -> None:
    """Replace each ``<include file=...>`` under ``elem`` by the included root's children (in place)."""
    if depth > 8:
        raise DataError(base, "include", "include nesting deeper than 8")
    for i, child in enumerate(list(elem)):
        if child.tag == "include":
            inc = (base / child.get("file", "")).resolve()
            root = _parse_xml(inc)
            _expand_includes(root, inc.parent, depth + 1)
            elem.remove(child)
            for j, sub in enumerate(list(root)):
                elem.insert(i + j, sub)
            # indices shift: restart on the expanded element
            return _expand_includes(elem, base, depth)
        _expand_includes(child, base, depth)
    return None


def _collect_defaults(root: ET.Element) -> dict[str, dict[str, str]]:
    """Map default class name -> resolved geom attributes (inheritance applied)."""
    classes: dict[str, dict[str, str]] = {}

    def walk(node: ET.Element, inherited: dict[str, str], name: str) -> None:
        attrs = dict(inherited)
        for g in node.findall("geom"):
            attrs.update(g.attrib)
        classes[name] = attrs
        for sub in node.findall("default"):
            walk(sub, attrs, sub.get("class", name))

    base = dict(_MJ_GEOM_DEFAULTS)
    tops = root.findall("default")
    classes["main"] = dict(base)
    for top in tops:
        walk(top, base, top.get("class", "main"))
    return classes


def _geom_transform(attrs: dict[str, str], angle_deg: bool, source: Path, name: str) -> np.ndarray | None:
    """4x4 geom pose in its body, or None for identity. MuJoCo quat is wxyz."""
    T = np.eye(4)
    if "pos" in attrs:
        T[:3, 3] = np.array(attrs["pos"].split(), float)
    if "quat" in attrs:
        wxyz = np.array(attrs["quat"].split(), float)
        T[:3, :3] = Rotation.from_quat(wxyz, scalar_first=True).as_matrix()
    if "euler" in attrs:
        e = np.array(attrs["euler"].split(), float)
        if angle_deg:
            e = np.deg2rad(e)
        # MuJoCo's default eulerseq "xyz" (lower case) rotates about moving axes,
        # which is scipy's intrinsic "XYZ".
        T[:3, :3] = Rotation.from_euler("XYZ", e).as_matrix()
    for unsupported in ("axisangle", "xyaxes", "zaxis", "fromto"):
        if unsupported in attrs:
            raise DataError(source, f"geom[{name}].{unsupported}", "orientation attribute not supported")
    return None if np.allclose(T, np.eye(4)) else T


def grab_object_info(object_dir: str | Path) -> GrabObjectInfo:
    """Parse ``<object_dir>/object.xml`` (with includes and default classes).

    Raises:
        DataError: missing/invalid XML, a mesh file that cannot be resolved beside
            ``object.xml``, no collision geom, or collision geoms that disagree on
            density/friction/condim.
    """
    object_dir = Path(object_dir)
    xml = object_dir / "object.xml"
    root = _parse_xml(xml)
    _expand_includes(root, object_dir)
    # MuJoCo merges every <compiler> element (object.xml's and the included common.xml's);
    # a later attribute overrides an earlier one. Default angle unit: degree.
    angle = "degree"
    for comp in root.iter("compiler"):
        angle = comp.get("angle", angle)
    angle_deg = angle != "radian"
    classes = _collect_defaults(root)

    meshes: dict[str, tuple[Path, np.ndarray | None]] = {}
    for asset in root.findall("asset"):
        for m in asset.findall("mesh"):
            mname = m.get("name") or Path(m.get("file", "")).stem
            file = m.get("file")
            if not file:
                raise DataError(object_dir / "assets.xml", f"mesh[{mname}].file", "mesh without a file")
            local = object_dir / Path(file).name  # upstream path -> the file beside object.xml
            if not local.is_file():
                raise DataError(object_dir / "assets.xml", f"mesh[{mname}].file",
                                f"{file!r} resolves to {local}, which does not exist")
            scale = np.array(m.get("scale").split(), float) if m.get("scale") else None
            meshes[mname] = (local, scale)

    bodies = [b for w in root.findall("worldbody") for b in w.findall("body")]
    body = next((b for b in bodies if b.get("name") == "object"), bodies[0] if bodies else None)
    if body is None:
        raise DataError(xml, "worldbody.body", "no object body")
    childclass = body.get("childclass", "main")

    geoms: list[_Geom] = []
    primitives: list[str] = []
    for i, g in enumerate(body.iter("geom")):
        cls = g.get("class", childclass)
        if cls not in classes:
            raise DataError(xml, f"geom[{g.get('name', i)}].class", f"unknown default class {cls!r}")
        attrs = dict(classes[cls])
        attrs.update(g.attrib)
        gname = attrs.get("name", f"geom{i}")
        attrs["name"] = gname
        if attrs.get("type") == "mesh":
            mname = attrs.get("mesh")
            if mname not in meshes:
                raise DataError(object_dir / "body.xml", f"geom[{gname}].mesh", f"mesh {mname!r} not declared in assets.xml")
            f, s = meshes[mname]
            geoms.append(_Geom(attrs, f, s, cls))
        else:
            primitives.append(f"{gname} ({attrs.get('type')})")

    col = [g for g in geoms if g.cls == "object_col"]
    vis = [g for g in geoms if g.cls != "object_col"]
    name = object_dir.name
    if not col:
        raise DataError(xml, "object_col", "no collision geom of class object_col")
    if not vis:
        raise DataError(xml, "visual", "no visual mesh geom")

    def one(key: str, conv):
        vals = {g.attrs.get(key) for g in col}
        if len(vals) != 1:
            raise DataError(xml, f"geom.{key}", f"collision parts disagree: {sorted(map(str, vals))}")
        return conv(vals.pop())

    info = GrabObjectInfo(
        name=name, xml=xml,
        visual_files=[g.mesh_file for g in vis], collision_files=[g.mesh_file for g in col],
        primitives=primitives,
        density=one("density", float),
        friction=one("friction", lambda s: tuple(float(x) for x in s.split())),
        condim=one("condim", int),
        geoms=(vis, col, angle_deg),
    )
    for g in geoms:
        if _geom_transform(g.attrs, angle_deg, xml, g.attrs["name"]) is not None or g.mesh_scale is not None:
            info.transformed.append(g.attrs["name"])
    return info


def _baked_geom_mesh(g: _Geom, angle_deg: bool, xml: Path) -> trimesh.Trimesh:
    mesh = load_mesh(g.mesh_file, f"geom[{g.attrs['name']}].mesh", xml)
    if g.mesh_scale is not None:
        mesh.apply_scale(g.mesh_scale)
    T = _geom_transform(g.attrs, angle_deg, xml, g.attrs["name"])
    if T is not None:
        mesh.apply_transform(T)
    return mesh


def _strip_pose(g: _Geom) -> _Geom:
    attrs = {k: v for k, v in g.attrs.items() if k not in ("pos", "quat", "euler")}
    return _Geom(attrs, g.mesh_file, g.mesh_scale, g.cls)


def _geom_key(g: _Geom) -> str:
    pose = {k: g.attrs.get(k) for k in ("pos", "quat", "euler")}
    return sha256_text(sha256_file(g.mesh_file), repr(pose), repr(None if g.mesh_scale is None else g.mesh_scale.tolist()))


def load_grab_object(object_dir: str | Path, apply_geom_pose: bool = False) -> ObjectAsset:
    """ObjectAsset for one object_sim model folder (``grab/objects/<name>``).

    Collision meshes are the ``object_col`` mesh geoms (``contact*.stl``),
    density/friction/condim come from the resolved MJCF attributes (object_sim:
    1250 kg/m^3, "1 0.5 0.01", 4). Meshes with a geom pose/scale, or several
    visual meshes, are baked into the cache (module doc). ``mass`` is None: the
    simulator derives it from density and the collision volume.

    Raises:
        DataError: see :func:`grab_object_info`; a missing mesh file names
            ``assets.xml`` and the mesh; a degenerate collision part (flat, too few
            vertices: :func:`replay.data.mesh_checks.check_collision_part`) names the part file.

    Args:
        object_dir: ``grab/objects/<name>``.
        apply_geom_pose: bake MJCF geom ``pos/quat/euler`` into the meshes. False
            (default): the recordings' object poses refer to the raw mesh frame
            (module doc gives the measurement).
    """
    info = grab_object_info(object_dir)
    vis, col, angle_deg = info.geoms
    if not apply_geom_pose:
        vis = [_strip_pose(g) for g in vis]
        col = [_strip_pose(g) for g in col]

    def needs_bake(g: _Geom) -> bool:
        return g.mesh_scale is not None or _geom_transform(g.attrs, angle_deg, info.xml, g.attrs["name"]) is not None

    if len(vis) == 1 and not needs_bake(vis[0]):
        visual = vis[0].mesh_file
    else:
        key = sha256_text(*[_geom_key(g) for g in vis])
        visual = _bake([_baked_geom_mesh(g, angle_deg, info.xml) for g in vis], key, f"{info.name}_visual", "grab")
    collision: list[Path] = []
    for g in col:
        if needs_bake(g):
            collision.append(_bake([_baked_geom_mesh(g, angle_deg, info.xml)], _geom_key(g),
                                   f"{info.name}_{g.attrs['name']}", "grab"))
        else:
            collision.append(g.mesh_file)
    for g, part in zip(col, collision):  # a flat or too-small part is named before any scene uses it
        check_collision_part(part, f"geom[{g.attrs['name']}].mesh")
    return ObjectAsset(
        name=info.name, visual_mesh=visual, collision_meshes=collision,
        density=info.density, mass=None, friction=info.friction, condim=info.condim, source=info.xml,
    )


# --------------------------------------------------------------------------- CoACD (TACO)


#: Wall-clock limit of one CoACD run, s. Measured: 6-17 s per TACO mirror mesh (1000 vertices)
#: on a shared core with :data:`COACD_SETTINGS`; 300 s leaves a 20x margin for larger meshes
#: and stops a hung decomposition.
COACD_TIMEOUT_S = 300.0


def _run_coacd(vertices: np.ndarray, faces: np.ndarray, settings: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """``coacd.run_coacd`` on (V, 3) m vertices and (F, 3) int faces -> [(vertices, faces)] per part.
    Runs in a child process (:func:`replay.data.isolate.call_isolated`): CoACD can segfault."""
    import coacd

    coacd.set_log_level("error")
    parts = coacd.run_coacd(coacd.Mesh(vertices, faces), **settings)
    return [(np.asarray(v, float), np.asarray(f, np.int64)) for v, f in parts]


def convex_decomposition(mesh_path: str | Path, settings: dict | None = None, sub: str = "coacd") -> list[Path]:
    """Convex parts of a mesh from CoACD, cached on disk.

    The cache key is the SHA-256 of the mesh file plus the settings, so the
    parts are recomputed only when either changes. Parts are written as STL to
    ``cache_dir(sub)/<stem>-<key>/part_XX.stl`` (atomic writes; a ``done``
    marker is written last so an interrupted run is recomputed).

    Args:
        mesh_path: source mesh (object frame, m).
        settings: keyword arguments for ``coacd.run_coacd`` (default :data:`COACD_SETTINGS`).

    Returns:
        Paths of the convex parts (at least one).

    Raises:
        DataError: the mesh cannot be read; CoACD crashed (it runs in a child process,
            :func:`replay.data.isolate.call_isolated`; the signal is named), ran past
            :data:`COACD_TIMEOUT_S`, or returned no part; a part is degenerate
            (:func:`replay.data.mesh_checks.check_collision_part`).
    """
    import coacd

    mesh_path = Path(mesh_path)
    settings = dict(COACD_SETTINGS if settings is None else settings)
    mesh = load_mesh(mesh_path, "mesh")
    key = sha256_text(sha256_file(mesh_path), json.dumps(settings, sort_keys=True), f"coacd-{coacd.__version__ if hasattr(coacd, '__version__') else '1'}")
    out = cache_dir(sub) / f"{mesh_path.stem}-{key[:16]}"
    done = out / "done"
    if done.is_file():
        parts = sorted(out.glob("part_*.stl"))
        if parts:
            return parts
    from replay.data.isolate import call_isolated

    result = call_isolated(
        _run_coacd, np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64), settings,
        timeout_s=COACD_TIMEOUT_S, what="CoACD convex decomposition", path=mesh_path, field="mesh",
        advice="this recording is skipped; repair the mesh (one closed, non-self-intersecting surface) "
               "or supply convex collision parts",
    )
    if not result:
        raise DataError(mesh_path, "mesh", "CoACD returned no convex part")
    paths = []
    for i, (v, f) in enumerate(result):
        part = trimesh.Trimesh(v, f, process=True)
        paths.append(atomic_write_bytes(out / f"part_{i:02d}.stl", trimesh.exchange.stl.export_stl(part)))
    atomic_write_bytes(done, json.dumps({"source": str(mesh_path), "settings": settings, "parts": len(paths)}).encode())
    return paths


def load_taco_object(obj_path: str | Path, name: str | None = None, settings: dict | None = None) -> ObjectAsset:
    """ObjectAsset for a TACO ``<seq>.obj`` (object frame = the .obj's frame, m).

    TACO gives no material data: density :data:`DEFAULT_DENSITY`, friction
    :data:`DEFAULT_FRICTION`, condim :data:`DEFAULT_CONDIM` (object_sim's values).
    Collision parts come from :func:`convex_decomposition` (cached).

    Raises:
        DataError: missing or unreadable mesh.
    """
    obj_path = Path(obj_path)
    load_mesh(obj_path, "mesh")
    parts = convex_decomposition(obj_path, settings, sub="coacd/taco")
    return ObjectAsset(
        name=name or obj_path.stem, visual_mesh=obj_path, collision_meshes=parts,
        density=DEFAULT_DENSITY, mass=None, friction=DEFAULT_FRICTION, condim=DEFAULT_CONDIM, source=obj_path,
    )


# --------------------------------------------------------------------------- HUG-Bench


_PART_RE = re.compile(r"(coacd|convex|part|collision|decomp|hull)", re.I)


def hug_collision_files(sim_assets: Path) -> list[Path]:
    """Convex collision parts in a HUG ``sim_assets`` folder.

    HUG-Bench's public description says only "a CoACD convex decomposition"; the
    part files are recognised as every mesh (``.obj``/``.stl``/``.ply``) other
    than ``visual.obj`` whose path (file or sub-folder name) mentions coacd,
    convex, part, collision, decomp or hull; sorted by name.
    """
    out = []
    for p in sorted(sim_assets.rglob("*")):
        if p.suffix.lower() not in (".obj", ".stl", ".ply") or p.name == "visual.obj":
            continue
        if _PART_RE.search(str(p.relative_to(sim_assets))):
            out.append(p)
    return out


def load_hug_object(sim_assets: str | Path, name: str | None = None) -> tuple[ObjectAsset, np.ndarray]:
    """ObjectAsset and world position for one HUG-Bench ``<object>/sim_assets`` folder.

    The meshes are world-aligned and metric, with no orientation given. The
    object frame is taken as the mesh frame; the returned ``world_position``
    (3,) m, from ``properties.json``, is documented as the object's centre in the
    scene's world frame. If the mesh is already placed in world coordinates
    (its centre already equals ``world_position``) the adapter must not add it
    again; :func:`hug_object_pose` decides which case applies.

    Raises:
        DataError: missing ``visual.obj``, ``properties.json`` or ``world_position``,
            malformed values, or no convex part.
    """
    sim_assets = Path(sim_assets)
    name = name or sim_assets.parent.name
    visual = sim_assets / "visual.obj"
    load_mesh(visual, "visual.obj")
    props_path = sim_assets / "properties.json"
    if not props_path.is_file():
        raise DataError(props_path, None, "properties.json not found")
    try:
        props = json.loads(props_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(props_path, None, f"invalid JSON: {exc}") from None
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
        name=name, visual_mesh=visual, collision_meshes=parts, density=density,
        mass=None if mass is None else float(mass), friction=DEFAULT_FRICTION, condim=DEFAULT_CONDIM,
        source=props_path,
    )
    return asset, wp


def hug_object_pose(asset: ObjectAsset, world_position: np.ndarray) -> tuple[np.ndarray, str]:
    """World position of the object frame for a HUG asset, and which reading was used.

    ``world_position`` is the object's centre. If the visual mesh's bounding-box
    centre is already within 1 cm of it the mesh is in world coordinates and the
    object frame sits at the world origin (``"mesh_in_world"``); otherwise the mesh
    is centred on its own origin and is translated to ``world_position -
    mesh_centre`` (``"mesh_local"``).
    """
    mesh = load_mesh(asset.visual_mesh, "visual_mesh", asset.source)
    centre = mesh.bounds.mean(axis=0)
    if np.linalg.norm(centre - world_position) < 0.01:
        return np.zeros(3), "mesh_in_world"
    return np.asarray(world_position, float) - centre, "mesh_local"
