"""Kinematic model of the manosim hand and vectorised forward kinematics.

The model is read once from a manosim MJCF with MuJoCo's compiler
(:func:`mujoco.MjModel.from_xml_path`), so body offsets, body orientations and
ball-joint anchors are exactly what MuJoCo (and Newton's MJCF importer) use.
FK itself is plain numpy over a batch of frames; ``tests/test_kinematics.py``
checks it against :func:`mujoco.mj_kinematics` for random poses.

Landmarks (manopth order, :data:`replay.data.types.LANDMARK_NAMES`) are defined
once, on the manosim hand:

* joint landmarks (wrist, CMC/MCP/PIP/DIP/IP) are the **ball-joint anchors**:
  landmark 0 is the anchor of ``wrist_rot`` on ``mano_body_0``; e.g. index MCP
  (5) is the anchor of ``mano_joint_1``. manosim places each anchor at the MANO
  joint of its ``myhand`` shape, so these are MANO's own joint centres.
* fingertips (4, 8, 12, 16, 20) are the far end of the distal bone's collision
  capsule: the capsule's end point that is farther from the bone's joint anchor,
  plus one capsule radius along the capsule axis (the capsule's extreme point).
  Justification: the capsule is what touches objects in simulation, so its tip is
  the point a grasp replay must put where the person's fingertip was. MANO's usual
  fingertip vertices (744/320/443/554/671, used by GRAB's landmarks) lie at the end
  of the finger pad. The alternative, the vertex of the distal bone mesh farthest
  along the bone (``tip="mesh"``), differs by 4-6 mm (0 for the middle finger) and
  fits TACO's fingertip vertices no better (median 10.0 / 10.3 mm vs 10.1 / 10.1 mm
  for the capsule tip on the two sequences), so the contact geometry decides.

Frames and conventions: world Z up, metres; quaternions **xyzw** (Newton order)
in this module's API; MuJoCo's wxyz appears only where MuJoCo arrays are read.
A body's pose is the pose of its MJCF body frame; for ``mano_body_0`` that is the
pose Newton's free joint (``joint_q[0:7]``) stores.

The tree is read by :mod:`replay.kinematics.mjcf_tree`; quaternion helpers are in
:mod:`replay.kinematics.quat`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.errors import DataError
from replay.kinematics.mjcf_tree import (
    DISTAL_BODIES,
    NUM_BODIES,
    NUM_JOINTS,
    bone_dirs,
    compile_mjcf,
    fingertips,
    read_bodies,
    read_joints,
)
from replay.kinematics.quat import as_matrix, quat_xyzw_to_wxyz

__all__ = [
    "NUM_BODIES",
    "NUM_JOINTS",
    "DISTAL_BODIES",
    "LANDMARK_SOURCE",
    "TIP_LANDMARKS",
    "HandKinematics",
    "quat_xyzw_to_wxyz",
]

#: manopth landmark id -> (manosim body index, kind). kind "anchor" = the body's
#: ball-joint anchor, "tip" = the fingertip point of that distal body.
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

#: landmark ids of the five fingertips (thumb, index, middle, ring, pinky).
TIP_LANDMARKS = (4, 8, 12, 16, 20)


@dataclass(frozen=True)
class HandKinematics:
    """Kinematic tree of a manosim hand (16 bodies, root free + 15 ball joints).

    Attributes:
        source: the MJCF file it was read from.
        side: ``"right"`` or ``"left"``.
        body_names: ``mano_body_0..15``, index = MANO bone index.
        parent: (16,) parent body index, -1 for ``mano_body_0``.
        body_pos: (16, 3) body frame origin in the parent body frame at the
            reference pose, m (MJCF ``body pos``).
        body_rot: (16, 3, 3) body frame orientation relative to the parent
            (MJCF ``body quat``; identity for every manosim body).
        anchor: (16, 3) ball-joint anchor in the body frame, m (``joint pos``;
            ``wrist_rot`` for body 0, ``mano_joint_i`` for body i).
        qposadr: (16,) MuJoCo qpos address of each body's ball joint (wxyz there).
        wrist_slide_qposadr: (3,) qpos addresses of ``wrist_tx/ty/tz``.
        landmark_body: (21,) body carrying each manopth landmark.
        landmark_local: (21, 3) landmark position in that body's frame, m.
        bone_dir: (16, 3) unit vector in each finger body's frame from its joint
            anchor to the next landmark along the finger (the bone axis at the
            reference pose); row 0 is unused (zeros). Used by the IK twist prior.
    """

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

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_mjcf(cls, path: str | Path, side: str | None = None, tip: str = "capsule") -> HandKinematics:
        """Read the hand's kinematic tree from a manosim MJCF through MuJoCo.

        Args:
            path: ``capsule_hand.xml`` or ``mesh_hand.xml`` of a manosim hand.
            side: ``"right"``/``"left"``; default from the folder name
                (``mano_rhand``/``mano_lhand``), right if it says neither.
            tip: fingertip definition: ``"capsule"`` (capsule end + radius along
                the axis; needs capsule geoms on the distal bodies) or ``"mesh"``
                (the vertex of the distal bone mesh ``meshes/mano_bone_i.obj``
                farthest along the bone axis; the mesh is in the body frame, as in
                manosim's ``mesh_hand.xml`` where its geom pos is 0).

        Raises:
            DataError: the file is missing, does not compile, or lacks the manosim
                bodies/joints (``mano_body_0..15``, ``wrist_tx/ty/tz``, ``wrist_rot``,
                ``mano_joint_1..15``) or the distal capsules.
        """

        path = Path(path)
        m = compile_mjcf(path)
        if side is None:
            side = "left" if "lhand" in str(path.parent.name) else "right"
        if side not in ("right", "left"):
            raise DataError(path, "side", f"expected 'right' or 'left', got {side!r}")
        names, bid, parent, body_pos, body_rot = read_bodies(m, path)
        anchor, qposadr, slides = read_joints(m, path, bid, names)
        if not (np.allclose(body_pos[0], 0) and np.allclose(body_rot[0], np.eye(3)) and np.allclose(anchor[0], 0)):
            # The canonical wrist pose is the pose of mano_body_0 and equals the
            # importer's free joint only when the root sits at the world origin
            # with its ball anchor at the body origin (true for manosim).
            raise DataError(path, "mano_body_0", "root body must be at the origin with wrist_rot anchored at pos 0")
        tip_local = fingertips(m, path, tip, bid, names, parent, body_pos, anchor)
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
            bone_dir=bone_dirs(parent, body_pos, body_rot, anchor, tip_local),
        )

    # ----------------------------------------------------------------------- FK
    def fk_frames(self, wrist_pos: np.ndarray, wrist_rot: np.ndarray, joint_rot: np.ndarray):
        """World frames of all bodies for a batch of poses (rotation matrices in).

        Args:
            wrist_pos: (T, 3) world position of ``mano_body_0``, m.
            wrist_rot: (T, 3, 3) world orientation of ``mano_body_0``.
            joint_rot: (T, 15, 3, 3) local rotations of ``mano_joint_1..15``.

        Returns:
            ``(origin, rot, anchor)``: (T, 16, 3) body origins, (T, 16, 3, 3) body
            orientations and (T, 16, 3) ball-joint anchors, all world, m.
        """
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
        """World positions of the 21 MANO landmarks (manopth order) for a batch of poses.

        Args:
            wrist_pos: (T, 3) world position of ``mano_body_0``, m.
            wrist_quat: (T, 4) world orientation of ``mano_body_0``, **xyzw**.
            finger_quat: (T, 15, 4) local rotations of ``mano_joint_1..15`` relative to
                the MJCF reference pose, **xyzw**.

        Returns:
            (T, 21, 3) landmark positions, world frame, m.

        Raises:
            DataError: shapes do not match or values are not finite.
        """
        wrist_pos, wrist_quat, finger_quat = _check_pose(wrist_pos, wrist_quat, finger_quat)
        X, G, _ = self.fk_frames(wrist_pos, as_matrix(wrist_quat), as_matrix(finger_quat))
        return self.landmarks_from_frames(X, G)

    # ----------------------------------------------------------- MuJoCo bridge
    def mujoco_qpos(self, model, wrist_pos: np.ndarray, wrist_quat: np.ndarray, finger_quat: np.ndarray) -> np.ndarray:
        """MuJoCo qpos (nq,) for one pose of this hand (wxyz inside qpos).

        Args:
            model: the :class:`mujoco.MjModel` compiled from :attr:`source`.
            wrist_pos: (3,) m; wrist_quat: (4,) xyzw; finger_quat: (15, 4) xyzw.
        """
        qpos = np.array(model.qpos0, dtype=np.float64)
        qpos[self.wrist_slide_qposadr] = wrist_pos
        qpos[self.qposadr[0] : self.qposadr[0] + 4] = quat_xyzw_to_wxyz(wrist_quat)
        for i in range(1, NUM_BODIES):
            a = self.qposadr[i]
            qpos[a : a + 4] = quat_xyzw_to_wxyz(finger_quat[i - 1])
        return qpos


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
