"""The manosim hand's kinematic tree, read through MuJoCo's compiler, and numpy FK over frames; landmarks as
``docs/hand.md`` defines them. World Z up, m; quaternions xyzw (MuJoCo's wxyz only where its arrays are read)."""

from __future__ import annotations

from dataclasses import dataclass
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


def _read_bodies(m: mujoco.MjModel, path: Path) -> tuple:
    """``(names, body ids, parent (16,), body_pos (16, 3) m, body_rot (16, 3, 3))`` in the parent; DataError for a
    missing body, a non-mano parent, no topological order, a root not on the world."""
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


def _read_joints(m: mujoco.MjModel, path: Path, bid: list[int], names: tuple[str, ...]) -> tuple:
    """``(anchor (16, 3) m, ball-joint qposadr (16,), wrist slide qposadrs)``; DataError for a missing or misplaced
    ball joint, or wrist slides not along world x/y/z."""
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


def _fingertips(m: mujoco.MjModel, path: Path, tip: str, bid, names, parent, body_pos, anchor) -> np.ndarray:
    """(5, 3) m fingertips in their distal body's frame; DataError: unknown ``tip``, a missing capsule or mesh."""
    tip_local = np.zeros((5, 3))
    for f, b in enumerate(DISTAL_BODIES):
        if tip == "capsule":
            tip_local[f] = _capsule_tip(m, bid[b], anchor[b], path, names[b])
        elif tip == "mesh":
            tip_local[f] = _mesh_tip(path, b, anchor[b], anchor[parent[b]], body_pos[b])
        else:
            raise DataError(path, "tip", f"unknown fingertip definition {tip!r} (capsule or mesh)")
    return tip_local


def _bone_dirs(parent, body_pos, body_rot, anchor, tip_local) -> np.ndarray:
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
    """The capsule's extreme point away from the joint anchor (body frame)."""
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


#: manopth landmark id -> (manosim body, "anchor": its ball-joint anchor | "tip": its fingertip point)
LANDMARK_SOURCE = (
    (0, "anchor"),
    (13, "anchor"),
    (14, "anchor"),
    (15, "anchor"),
    (15, "tip"),  # thumb
    (1, "anchor"),
    (2, "anchor"),
    (3, "anchor"),
    (3, "tip"),  # index
    (4, "anchor"),
    (5, "anchor"),
    (6, "anchor"),
    (6, "tip"),  # middle
    (10, "anchor"),
    (11, "anchor"),
    (12, "anchor"),
    (12, "tip"),  # ring
    (7, "anchor"),
    (8, "anchor"),
    (9, "anchor"),
    (9, "tip"),  # pinky
)


@dataclass(frozen=True)
class HandKinematics:
    """Kinematic tree of a manosim hand (16 bodies, root free + 15 ball joints).

    Attributes:
        parent: (16,), -1 for ``mano_body_0``. body_pos, body_rot: (16, 3) m, (16, 3, 3) in the parent's frame.
        anchor: (16, 3) m, ball-joint anchor in the body frame. qposadr: (16,) (wxyz there).
        landmark_body, landmark_local: (21,), (21, 3) m in that body's frame. bone_dir: (16, 3) unit (row 0 zeros)."""

    source: Path
    side: str
    body_names: tuple[str, ...]
    parent: np.ndarray
    body_pos: np.ndarray
    body_rot: np.ndarray
    anchor: np.ndarray
    qposadr: np.ndarray
    wrist_slide_qposadr: np.ndarray
    landmark_body: np.ndarray
    landmark_local: np.ndarray
    bone_dir: np.ndarray

    @classmethod
    def from_mjcf(cls, path: str | Path, side: str | None = None, tip: str = "capsule") -> HandKinematics:
        """The tree of a manosim ``capsule_hand.xml`` or ``mesh_hand.xml``; ``side`` default from the folder; ``tip``
        ``"capsule"`` or ``"mesh"``. Raises DataError: missing, not compiling, no manosim bodies, joints or distal
        capsules, a root not at the origin."""
        path = Path(path)
        m = compile_mjcf(path)
        if side is None:
            side = "left" if "lhand" in str(path.parent.name) else "right"
        if side not in ("right", "left"):
            raise DataError(path, "side", f"expected 'right' or 'left', got {side!r}")
        names, bid, parent, body_pos, body_rot = _read_bodies(m, path)
        anchor, qposadr, slides = _read_joints(m, path, bid, names)
        if not (np.allclose(body_pos[0], 0) and np.allclose(body_rot[0], np.eye(3)) and np.allclose(anchor[0], 0)):
            # only then is mano_body_0's pose the importer's free joint's
            raise DataError(path, "mano_body_0", "root body must be at the origin with wrist_rot anchored at pos 0")
        tip_local = _fingertips(m, path, tip, bid, names, parent, body_pos, anchor)
        lm_body = np.array([b for b, _ in LANDMARK_SOURCE], dtype=np.int64)
        lm_local = np.zeros((21, 3))
        for k, (b, kind) in enumerate(LANDMARK_SOURCE):
            lm_local[k] = anchor[b] if kind == "anchor" else tip_local[DISTAL_BODIES.index(b)]
        return cls(
            source=path,
            side=side,
            body_names=names,
            parent=parent,
            body_pos=body_pos,
            body_rot=body_rot,
            anchor=anchor,
            qposadr=qposadr,
            wrist_slide_qposadr=np.array(slides, dtype=np.int64),
            landmark_body=lm_body,
            landmark_local=lm_local,
            bone_dir=_bone_dirs(parent, body_pos, body_rot, anchor, tip_local),
        )

    def fk_frames(self, wrist_pos: np.ndarray, wrist_rot: np.ndarray, joint_rot: np.ndarray):
        """``(origin (T, 16, 3) m, rot (T, 16, 3, 3), anchor (T, 16, 3) m)`` world, from ``wrist_pos`` (T, 3) m,
        ``wrist_rot`` (T, 3, 3) and ``joint_rot`` (T, 15, 3, 3)."""
        T = wrist_pos.shape[0]
        X = np.empty((T, NUM_BODIES, 3))
        G = np.empty((T, NUM_BODIES, 3, 3))
        A = np.empty((T, NUM_BODIES, 3))
        G[:, 0] = wrist_rot
        X[:, 0] = wrist_pos
        A[:, 0] = wrist_pos + wrist_rot @ self.anchor[0]
        for b in range(1, NUM_BODIES):
            p = self.parent[b]
            Gp = G[:, p]
            pre_rot = Gp @ self.body_rot[b]
            A[:, b] = X[:, p] + Gp @ self.body_pos[b] + pre_rot @ self.anchor[b]
            Gb = pre_rot @ joint_rot[:, b - 1]
            G[:, b] = Gb
            X[:, b] = A[:, b] - Gb @ self.anchor[b]
        return X, G, A

    def landmarks_from_frames(self, X: np.ndarray, G: np.ndarray) -> np.ndarray:
        """(T, 21, 3) world landmarks from body origins X (T,16,3) and orientations G (T,16,3,3)."""
        b = self.landmark_body
        return X[:, b] + (G[:, b] @ self.landmark_local[:, :, None])[..., 0]

    def fk_landmarks(self, wrist_pos: np.ndarray, wrist_quat: np.ndarray, finger_quat: np.ndarray) -> np.ndarray:
        """(T, 21, 3) world landmarks, m, from ``wrist_pos`` (T, 3) m, ``wrist_quat`` (T, 4) and ``finger_quat``
        (T, 15, 4) xyzw; DataError for bad shapes or values."""
        wrist_pos, wrist_quat, finger_quat = _check_pose(wrist_pos, wrist_quat, finger_quat)
        X, G, _ = self.fk_frames(wrist_pos, as_matrix(wrist_quat), as_matrix(finger_quat))
        return self.landmarks_from_frames(X, G)


def _check_pose(wrist_pos, wrist_quat, finger_quat):
    wrist_pos = np.asarray(wrist_pos, dtype=np.float64)
    wrist_quat = np.asarray(wrist_quat, dtype=np.float64)
    finger_quat = np.asarray(finger_quat, dtype=np.float64)
    if wrist_pos.ndim != 2 or wrist_pos.shape[1] != 3:
        raise DataError(None, "wrist_pos", f"expected shape (T, 3), got {wrist_pos.shape}")
    T = wrist_pos.shape[0]
    if wrist_quat.shape != (T, 4):
        raise DataError(None, "wrist_quat", f"expected shape ({T}, 4), got {wrist_quat.shape}")
    if finger_quat.shape != (T, NUM_JOINTS, 4):
        raise DataError(None, "finger_quat", f"expected shape ({T}, 15, 4), got {finger_quat.shape}")
    for name, arr in (("wrist_pos", wrist_pos), ("wrist_quat", wrist_quat), ("finger_quat", finger_quat)):
        if not np.all(np.isfinite(arr)):
            raise DataError(None, name, "non-finite values")
    for name, arr in (("wrist_quat", wrist_quat), ("finger_quat", finger_quat)):
        if arr.size and np.min(np.linalg.norm(arr, axis=-1)) < 1e-6:
            raise DataError(None, name, "zero-length quaternion")
    return wrist_pos, wrist_quat, finger_quat
