"""GRAB adapter: ``grab/recordings/<name>.pkl`` + ``grab/objects/`` -> Recording (``docs/data.md``); the file's
quaternions wxyz, the Recording's xyzw."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from replay.data.adapter_fields import (
    LIFT_THRESHOLD_M,
    get_array,
    get_field,
    load_dict,
    required_onset,
    top_surface_height,
    wxyz_to_xyzw,
)
from replay.data.confine import plain_name
from replay.data.mesh_io import shared_mesh
from replay.data.object_mjcf import load_grab_object
from replay.data.types import ObjectTrack, Recording
from replay.errors import DataError

#: Hz, GRAB's capture rate (Taheri et al., ECCV 2020: "captured at 120 fps"); not in the files
GRAB_FPS = 120.0


def grab_objects_dir(recording: Path) -> Path:
    """``<grab>/objects`` beside ``<grab>/recordings``."""
    return Path(recording).resolve().parent.parent / "objects"


def load_grab(path: str | Path, objects_dir: str | Path | None = None) -> Recording:
    """One GRAB recording; ``objects_dir`` default :func:`grab_objects_dir`. Raises DataError: unreadable or hostile
    pickle, missing field, wrong shape, NaN (first bad frame named), non-unit quaternion, missing object model or
    mesh, an object name not a plain folder name (``path_escape``), an object never lifted by 1 cm."""
    path = Path(path)
    objects_dir = Path(objects_dir) if objects_dir is not None else grab_objects_dir(path)
    a = _read_arrays(load_dict(path), path)
    obj_dir = objects_dir / plain_name(a["obj_name"], path, "object.name")
    if not obj_dir.is_dir():
        raise DataError(path, "object.name", f"no object model for {a['obj_name']!r} in {objects_dir}")
    # GRAB's objects are 3D prints of ContactDB's meshes (physics choice object_print)
    asset = dataclasses.replace(load_grab_object(obj_dir), made="printed")
    table_asset = load_grab_object(objects_dir / "table")
    support, rule, support_col = _table_support(table_asset, a["table_loc"], a["table_quat"], a["obj_loc"][0, :2])
    onset = required_onset(a["obj_loc"], path, "object.loc")
    T = a["landmarks"].shape[0]
    rec = Recording(
        name=path.stem,
        dataset="grab",
        source=path,
        fps=GRAB_FPS,
        time=np.arange(T) / GRAB_FPS,
        hand_side="right",
        valid=np.ones(T, bool),
        wrist_pos=None,
        wrist_quat=None,
        finger_quat=None,
        landmarks=a["landmarks"],
        objects=[ObjectTrack(asset=asset, pos=a["obj_loc"], quat=a["obj_quat"], tracked=True)],
        target=0,
        support_height=support,
        grasp_frame=onset,
        mano=None,
        meta=_meta(a, table_asset, rule, support_col, objects_dir),
    )
    return rec.validate()


def _meta(a: dict, table_asset, rule: str, support_col: float, objects_dir: Path) -> dict:
    """The recording's ``meta``: recorded wrist, table, how support and grasp frame were found."""
    return {
        "grab_wrist_loc": a["wrist_loc"],
        "grab_wrist_quat_xyzw": a["wrist_quat"],
        "grab_wrist_note": "recorded hand.wrist_loc/rot (rot converted wxyz->xyzw); upstream pre-rotated "
        "GRAB's global orient by rotvec (1.2092,-1.2092,-1.2092): not the manosim root pose",
        "table": {"asset": table_asset, "pos": a["table_loc"], "quat": a["table_quat"]},
        "support_rule": f"table visual mesh's top surface below the object's first xy ({rule})",
        "support_height_collision": support_col,
        "grasp_rule": f"lift onset: first frame object z > z[0] + {LIFT_THRESHOLD_M} m",
        "objects_dir": str(objects_dir),
        "fps_source": f"documentation: GRAB is captured at {GRAB_FPS:g} Hz (Taheri et al., ECCV 2020); not in the file",
    }


def _read_arrays(data: dict, path: Path) -> dict:
    """A GRAB pickle's arrays: ``landmarks`` (T, 21, 3) m, ``wrist_loc`` (T, 3) m, ``obj_name``, ``obj_loc`` (T, 3) m,
    ``table_loc`` (3,) m; ``wrist_quat``, ``obj_quat`` (T, 4), ``table_quat`` (4,) wxyz -> xyzw. Raises DataError:
    missing field, wrong shape, NaN, non-unit quaternion, under 2 frames, ``wrist_loc`` not ``joints_target[:, 0]``."""
    landmarks = get_array(data, "hand.joints_target", path, shape=(-1, 21, 3))
    T = landmarks.shape[0]
    wrist_loc = get_array(data, "hand.wrist_loc", path, shape=(T, 3))
    wrist_rot = get_array(data, "hand.wrist_rot", path, shape=(T, 4))
    obj_name = get_field(data, "object.name", path)
    if not isinstance(obj_name, str) or not obj_name:
        raise DataError(path, "object.name", f"expected a non-empty string, got {obj_name!r}")
    obj_loc = get_array(data, "object.loc", path, shape=(T, 3))
    obj_rot = get_array(data, "object.rot", path, shape=(T, 4))
    table_loc = get_array(data, "table.loc", path, shape=(3,))
    table_rot = get_array(data, "table.rot", path, shape=(4,))
    if T < 2:
        raise DataError(path, "hand.joints_target", f"need at least 2 frames, got {T}")

    # README: joints_target[:, 0] == wrist_loc exactly; a mismatch means fields from different takes.
    off = np.linalg.norm(landmarks[:, 0] - wrist_loc, axis=1)
    if off.max() > 1e-5:
        bad = int(np.argmax(off > 1e-5))
        raise DataError(
            path,
            "hand.wrist_loc",
            f"differs from hand.joints_target[:, 0] by {off.max() * 1000:.2f} mm "
            f"(first at frame {bad}); the file should store the same point",
        )
    return {
        "landmarks": landmarks,
        "wrist_loc": wrist_loc,
        "obj_name": obj_name,
        "obj_loc": obj_loc,
        "table_loc": table_loc,
        "wrist_quat": wxyz_to_xyzw(wrist_rot, path, "hand.wrist_rot"),
        "obj_quat": wxyz_to_xyzw(obj_rot, path, "object.rot"),
        "table_quat": wxyz_to_xyzw(table_rot, path, "table.rot"),
    }


def _table_support(
    table_asset, table_loc: np.ndarray, table_quat: np.ndarray, obj_xy: np.ndarray
) -> tuple[float, str, float]:
    """``(support z m, rule, collision-part support z m)``: the top of the table's visual mesh and of its first
    collision part below ``obj_xy`` (2,) m, the table at ``table_loc`` (3,) m / ``table_quat`` (4,) xyzw."""
    R = Rotation.from_quat(table_quat).as_matrix()
    table_mesh = shared_mesh(table_asset.visual_mesh, "visual_mesh", table_asset.source)
    support, rule = top_surface_height(table_mesh, obj_xy, loc=table_loc, rot=R)
    table_col = shared_mesh(table_asset.collision_meshes[0], "collision_meshes[0]", table_asset.source)
    support_col, _ = top_surface_height(table_col, obj_xy, loc=table_loc, rot=R)
    return support, rule, support_col
