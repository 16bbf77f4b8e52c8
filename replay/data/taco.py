"""TACO adapter: ``taco/<seq>.pkl`` + ``taco/<seq>.obj`` -> Recording (``docs/data.md``); the left hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from replay.data.adapter_fields import LIFT_THRESHOLD_M, get_array, load_dict, required_onset
from replay.data.mesh_io import load_mesh
from replay.data.objects import load_taco_object
from replay.data.types import MANOParams, ObjectTrack, Recording
from replay.errors import DataError

#: Hz, TACO's capture rate (Liu et al., CVPR 2024: allocentric cameras at 30 fps); not in the files
TACO_FPS = 30.0
TACO_FPS_SOURCE = f"documentation: TACO's cameras record at {TACO_FPS:g} fps (Liu et al., CVPR 2024); not in the file"


def load_taco(path: str | Path, obj_path: str | Path | None = None) -> Recording:
    """One TACO sequence; ``obj_path`` default ``<seq>.obj`` beside it. Raises DataError: bad pickle, missing field,
    wrong shape, NaN (first bad frame named), ``obj_pose`` not rigid or not reproducing ``obj_verts``, missing mesh,
    an object never lifted by 1 cm."""
    path = Path(path)
    obj_path = Path(obj_path) if obj_path is not None else path.with_suffix(".obj")
    data = load_dict(path)
    pose, trans, betas, verts, faces = _hand_arrays(data, path)
    T = pose.shape[0]
    obj_pose = get_array(data, "obj_pose", path, shape=(T, 4, 4))
    Rm = _rigid_rotations(obj_pose, path)
    asset = load_taco_object(obj_path, name=path.stem)
    world = _object_vertices_world(data, path, obj_path, obj_pose, T)
    onset = required_onset(obj_pose[:, :3, 3], path, "obj_pose")
    lowest = world[:, :, 2].min(axis=1)
    support = float(np.median(lowest[: max(onset, 1)]))

    quat = Rotation.from_matrix(Rm).as_quat()  # xyzw
    rec = Recording(
        name=path.stem,
        dataset="taco",
        source=path,
        fps=TACO_FPS,
        time=np.arange(T) / TACO_FPS,
        hand_side="left",
        valid=np.ones(T, bool),
        wrist_pos=None,
        wrist_quat=None,
        finger_quat=None,
        landmarks=None,
        objects=[ObjectTrack(asset=asset, pos=obj_pose[:, :3, 3].copy(), quat=quat, tracked=True)],
        target=0,
        support_height=support,
        grasp_frame=onset,
        mano=MANOParams(
            finger_pose=pose[:, 3:].reshape(T, 15, 3),
            global_orient=pose[:, :3].copy(),
            trans=trans,
            T_world_wrist=None,
            betas=betas,
            flat_hand_mean=None,
            vertices=verts,
        ),
        meta={
            "hand_faces": faces,
            "hand_lowest_z": float(verts[:, :, 2].min()),
            "support_rule": "median over rest frames [0, grasp_frame) of the object's lowest vertex z",
            "grasp_rule": f"lift onset: first frame object z > z[0] + {LIFT_THRESHOLD_M} m",
            "obj_mesh": str(obj_path),
            "fps_source": TACO_FPS_SOURCE,
        },
    )
    return rec.validate()


def _hand_arrays(data: dict, path: Path) -> tuple:
    """``(hand_pose (T, 48) rad axis-angle, hand_trans (T, 3) m, hand_shape (10,), hand_verts (T, 778, 3) world m,
    hand_faces (1538, 3))`` of a TACO pickle; raises DataError (missing, wrong shape, NaN, under 2 frames)."""
    pose = get_array(data, "hand_pose", path, shape=(-1, 48))
    T = pose.shape[0]
    if T < 2:
        raise DataError(path, "hand_pose", f"need at least 2 frames, got {T}")
    trans = get_array(data, "hand_trans", path, shape=(T, 3))
    betas = get_array(data, "hand_shape", path, shape=(10,))
    verts = get_array(data, "hand_verts", path, shape=(T, 778, 3))
    faces = get_array(data, "hand_faces", path, shape=(1538, 3), dtype=np.int64)
    return pose, trans, betas, verts, faces


def _rigid_rotations(obj_pose: np.ndarray, path: Path) -> np.ndarray:
    """(T, 3, 3) rotation blocks of ``obj_pose`` (T, 4, 4); raises DataError where a block is not a rotation
    (orthonormal to 1e-3, det 1) or the last row is not (0, 0, 0, 1)."""
    Rm = obj_pose[:, :3, :3]
    ortho = np.abs(np.einsum("tji,tjk->tik", Rm, Rm) - np.eye(3)).max(axis=(1, 2))
    det = np.linalg.det(Rm)
    bad = np.flatnonzero(
        (ortho > 1e-3) | (np.abs(det - 1) > 1e-3) | (np.abs(obj_pose[:, 3] - [0, 0, 0, 1]).max(1) > 1e-6)
    )
    if bad.size:
        raise DataError(path, "obj_pose", f"not a rigid transform at {bad.size} frame(s), first at frame {int(bad[0])}")
    return Rm


def _object_vertices_world(data: dict, path: Path, obj_path: Path, obj_pose: np.ndarray, T: int) -> np.ndarray:
    """(T, V, 3) world m: the mesh's vertices posed by ``obj_pose``; raises DataError when the mesh cannot be read or
    they miss the file's ``obj_verts`` (same vertex count) by > 1e-5 m."""
    Rm = obj_pose[:, :3, :3]
    mesh = load_mesh(obj_path, "mesh", process=False)  # vertex order must match obj_verts
    world = np.einsum("tij,nj->tni", Rm, mesh.vertices) + obj_pose[:, None, :3, 3]
    if "obj_verts" in data:
        ov = get_array(data, "obj_verts", path, shape=(T, -1, 3))
        if ov.shape[1] == world.shape[1]:
            err = float(np.abs(world - ov).max())
            if err > 1e-5:
                raise DataError(
                    path,
                    "obj_pose",
                    f"applied to {obj_path.name} it misses obj_verts by {err:.2e} m (> 1e-5): wrong mesh?",
                )
    return world
