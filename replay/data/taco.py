"""TACO adapter: ``taco/<seq>.pkl`` + ``taco/<seq>.obj`` -> Recording.

Source: two TACO sequences as preprocessed by github.com/Meowuu7/GeneOH-Diffusion
(``data/taco/source_data``); layout in the mirror README.

What the adapter produces (see :class:`~replay.data.types.Recording`):

* ``fps`` 30 (TACO's capture rate; not stored in the files).
* ``mano``: :class:`~replay.data.types.MANOParams` with ``finger_pose`` (T, 15, 3)
  = ``hand_pose[:, 3:]`` (rad, MANO joint order), ``global_orient`` (T, 3) =
  ``hand_pose[:, :3]``, ``trans`` (T, 3) m, ``betas`` (10,), ``vertices`` (T, 778, 3)
  world m. ``flat_hand_mean`` is None: the files do not say whether the 45
  finger values are relative to MANO's mean pose; :mod:`replay.kinematics`
  measures which reading fits ``vertices``. ``meta["hand_faces"]`` (1538, 3).
* ``landmarks``, ``wrist_*``, ``finger_quat`` are None (no landmark or joint data;
  the kinematics layer derives them from the MANO parameters).
* ``hand_side`` "left": measured, not assumed. Posing manosim's hands with these
  MANO parameters, the left model puts its fingertips a median 10.1 mm from the
  recorded fingertip vertices (``hand_verts`` ids 744/320/443/554/671) and the right
  model 95-105 mm, on both mirrored sequences (tests/test_kinematics_mano.py).
* One tracked object: ``obj_pose`` (T, 4, 4) world-from-object applied to the
  ``.obj`` vertices (README: reproduces ``obj_verts`` to 1e-7 m; checked here to
  1e-5 m). Collision parts: CoACD decomposition, cached
  (:func:`replay.data.objects.load_taco_object`).
* ``support_height``: TACO gives no table geometry. It is the median, over the
  rest frames before lift onset, of the object's lowest vertex z (the object
  rests on the support there). By construction the first-frame resting gap is
  then ~0; ``meta["hand_lowest_z"]`` (lowest MANO vertex in any frame) is kept
  as an independent check of the support (the fitted hand mesh may penetrate it
  by a few mm).
* ``grasp_frame``: lift onset, first frame the object is more than 1 cm above its
  first-frame height.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from replay.data.adapter_fields import LIFT_THRESHOLD_M, get_array, lift_onset
from replay.data.mesh_io import load_mesh
from replay.data.objects import load_taco_object
from replay.data.safe_pickle import load_pickle
from replay.data.types import MANOParams, ObjectTrack, Recording
from replay.errors import DataError

#: TACO capture rate, Hz (Liu et al., CVPR 2024: allocentric cameras at 30 fps).
TACO_FPS = 30.0
TACO_FPS_SOURCE = f"documentation: TACO's cameras record at {TACO_FPS:g} fps (Liu et al., CVPR 2024); not in the file"


def load_taco(path: str | Path, obj_path: str | Path | None = None, coacd_settings: dict | None = None) -> Recording:
    """Read one TACO sequence into the canonical form.

    Args:
        path: ``<seq>.pkl``.
        obj_path: object mesh (default ``<seq>.obj`` beside the pickle).
        coacd_settings: CoACD keyword arguments (default
            :data:`replay.data.objects.COACD_SETTINGS`).

    Raises:
        DataError: bad pickle, missing field, wrong shape, NaN (first bad frame named),
            ``obj_pose`` not a rigid transform, ``obj_pose`` not reproducing
            ``obj_verts``, missing mesh, object never lifted by 1 cm.
    """
    path = Path(path)
    obj_path = Path(obj_path) if obj_path is not None else path.with_suffix(".obj")
    data = load_pickle(path)
    if not isinstance(data, dict):
        raise DataError(path, None, f"expected a dict at top level, got {type(data).__name__}")
    pose, trans, betas, verts, faces = _hand_arrays(data, path)
    T = pose.shape[0]
    obj_pose = get_array(data, "obj_pose", path, (T, 4, 4))
    Rm = _rigid_rotations(obj_pose, path)
    asset = load_taco_object(obj_path, name=path.stem, settings=coacd_settings)
    world = _object_vertices_world(data, path, obj_path, obj_pose, T)
    onset = lift_onset(obj_pose[:, :3, 3], LIFT_THRESHOLD_M)
    if onset is None:
        raise DataError(
            path, "obj_pose", f"object never rises {LIFT_THRESHOLD_M * 100:.0f} cm above its start: no lift onset"
        )
    lowest = world[:, :, 2].min(axis=1)
    support = float(np.median(lowest[: max(onset, 1)]))

    # Re-orthonormalise (float32 input) before converting to quaternions.
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
    """``(hand_pose (T, 48) rad axis-angle, hand_trans (T, 3) m, hand_shape (10,), hand_verts
    (T, 778, 3) world m, hand_faces (1538, 3) int)`` of a TACO pickle.

    Raises:
        DataError: missing field, wrong shape, NaN, fewer than 2 frames.
    """
    pose = get_array(data, "hand_pose", path, (-1, 48))
    T = pose.shape[0]
    if T < 2:
        raise DataError(path, "hand_pose", f"need at least 2 frames, got {T}")
    trans = get_array(data, "hand_trans", path, (T, 3))
    betas = get_array(data, "hand_shape", path, (10,))
    verts = get_array(data, "hand_verts", path, (T, 778, 3))
    faces = get_array(data, "hand_faces", path, (1538, 3), dtype=np.int64)
    return pose, trans, betas, verts, faces


def _rigid_rotations(obj_pose: np.ndarray, path: Path) -> np.ndarray:
    """(T, 3, 3) rotation blocks of ``obj_pose`` (T, 4, 4).

    Raises:
        DataError: a frame whose block is not a rotation (orthonormal to 1e-3, det 1) or whose
            last row is not (0, 0, 0, 1).
    """
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
    """(T, V, 3) world m: the mesh's vertices posed by ``obj_pose``, checked against the file's
    ``obj_verts`` where it has them with the same vertex count.

    Raises:
        DataError: the mesh cannot be read, or the posed vertices miss ``obj_verts`` by > 1e-5 m.
    """
    Rm = obj_pose[:, :3, :3]
    mesh = load_mesh(obj_path, "mesh", process=False)  # vertex order must match obj_verts
    world = np.einsum("tij,nj->tni", Rm, mesh.vertices) + obj_pose[:, None, :3, 3]
    if "obj_verts" in data:
        ov = get_array(data, "obj_verts", path, (T, -1, 3))
        if ov.shape[1] == world.shape[1]:
            err = float(np.abs(world - ov).max())
            if err > 1e-5:
                raise DataError(
                    path,
                    "obj_pose",
                    f"applied to {obj_path.name} it misses obj_verts by {err:.2e} m (> 1e-5): wrong mesh?",
                )
    return world


def load_recording(path: Path, root: Path, name: str, **kwargs) -> Recording:
    """The registry's entry (:mod:`replay.datasets`, which checks that ``path`` exists): TACO
    sequence ``name`` at ``path`` (its mesh beside it).

    Raises:
        DataError: any error of :func:`load_taco`.
    """
    return load_taco(path, **kwargs)
