"""The manosim hand's kinematic tree as MuJoCo compiles it (readers for :meth:`HandKinematics.from_mjcf`); each
raises a DataError naming the MJCF and the missing or odd body or joint."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from replay.errors import DataError
from replay.kinematics.quat import as_matrix, quat_wxyz_to_xyzw

#: manosim bodies (MANO bones) and finger ball joints
NUM_BODIES = 16
NUM_JOINTS = 15

#: distal manosim body of each finger (thumb, index, middle, ring, pinky)
DISTAL_BODIES = (15, 3, 6, 12, 9)


def compile_mjcf(path: Path) -> mujoco.MjModel:
    """MuJoCo's model of ``path``; DataError if missing or rejected (the compiler's message kept)."""
    if not path.is_file():
        raise DataError(path, None, "manosim MJCF not found")
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except Exception as exc:  # mujoco raises ValueError with the compiler message
        raise DataError(path, None, f"MuJoCo could not compile the MJCF: {exc}") from exc


def _mj_id(m: mujoco.MjModel, path: Path, objtype, name: str, field: str) -> int:
    """MuJoCo id of the object ``name``; raises DataError (``field``) when the MJCF lacks it."""
    i = mujoco.mj_name2id(m, objtype, name)
    if i < 0:
        raise DataError(path, field, f"{name!r} not found; is this a manosim hand MJCF?")
    return i


def read_bodies(m: mujoco.MjModel, path: Path) -> tuple:
    """``(names, body ids, parent (16,), body_pos (16, 3) m, body_rot (16, 3, 3))`` of ``mano_body_0..15``, in
    the parent; DataError for a missing body, a non-mano parent, no topological order, a root not on the world."""
    names = tuple(f"mano_body_{i}" for i in range(NUM_BODIES))
    bid = [_mj_id(m, path, mujoco.mjtObj.mjOBJ_BODY, n, "body") for n in names]
    parent = np.full(NUM_BODIES, -1, dtype=np.int64)
    for i in range(1, NUM_BODIES):
        pid = int(m.body_parentid[bid[i]])
        if pid not in bid:
            raise DataError(path, f"body {names[i]}", "parent is not a mano body")
        parent[i] = bid.index(pid)
        if parent[i] >= i:
            raise DataError(path, f"body {names[i]}", "bodies are not in topological order")
    if m.body_parentid[bid[0]] != 0:
        raise DataError(path, "body mano_body_0", "the hand root must be a child of the world body")
    body_pos = np.array([m.body_pos[b] for b in bid], dtype=np.float64)
    body_rot = as_matrix(quat_wxyz_to_xyzw(np.array([m.body_quat[b] for b in bid])))
    return names, bid, parent, body_pos, body_rot


def read_joints(m: mujoco.MjModel, path: Path, bid: list[int], *, names: tuple[str, ...]) -> tuple:
    """``(anchor (16, 3) m, ball-joint qposadr (16,), [qposadr of wrist_tx, wrist_ty, wrist_tz])``; DataError for
    a missing ball joint or one on another body, or wrist slides not along world x/y/z."""
    jnames = ["wrist_rot"] + [f"mano_joint_{i}" for i in range(1, NUM_BODIES)]
    anchor = np.zeros((NUM_BODIES, 3))
    qposadr = np.zeros(NUM_BODIES, dtype=np.int64)
    for i, jn in enumerate(jnames):
        j = _mj_id(m, path, mujoco.mjtObj.mjOBJ_JOINT, jn, "joint")
        if m.jnt_type[j] != mujoco.mjtJoint.mjJNT_BALL or m.jnt_bodyid[j] != bid[i]:
            raise DataError(path, f"joint {jn}", f"expected a ball joint on {names[i]}")
        anchor[i] = m.jnt_pos[j]
        qposadr[i] = m.jnt_qposadr[j]
    slides = []
    for ax, jn in enumerate(("wrist_tx", "wrist_ty", "wrist_tz")):
        j = _mj_id(m, path, mujoco.mjtObj.mjOBJ_JOINT, jn, "joint")
        axis = np.zeros(3)
        axis[ax] = 1.0
        if m.jnt_type[j] != mujoco.mjtJoint.mjJNT_SLIDE or not np.allclose(m.jnt_axis[j], axis):
            raise DataError(path, f"joint {jn}", f"expected a slide joint along axis {axis}")
        slides.append(int(m.jnt_qposadr[j]))
    return anchor, qposadr, slides


def fingertips(m: mujoco.MjModel, path: Path, tip: str, *, bid, names, parent, body_pos, anchor) -> np.ndarray:
    """(5, 3) m fingertips in their distal body's frame, ``tip`` ``"capsule"`` or ``"mesh"``; DataError for an
    unknown ``tip`` or a missing distal capsule or mesh."""
    tip_local = np.zeros((5, 3))
    for f, b in enumerate(DISTAL_BODIES):
        if tip == "capsule":
            tip_local[f] = _capsule_tip(m, bid[b], anchor[b], path, names[b])
        elif tip == "mesh":
            tip_local[f] = _mesh_tip(path, b, anchor[b], anchor[parent[b]], body_pos[b])
        else:
            raise DataError(path, "tip", f"unknown fingertip definition {tip!r} (capsule or mesh)")
    return tip_local


def bone_dirs(parent, body_pos, body_rot, *, anchor, tip_local) -> np.ndarray:
    """(16, 3) unit bone axis of each finger body in its frame, anchor to the child's anchor or fingertip."""
    bone_dir = np.zeros((NUM_BODIES, 3))
    for b in range(1, NUM_BODIES):
        children = [c for c in range(NUM_BODIES) if parent[c] == b]
        if children:
            c = children[0]
            end = body_pos[c] + body_rot[c] @ anchor[c]  # child anchor in b's frame
        else:
            end = tip_local[DISTAL_BODIES.index(b)]
        d = end - anchor[b]
        bone_dir[b] = d / np.linalg.norm(d)
    return bone_dir


def _capsule_tip(m, body_id: int, anchor: np.ndarray, path: Path, name: str) -> np.ndarray:
    """The body's capsule's extreme point away from the joint anchor (body frame)."""
    geoms = [
        g for g in range(m.ngeom) if m.geom_bodyid[g] == body_id and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE
    ]
    if len(geoms) != 1:
        raise DataError(
            path, f"body {name}", f"expected one capsule geom for the fingertip, found {len(geoms)} (use tip='mesh')"
        )
    g = geoms[0]
    R = as_matrix(quat_wxyz_to_xyzw(m.geom_quat[g]))
    axis = R[:, 2]
    radius, half = float(m.geom_size[g][0]), float(m.geom_size[g][1])
    ends = m.geom_pos[g] + np.outer([half, -half], axis)
    far = ends[np.argmax(np.linalg.norm(ends - anchor, axis=1))]
    out = far - m.geom_pos[g]
    return far + radius * out / np.linalg.norm(out)


def _mesh_tip(path: Path, bone: int, anchor: np.ndarray, parent_anchor: np.ndarray, body_pos: np.ndarray) -> np.ndarray:
    """Vertex of ``meshes/mano_bone_<bone>.obj`` farthest along the middle phalanx's direction (body frame)."""
    obj = path.parent / "meshes" / f"mano_bone_{bone}.obj"
    if not obj.is_file():
        raise DataError(obj, None, "bone mesh for the fingertip not found")
    verts = np.array(
        [[float(v) for v in line.split()[1:4]] for line in obj.read_text().splitlines() if line.startswith("v ")]
    )
    if verts.size == 0:
        raise DataError(obj, "v", "mesh has no vertices")
    # parent anchor expressed in this body's frame (manosim body frames are unrotated)
    axis = anchor - (parent_anchor - body_pos)
    axis /= np.linalg.norm(axis)
    return verts[np.argmax((verts - anchor) @ axis)]
