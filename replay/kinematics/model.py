"""The manosim hand's kinematic tree, read through MuJoCo's compiler, and numpy FK over a batch of frames. Landmarks
(manopth order): joint landmarks are the ball-joint anchors, fingertips the distal capsule's far end plus one radius
(``docs/hand.md``). World Z up, m; quaternions xyzw (MuJoCo's wxyz only where its arrays are read)."""

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
from replay.kinematics.quat import as_matrix

__all__ = [
    "NUM_BODIES",
    "NUM_JOINTS",
    "DISTAL_BODIES",
    "LANDMARK_SOURCE",
    "TIP_LANDMARKS",
    "HandKinematics",
]

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

#: landmark ids of the five fingertips (thumb, index, middle, ring, pinky)
TIP_LANDMARKS = (4, 8, 12, 16, 20)


@dataclass(frozen=True)
class HandKinematics:
    """Kinematic tree of a manosim hand (16 bodies, root free + 15 ball joints).

    Attributes:
        parent: (16,) parent body index, -1 for ``mano_body_0``.
        body_pos, body_rot: (16, 3) m and (16, 3, 3): body frame in its parent's at the reference pose.
        anchor: (16, 3) m, ball-joint anchor in the body frame (``wrist_rot``, ``mano_joint_i``).
        qposadr: (16,) MuJoCo qpos address of each ball joint (wxyz there); ``wrist_slide_qposadr`` (3,).
        landmark_body, landmark_local: (21,) body carrying each manopth landmark, (21, 3) m in its frame.
        bone_dir: (16, 3) unit bone axis in each finger body's frame (row 0 zeros).
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

    @classmethod
    def from_mjcf(cls, path: str | Path, side: str | None = None, tip: str = "capsule") -> HandKinematics:
        """The tree of a manosim ``capsule_hand.xml`` or ``mesh_hand.xml`` through MuJoCo; ``side`` by default from
        the folder (``mano_lhand``: left); ``tip`` ``"capsule"`` or ``"mesh"`` (the distal mesh's farthest vertex).

        Raises:
            DataError: missing, not compiling, no manosim bodies, joints or distal capsules, a root not at the origin.
        """
        path = Path(path)
        m = compile_mjcf(path)
        if side is None:
            side = "left" if "lhand" in str(path.parent.name) else "right"
        if side not in ("right", "left"):
            raise DataError(path, "side", f"expected 'right' or 'left', got {side!r}")
        names, bid, parent, body_pos, body_rot = read_bodies(m, path)
        anchor, qposadr, slides = read_joints(m, path, bid, names=names)
        if not (np.allclose(body_pos[0], 0) and np.allclose(body_rot[0], np.eye(3)) and np.allclose(anchor[0], 0)):
            # only then is mano_body_0's pose the importer's free joint's
            raise DataError(path, "mano_body_0", "root body must be at the origin with wrist_rot anchored at pos 0")
        tip_local = fingertips(m, path, tip, bid=bid, names=names, parent=parent, body_pos=body_pos, anchor=anchor)
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
            bone_dir=bone_dirs(parent, body_pos, body_rot, anchor=anchor, tip_local=tip_local),
        )

    def fk_frames(self, wrist_pos: np.ndarray, wrist_rot: np.ndarray, joint_rot: np.ndarray):
        """``(origin (T, 16, 3), rot (T, 16, 3, 3), anchor (T, 16, 3))`` world, m, of every body from
        ``mano_body_0``'s ``wrist_pos`` (T, 3) m and ``wrist_rot`` (T, 3, 3), and ``joint_rot`` (T, 15, 3, 3)."""
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
        """(T, 21, 3) world landmarks, m, manopth order, from ``mano_body_0``'s ``wrist_pos`` (T, 3) m and
        ``wrist_quat`` (T, 4) xyzw and ``finger_quat`` (T, 15, 4) xyzw; DataError for bad shapes or values."""
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
