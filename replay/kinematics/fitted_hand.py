"""The fitted hand: manosim's ``zerohand`` MJCF with each bone scaled to a measured subject hand, read back by MuJoCo
and cached per subject (``docs/hand.md``); body frames m."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from replay.data.asset_memo import file_sha256
from replay.data.cache import cache_dir
from replay.data.mesh_io import load_mesh
from replay.errors import DataError
from replay.kinematics.model import NUM_BODIES, HandKinematics
from replay.kinematics.subject_hand import BASE_BODIES, BONE_LANDMARKS, TIP_BODIES, SubjectHand, measure_hand

#: the manosim shape a fitted hand is scaled from (MANO's mean shape, zero betas)
TEMPLATE_SHAPE = "zerohand"
#: bump when the rules change, so cached hands are rebuilt
FIT_VERSION = 1
#: m: read-back tolerance of joint anchors and fingertips
READBACK_TOL_M = 1e-6
#: a scale of a bone (along it) or of the radii outside this range is refused
SCALE_RANGE = (0.5, 2.0)
#: m: largest RMS distance of the subject's finger bases from the scaled template's after alignment
PALM_FIT_MAX_M = 0.008
#: the declared rule for the capsule radii (physics table row hand_shape, docs/hand.md)
RADIUS_RULE = (
    "capsule radii scaled by the hand-length ratio (wrist -> middle MCP -> PIP -> DIP, subject / zerohand): "
    "geometric similarity, our choice (docs/hand.md: manosim's own myhand and zerohand builds)"
)
HAND_FILES = ("capsule_hand.xml", "mesh_hand.xml")


@dataclass(frozen=True)
class _Template:
    """The template's numbers as written (body frames, m)."""

    path: Path
    body_pos: np.ndarray
    anchor: np.ndarray
    child: dict
    axis: np.ndarray
    length: np.ndarray
    capsule_len: np.ndarray
    radius: np.ndarray
    mass: np.ndarray


def template_dir(manosim_dir: str | Path, side: str) -> Path:
    """``<manosim>/assets/zerohand/mano_{r,l}hand``."""
    return Path(manosim_dir) / "assets" / TEMPLATE_SHAPE / f"mano_{side[0]}hand"


def is_fitted_hand(mjcf_path: str | Path) -> bool:
    """True when ``mjcf_path``'s folder holds a fitted hand's ``hand.json``."""
    return (Path(mjcf_path).parent / "hand.json").is_file()


def recording_hand_dir(recording, manosim_dir: str | Path) -> Path:
    """The fitted hand folder of a recording's subject; DataError for no landmarks, or as :func:`fitted_hand_dir`."""
    if recording.landmarks is None:
        raise DataError(recording.source, "landmarks", "a fitted hand needs the recording's landmarks")
    subject = measure_hand(recording.landmarks, recording.valid, recording.hand_side, source=recording.source)
    return fitted_hand_dir(subject, template_dir(manosim_dir, recording.hand_side))


def fitted_hand_dir(subject: SubjectHand, template: str | Path) -> Path:
    """The cached folder of ``subject``'s fitted hand (values rounded to 0.01 mm) built from ``template``. Raises
    DataError: the template missing or not manosim's layout, a scale outside :data:`SCALE_RANGE`, a palm not fitting
    the template's, a read-back mismatch."""
    template = Path(template)
    subject = subject.rounded()
    files = [template / f for f in HAND_FILES]
    for f in files:
        if not f.is_file():
            raise DataError(f, None, "manosim template hand MJCF not found (fetch the manosim dataset)")
    meshes = sorted((template / "meshes").glob("*.obj"))
    h = hashlib.sha256(json.dumps([FIT_VERSION, subject.side, subject.key_values()]).encode())
    for f in files + meshes:
        h.update(f.name.encode() + file_sha256(f).encode())
    # named after the template's folder (mano_lhand-...): the side is read from it; absolute
    out = cache_dir("hands").resolve() / f"{template.name}-{h.hexdigest()[:24]}"
    if (out / "hand.json").is_file():
        return out
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        _build(subject, template, tmp)
        try:
            os.rename(tmp, out)
        except OSError:  # another process published the same hand first
            if not (out / "hand.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _build(subject: SubjectHand, template: Path, out: Path) -> None:
    """Write both fitted MJCFs, their meshes and ``hand.json`` into ``out``, read back."""
    src = template / "capsule_hand.xml"
    t = _read_template(src)
    A, joint_world, tip_world, info = _plan(subject, t)
    body_pos, anchor = _placed(t, A, joint_world)
    mass_scale = _mass_scale(t, A)
    (out / "meshes").mkdir()
    written = set()
    for name in HAND_FILES:
        root = ET.parse(template / name).getroot()
        _check_same_tree(root, t, template / name)
        _edit(root, t, A, body_pos, anchor, mass_scale, info["radius_scale"], template, out, written)
        ET.ElementTree(root).write(out / name, encoding="unicode")
        _read_back(out / name, template / name, joint_world, tip_world if name == "capsule_hand.xml" else None)
    info.update(subject=subject.summary(), template={"shape": TEMPLATE_SHAPE, "folder": str(template)})
    (out / "hand.json").write_text(json.dumps(info, indent=1))


def _floats(el: ET.Element, attr: str, n: int, path: Path) -> np.ndarray:
    """``n`` floats of ``el``'s attribute ``attr``; DataError naming it when absent or malformed."""
    try:
        v = np.array([float(x) for x in el.attrib[attr].split()], dtype=np.float64)
    except (KeyError, ValueError):
        v = np.zeros(0)
    if v.shape != (n,):
        raise DataError(path, f"{el.tag} {el.get('name', '')} {attr}".strip(), f"expected {n} numbers")
    return v


def _bodies(root: ET.Element, path: Path) -> dict:
    """``mano_body_i`` -> element, for i in 0..15; DataError when one is missing or has an orientation."""
    out = {}
    for el in root.iter("body"):
        name = el.get("name", "")
        if name.startswith("mano_body_"):
            if any(k in el.attrib for k in ("quat", "axisangle", "euler", "xyaxes", "zaxis")):
                raise DataError(path, f"body {name}", "has an orientation; the fit expects manosim's identity frames")
            out[int(name.rsplit("_", 1)[1])] = el
    if sorted(out) != list(range(NUM_BODIES)):
        raise DataError(path, "body", f"expected mano_body_0..{NUM_BODIES - 1}: not a manosim hand MJCF")
    return out


def _ball(el: ET.Element, b: int, path: Path) -> ET.Element:
    """Body ``b``'s ball joint (``wrist_rot`` / ``mano_joint_b``)."""
    name = "wrist_rot" if b == 0 else f"mano_joint_{b}"
    j = next((j for j in el.findall("joint") if j.get("name") == name), None)
    if j is None or j.get("type") != "ball":
        raise DataError(path, f"joint {name}", "missing or not a ball joint")
    return j


def _read_template(path: Path) -> _Template:
    """The capsule template's geometry; DataError where not manosim's layout (identity frames, capsules)."""
    root = ET.parse(path).getroot()
    if root.find("compiler") is not None and {"meshdir", "assetdir"} & set(root.find("compiler").attrib):
        raise DataError(path, "compiler", "meshdir/assetdir not supported by the fit (manosim sets none)")
    els = _bodies(root, path)
    body_pos = np.array([_floats(els[b], "pos", 3, path) for b in range(NUM_BODIES)])
    anchor = np.array([_floats(_ball(els[b], b, path), "pos", 3, path) for b in range(NUM_BODIES)])
    child = {b: [int(c.get("name").rsplit("_", 1)[1]) for c in els[b].findall("body")] for b in range(NUM_BODIES)}
    axis, length = np.zeros((NUM_BODIES, 3)), np.zeros(NUM_BODIES)
    capsule_len, radius, mass = np.zeros(NUM_BODIES), np.zeros(NUM_BODIES), np.zeros(NUM_BODIES)
    for b in range(NUM_BODIES):
        inertial = els[b].find("inertial")
        if inertial is None:
            raise DataError(path, f"body mano_body_{b}", "no <inertial>")
        mass[b] = _floats(inertial, "mass", 1, path)[0]
        if b == 0:
            continue
        caps = [g for g in els[b].findall("geom") if g.get("type") == "capsule"]
        if len(caps) != 1:
            raise DataError(path, f"body mano_body_{b}", f"expected one capsule, found {len(caps)}")
        ends = _floats(caps[0], "fromto", 6, path).reshape(2, 3)
        radius[b] = _floats(caps[0], "size", 1, path)[0]
        if np.linalg.norm(ends[0] - anchor[b]) > READBACK_TOL_M:
            raise DataError(path, f"body mano_body_{b}", "capsule does not start at its joint")
        capsule_len[b] = np.linalg.norm(ends[1] - ends[0])
        if b in TIP_BODIES:
            d = ends[1] - ends[0]
            length[b] = capsule_len[b] + radius[b]  # HandKinematics' fingertip: capsule end + radius
        else:
            (c,) = child[b]
            d = body_pos[c] + anchor[c] - anchor[b]
            length[b] = np.linalg.norm(d)
            if np.linalg.norm(ends[1] - (anchor[b] + d)) > READBACK_TOL_M:
                raise DataError(path, f"body mano_body_{b}", "capsule does not end at the next joint")
        axis[b] = d / np.linalg.norm(d)
    return _Template(path, body_pos, anchor, child, axis, length, capsule_len, radius, mass)


def _check_same_tree(root: ET.Element, t: _Template, path: Path) -> None:
    """DataError when ``root`` (the mesh hand) places bodies, joints or masses other than the capsule template."""
    els = _bodies(root, path)
    for b in range(NUM_BODIES):
        same = np.allclose(_floats(els[b], "pos", 3, path), t.body_pos[b], atol=1e-9) and np.allclose(
            _floats(_ball(els[b], b, path), "pos", 3, path), t.anchor[b], atol=1e-9
        )
        if not same:
            raise DataError(path, f"body mano_body_{b}", "placed otherwise than in capsule_hand.xml")


def _plan(subject: SubjectHand, t: _Template) -> tuple:
    """``(A (16, 3, 3), joint_world (16, 3) m, tip_world (16, 3) m, info)``; DataError: scale or palm off."""
    src = subject.source
    base_t = np.array([t.body_pos[c] + t.anchor[c] for c in BASE_BODIES])
    rot, _ = Rotation.align_vectors(base_t, subject.palm)
    base_s = rot.apply(subject.palm)
    palm_scale = float(np.sum(base_s * base_t) / np.sum(base_t * base_t))
    palm_rms = float(np.sqrt(np.mean(np.sum((base_s - palm_scale * base_t) ** 2, axis=-1))))
    if palm_rms > PALM_FIT_MAX_M:
        raise DataError(
            src,
            "landmarks",
            f"the finger bases lie {palm_rms * 1000:.1f} mm (RMS) from the scaled {TEMPLATE_SHAPE} palm's "
            f"(above {PALM_FIT_MAX_M * 1000:g} mm): the other hand side, or not a hand",
        )
    middle = BASE_BODIES.index(4)
    hand_s = np.linalg.norm(base_s[middle]) + subject.bone_length[4] + subject.bone_length[5]
    hand_t = np.linalg.norm(base_t[middle]) + t.length[4] + t.length[5]
    r = float(hand_s / hand_t)
    A = np.zeros((NUM_BODIES, 3, 3))
    A[0] = palm_scale * np.eye(3)
    scale = np.zeros(NUM_BODIES)
    for b in BONE_LANDMARKS:
        L = subject.bone_length[b]
        scale[b] = (L - r * t.radius[b]) / t.capsule_len[b] if b in TIP_BODIES else L / t.length[b]
        u = t.axis[b]
        A[b] = r * np.eye(3) + (scale[b] - r) * np.outer(u, u)
    for name, v in [("radius scale", r), ("palm scale", palm_scale)] + [
        (f"mano_body_{b} length scale", scale[b]) for b in BONE_LANDMARKS
    ]:
        if not SCALE_RANGE[0] <= v <= SCALE_RANGE[1]:
            raise DataError(
                src, "landmarks", f"{name} {v:.3f} of the {TEMPLATE_SHAPE} hand is outside {SCALE_RANGE}: not a hand"
            )
    joint_world, tip_world = np.zeros((NUM_BODIES, 3)), np.zeros((NUM_BODIES, 3))
    for c, p in zip(BASE_BODIES, base_s):
        joint_world[c] = p
    for b in range(1, NUM_BODIES):  # topological order (parents first)
        end = joint_world[b] + subject.bone_length[b] * t.axis[b]
        for c in t.child[b]:
            joint_world[c] = end
        if b in TIP_BODIES:
            tip_world[b] = end
    info = {
        "version": FIT_VERSION,
        "radius_scale": r,
        "radius_rule": RADIUS_RULE,
        "palm_scale": palm_scale,
        "palm_fit_rms_mm": palm_rms * 1000,
        "length_scale": {f"mano_body_{b}": float(scale[b]) for b in BONE_LANDMARKS},
        "joint_centres_mm": {f"mano_body_{b}": [float(x) * 1000 for x in joint_world[b]] for b in range(NUM_BODIES)},
    }
    return A, joint_world, tip_world, info


def _placed(t: _Template, A: np.ndarray, joint_world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(body_pos (16, 3), anchor (16, 3))`` in parent / body frames, m: each anchor on its joint centre."""
    anchor = np.einsum("bij,bj->bi", A, t.anchor)
    origin = np.zeros((NUM_BODIES, 3))
    body_pos = np.zeros((NUM_BODIES, 3))
    for b in range(1, NUM_BODIES):
        p = next(p for p in range(NUM_BODIES) if b in t.child[p])
        origin[b] = joint_world[b] - anchor[b]
        body_pos[b] = origin[b] - origin[p]
    return body_pos, anchor


def _mass_scale(t: _Template, A: np.ndarray) -> np.ndarray:
    """(16,) new mass / template mass: uniform density (x det A_b), the template's total mass kept."""
    m = t.mass * np.linalg.det(A)
    return m * (t.mass.sum() / m.sum()) / t.mass


def _fmt(v) -> str:
    return " ".join(f"{float(x):.12g}" for x in np.ravel(v))


def _edit(root, t: _Template, A, body_pos, anchor, mass_scale, r, template: Path, out: Path, written: set) -> None:
    """Map every body of ``root``; its meshes point at the mapped copies in ``out/meshes``."""
    els = _bodies(root, t.path)
    mesh_body = {}
    for b, el in els.items():
        el.set("pos", _fmt(body_pos[b]))
        _ball(el, b, t.path).set("pos", _fmt(anchor[b]))
        _edit_inertial(el.find("inertial"), A[b], mass_scale[b], t.path)
        for g in el.findall("geom"):
            if g.get("type") == "capsule":
                g.set("fromto", _fmt((A[b] @ _floats(g, "fromto", 6, t.path).reshape(2, 3).T).T))
                g.set("size", _fmt(r * _floats(g, "size", 1, t.path)))
            elif g.get("type") == "mesh":
                g.set("pos", _fmt(A[b] @ _floats(g, "pos", 3, t.path) if "pos" in g.attrib else np.zeros(3)))
                mesh_body[g.get("mesh")] = b
            else:
                raise DataError(t.path, f"body mano_body_{b}", f"geom type {g.get('type')!r} not supported by the fit")
    for m in root.iter("mesh"):
        name, file = m.get("name", ""), m.get("file", "")
        b = mesh_body.get(name, _bone_of(name, t.path))
        if b != _bone_of(name, t.path):
            raise DataError(t.path, f"mesh {name}", f"used by mano_body_{b}, not by the body its name says")
        if "scale" in m.attrib:
            raise DataError(t.path, f"mesh {name}", "a scaled mesh is not supported by the fit (manosim scales none)")
        dst = out / "meshes" / Path(file).name
        if dst.name not in written:
            mesh = load_mesh(template / file, f"mesh {name}", template, process=False)
            mesh.vertices = mesh.vertices @ A[b].T
            obj = trimesh.exchange.obj.export_obj(
                mesh, include_normals=False, include_color=False, include_texture=False
            )
            dst.write_text(obj)
            written.add(dst.name)
        m.set("file", f"meshes/{dst.name}")


def _bone_of(mesh_name: str, path: Path) -> int:
    """``mano_bone_i`` -> i."""
    head, _, tail = mesh_name.rpartition("_")
    if head != "mano_bone" or not tail.isdigit() or int(tail) >= NUM_BODIES:
        raise DataError(path, f"mesh {mesh_name}", "not a manosim bone mesh (mano_bone_0..15)")
    return int(tail)


def _edit_inertial(el: ET.Element, A: np.ndarray, k: float, path: Path) -> None:
    """Map an ``<inertial pos mass fullinertia>`` by A (mass x ``k``; second moments mass-weighted through A)."""
    pos = _floats(el, "pos", 3, path)
    f = _floats(el, "fullinertia", 6, path)
    inertia = np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]])
    second = np.trace(inertia) / 2 * np.eye(3) - inertia  # sum m x x^T about the centre of mass
    second = k * A @ second @ A.T
    inertia = np.trace(second) * np.eye(3) - second
    el.set("pos", _fmt(A @ pos))
    el.set("mass", _fmt(k * _floats(el, "mass", 1, path)))
    el.set(
        "fullinertia", _fmt([inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2]])
    )


def _read_back(path: Path, template: Path, joint_world: np.ndarray, tip_world: np.ndarray | None) -> None:
    """Compile ``path`` with MuJoCo; at qpos0 compare joint anchors, fingertips, joint limits and total mass with the
    intended. DataError naming what is off, or MuJoCo's refusal."""
    try:
        m = mujoco.MjModel.from_xml_path(str(path))
        ref = mujoco.MjModel.from_xml_path(str(template))
    except Exception as exc:  # mujoco raises ValueError with the compiler message
        raise DataError(path, None, f"MuJoCo could not compile the fitted hand: {exc}") from exc
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    for b in range(NUM_BODIES):
        name = "wrist_rot" if b == 0 else f"mano_joint_{b}"
        j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
        err = np.linalg.norm(d.xanchor[j] - joint_world[b])
        if err > READBACK_TOL_M:
            raise DataError(path, f"joint {name}", f"compiled anchor {err * 1000:.4f} mm from the fitted joint centre")
    if not (np.array_equal(m.jnt_limited, ref.jnt_limited) and np.allclose(m.jnt_range, ref.jnt_range)):
        raise DataError(path, "joint range", "joint limits differ from the template's")
    if not np.isclose(m.body_mass.sum(), ref.body_mass.sum(), rtol=1e-6):
        raise DataError(path, "inertial mass", f"total {m.body_mass.sum():.6g} kg, template {ref.body_mass.sum():.6g}")
    if tip_world is not None:
        kin = HandKinematics.from_mjcf(path, side="left" if "lhand" in template.parent.name else "right")
        ident = np.tile([0.0, 0.0, 0.0, 1.0], (1, 15, 1))
        lm = kin.fk_landmarks(np.zeros((1, 3)), np.array([[0.0, 0.0, 0.0, 1.0]]), ident)[0]
        for b in TIP_BODIES:
            k = BONE_LANDMARKS[b][1]
            err = np.linalg.norm(lm[k] - tip_world[b])
            if err > READBACK_TOL_M:
                raise DataError(path, f"body mano_body_{b}", f"fingertip {err * 1000:.4f} mm from the fitted one")
