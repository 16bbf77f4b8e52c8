"""GRAB object assets: an object_sim MJCF model (``grab/objects/<name>/object.xml``) -> ObjectAsset; geom and body
poses ignored by default (``docs/data.md``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from replay.data.cache import cache_dir, sha256_text
from replay.data.confine import confined
from replay.data.limits import check_size
from replay.data.mesh_checks import check_collision_part
from replay.data.mesh_io import load_mesh
from replay.data.types import ObjectAsset
from replay.errors import DataError
from replay.fileio import atomic_write_bytes, sha256_file

#: MuJoCo's built-in geom defaults (MuJoCo XML reference, ``geom`` element).
_MJ_GEOM_DEFAULTS = {"type": "sphere", "density": "1000", "friction": "1 0.005 0.0001", "condim": "3", "margin": "0"}


def _bake(meshes: list[trimesh.Trimesh], key: str, name: str, sub: str) -> Path:
    """Concatenate ``meshes`` into a cached STL; its path."""
    out = cache_dir(sub) / f"{name}-{key[:16]}.stl"
    if not out.is_file():
        merged = trimesh.util.concatenate(meshes) if len(meshes) > 1 else meshes[0]
        atomic_write_bytes(out, trimesh.exchange.stl.export_stl(merged))
    return out


@dataclass
class _Geom:
    attrs: dict[str, str]
    mesh_file: Path | None
    mesh_scale: np.ndarray | None
    cls: str


@dataclass
class GrabObjectInfo:
    """What :func:`grab_object_info` read from an object_sim model."""

    name: str
    xml: Path
    visual_files: list[Path]
    collision_files: list[Path]
    density: float = 0.0
    friction: tuple[float, float, float] = (0.0, 0.0, 0.0)
    condim: int = 0
    margin: float = 0.0
    geoms: tuple = field(default=(), repr=False)  # (visual _Geoms, collision _Geoms, angle in degrees?)
    density_source: str = "file: object.xml"


#: include nesting depth and includes per model (a fan-out of 7 over 8 levels would expand 823,543)
MAX_INCLUDE_DEPTH = 8
MAX_INCLUDES = 64


def _parse_xml(path: Path, source: Path | None = None, field: str | None = None) -> ET.Element:
    if not path.is_file():
        raise DataError(source or path, field, f"MJCF file not found: {path}" if source else "MJCF file not found")
    check_size(path, "mjcf")
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise DataError(path, None, f"invalid XML: {exc}") from None


def _expand_includes(elem: ET.Element, base: Path, root: Path, xml: Path, count: list[int], depth: int = 0) -> None:
    """Replace each ``<include file=...>`` under ``elem`` in place by the included root's children, relative to
    ``base``, confined to ``root``. Raises DataError: too deep or too many includes (cause ``file_size``), outside
    ``root`` (``path_escape``), a missing or invalid file."""
    if depth > MAX_INCLUDE_DEPTH:
        raise DataError(xml, "include", f"include nesting deeper than {MAX_INCLUDE_DEPTH}", cause="file_size")
    for i, child in enumerate(list(elem)):
        if child.tag == "include":
            count[0] += 1
            if count[0] > MAX_INCLUDES:
                raise DataError(
                    xml,
                    "include.file",
                    f"more than {MAX_INCLUDES} includes in one model (an include "
                    "fan-out); refused before expanding them",
                    cause="file_size",
                )
            inc = confined(root, child.get("file", ""), xml, field="include.file", what="include", base=base)
            sub_root = _parse_xml(inc, xml, "include.file")
            _expand_includes(sub_root, inc.parent, root, inc, count, depth + 1)
            elem.remove(child)
            for j, sub in enumerate(list(sub_root)):
                elem.insert(i + j, sub)
            # indices shift: restart on the expanded element
            return _expand_includes(elem, base, root, xml, count, depth)
        _expand_includes(child, base, root, xml, count, depth)
    return None


def _collect_defaults(root: ET.Element, mj_defaults: bool = True) -> dict[str, dict[str, str]]:
    """Default class -> resolved geom attributes, inherited (from MuJoCo's geom defaults when ``mj_defaults``)."""
    classes: dict[str, dict[str, str]] = {}

    def walk(node: ET.Element, inherited: dict[str, str], name: str) -> None:
        attrs = dict(inherited)
        for g in node.findall("geom"):
            attrs.update(g.attrib)
        classes[name] = attrs
        for sub in node.findall("default"):
            walk(sub, attrs, sub.get("class", name))

    base = dict(_MJ_GEOM_DEFAULTS) if mj_defaults else {}
    tops = root.findall("default")
    classes["main"] = dict(base)
    for top in tops:
        walk(top, base, top.get("class", "main"))
    return classes


def _geom_transform(attrs: dict[str, str], angle_deg: bool, source: Path, name: str) -> np.ndarray | None:
    """4x4 geom pose in its body, or None for identity (MuJoCo quat wxyz)."""
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
        # MuJoCo's default eulerseq "xyz" rotates about moving axes: scipy's intrinsic "XYZ"
        T[:3, :3] = Rotation.from_euler("XYZ", e).as_matrix()
    for unsupported in ("axisangle", "xyaxes", "zaxis", "fromto"):
        if unsupported in attrs:
            raise DataError(source, f"geom[{name}].{unsupported}", "orientation attribute not supported")
    return None if np.allclose(T, np.eye(4)) else T


def _compiler_angle_deg(root: ET.Element) -> bool:
    """Whether euler angles are in degrees; MuJoCo merges every ``<compiler>``, later attributes overriding."""
    angle = "degree"
    for comp in root.iter("compiler"):
        angle = comp.get("angle", angle)
    return angle != "radian"


def _declared_meshes(root: ET.Element, object_dir: Path) -> dict[str, tuple[Path, np.ndarray | None]]:
    """Mesh name -> (the file of that name beside ``object.xml``, scale (3,) or None). Raises DataError: a mesh
    without a file, or none beside ``object.xml``."""
    meshes: dict[str, tuple[Path, np.ndarray | None]] = {}
    for asset in root.findall("asset"):
        for m in asset.findall("mesh"):
            mname = m.get("name") or Path(m.get("file", "")).stem
            file = m.get("file")
            if not file:
                raise DataError(object_dir / "assets.xml", f"mesh[{mname}].file", "mesh without a file")
            local = object_dir / Path(file).name  # upstream path -> the file beside object.xml
            if not local.is_file():
                raise DataError(
                    object_dir / "assets.xml",
                    f"mesh[{mname}].file",
                    f"{file!r} resolves to {local}, which does not exist",
                )
            scale = np.array(m.get("scale").split(), float) if m.get("scale") else None
            meshes[mname] = (local, scale)
    return meshes


def _body_geoms(root: ET.Element, classes: dict, meshes: dict, xml: Path, object_dir: Path) -> list[_Geom]:
    """The object body's resolved mesh geoms (primitive geoms left out). Raises DataError: no object body, an unknown
    default class, a mesh not declared."""
    bodies = [b for w in root.findall("worldbody") for b in w.findall("body")]
    body = next((b for b in bodies if b.get("name") == "object"), bodies[0] if bodies else None)
    if body is None:
        raise DataError(xml, "worldbody.body", "no object body")
    childclass = body.get("childclass", "main")
    geoms: list[_Geom] = []
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
                raise DataError(
                    object_dir / "body.xml", f"geom[{gname}].mesh", f"mesh {mname!r} not declared in assets.xml"
                )
            f, s = meshes[mname]
            geoms.append(_Geom(attrs, f, s, cls))
    return geoms


#: kg/m^3, MuJoCo's geom density when none is given (MJCF reference, geom/@density)
MUJOCO_DEFAULT_DENSITY = float(_MJ_GEOM_DEFAULTS["density"])


def grab_object_info(object_dir: str | Path) -> GrabObjectInfo:
    """Parse ``<object_dir>/object.xml`` with its includes. Raises DataError: missing, invalid or oversized XML; an
    include or mesh outside the objects folder (cause ``path_escape``); too many or too deep includes (``file_size``);
    an unresolved mesh file; no collision geom, or collision geoms disagreeing on density, friction or condim."""
    object_dir = Path(object_dir)
    xml = object_dir / "object.xml"
    root = _parse_xml(xml)
    _expand_includes(root, object_dir, object_dir.parent, xml, [0])
    angle_deg = _compiler_angle_deg(root)
    meshes = _declared_meshes(root, object_dir)
    geoms = _body_geoms(root, _collect_defaults(root), meshes, xml, object_dir)

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
        name=name,
        xml=xml,
        visual_files=[g.mesh_file for g in vis],
        collision_files=[g.mesh_file for g in col],
        density=one("density", float),
        friction=one("friction", lambda s: tuple(float(x) for x in s.split())),
        condim=one("condim", int),
        margin=one("margin", float),
        geoms=(vis, col, angle_deg),
    )
    stated = _body_geoms(root, _collect_defaults(root, mj_defaults=False), meshes, xml, object_dir)
    if any("density" not in g.attrs for g in stated if g.cls == "object_col"):
        info.density_source = (
            f"default: MuJoCo's {MUJOCO_DEFAULT_DENSITY:g} kg/m^3 (no density in {xml.name} or its classes)"
        )
    for g in geoms:  # an orientation attribute the bake cannot apply is refused here
        _geom_transform(g.attrs, angle_deg, xml, g.attrs["name"])
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
    return sha256_text(
        sha256_file(g.mesh_file), repr(pose), repr(None if g.mesh_scale is None else g.mesh_scale.tolist())
    )


def load_grab_object(object_dir: str | Path, apply_geom_pose: bool = False) -> ObjectAsset:
    """ObjectAsset of one object_sim model folder: the ``object_col`` mesh geoms as collision parts, ``mass`` None;
    ``apply_geom_pose`` bakes the geom poses. Raises DataError: :func:`grab_object_info`'s; a missing mesh file; a
    degenerate collision part (names the file)."""
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
            collision.append(
                _bake(
                    [_baked_geom_mesh(g, angle_deg, info.xml)], _geom_key(g), f"{info.name}_{g.attrs['name']}", "grab"
                )
            )
        else:
            collision.append(g.mesh_file)
    for g, part in zip(col, collision):  # a flat or too-small part is named before any scene uses it
        check_collision_part(part, f"geom[{g.attrs['name']}].mesh")
    return ObjectAsset(
        name=info.name,
        visual_mesh=visual,
        collision_meshes=collision,
        density=info.density,
        mass=None,
        friction=info.friction,
        condim=info.condim,
        margin=info.margin,
        source=info.xml,
        density_source=info.density_source,
    )
