"""HUG-Bench adapter: a scene's ``aria_data.pkl`` + its objects' ``sim_assets`` -> Recording (``docs/data.md``).
Objects are untracked and rest; the grasp frame is the first grasp."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from replay.data.adapter_fields import load_dict
from replay.data.limits import MAX_PLAUSIBLE_FPS_HZ
from replay.data.mesh_io import load_mesh
from replay.data.objects import hug_object_pose, load_hug_object
from replay.data.types import TIP_LANDMARKS, MANOParams, ObjectTrack, Recording
from replay.errors import DataError

#: m, fingertip to surface that counts as touching: landmarks are joint centres ~0.8-1 cm inside the skin (MANO's
#: fingertip radius), plus tracking noise
GRASP_DIST_M = 0.015
#: frames the touch must last (0.3 s at HUG's 10 fps)
GRASP_HOLD_FRAMES = 3


def _mat4(value, source: Path, field: str) -> np.ndarray:
    try:
        m = np.asarray(value, float)
    except (TypeError, ValueError):
        raise DataError(source, field, f"expected a 4x4 matrix, got {type(value).__name__}") from None
    if m.shape != (4, 4):
        raise DataError(source, field, f"expected shape (4, 4), got {m.shape}")
    if not np.all(np.isfinite(m)):
        raise DataError(source, field, "non-finite values")
    R = m[:3, :3]
    if (
        np.abs(R.T @ R - np.eye(3)).max() > 1e-3
        or abs(np.linalg.det(R) - 1) > 1e-3
        or np.abs(m[3] - [0, 0, 0, 1]).max() > 1e-6
    ):
        raise DataError(source, field, "not a rigid transform (rotation not orthonormal or last row not 0 0 0 1)")
    return m


def _pose15(value, source: Path, field: str) -> np.ndarray:
    try:
        p = np.asarray(value, float)
    except (TypeError, ValueError):
        raise DataError(source, field, f"expected a numeric array, got {type(value).__name__}") from None
    if p.size != 45 or p.shape not in ((1, 15, 3), (15, 3), (1, 45), (45,)):
        raise DataError(source, field, f"expected 15x3 axis-angle (optionally batched), got shape {p.shape}")
    return p.reshape(15, 3)


def _hand_entry(frame: dict, hand: str, source: Path, t: int):
    tracking = frame.get("mano_hand_tracking")
    if tracking is None:
        return None
    if not isinstance(tracking, dict):
        raise DataError(
            source, f"frame_data[{t}].mano_hand_tracking", f"expected a dict, got {type(tracking).__name__}"
        )
    entry = tracking.get(hand)
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise DataError(
            source, f"frame_data[{t}].mano_hand_tracking.{hand}", f"expected a dict, got {type(entry).__name__}"
        )
    return entry


def _surface_distance(mesh: trimesh.Trimesh, points: np.ndarray) -> np.ndarray:
    """Unsigned distance of ``points`` (N, 3) to ``mesh``'s surface, m (0 inside a watertight mesh)."""
    _, dist, _ = trimesh.proximity.closest_point(mesh, points)
    if mesh.is_watertight:
        dist = np.where(mesh.contains(points), 0.0, dist)
    return dist


def _first_grasp(
    landmarks: np.ndarray, valid: np.ndarray, meshes_world: list[trimesh.Trimesh], path: Path, hand: str
) -> tuple[int, int]:
    """``(frame, object index)``: the first of :data:`GRASP_HOLD_FRAMES` valid frames with the thumb tip and another
    fingertip within :data:`GRASP_DIST_M` of one object's surface. Raises DataError when there is none."""
    T = landmarks.shape[0]
    tips = np.full((T, len(meshes_world), len(TIP_LANDMARKS)), np.inf)
    idx = np.flatnonzero(valid)
    for o, mesh in enumerate(meshes_world):
        if idx.size:
            pts = landmarks[idx][:, TIP_LANDMARKS].reshape(-1, 3)
            tips[idx, o] = _surface_distance(mesh, pts).reshape(idx.size, len(TIP_LANDMARKS))
    near = tips < GRASP_DIST_M
    touch = near[:, :, 0] & near[:, :, 1:].any(axis=2) & valid[:, None]  # (T, O)
    hold = GRASP_HOLD_FRAMES
    for t in range(T - hold + 1):
        run = touch[t : t + hold].all(axis=0)
        if run.any():
            # several objects at once: the one with the smaller mean tip distance
            cand = np.flatnonzero(run)
            return t, int(cand[np.argmin(tips[t : t + hold, cand].mean(axis=(0, 2)))])
    raise DataError(
        path,
        f"frame_data.mano_hand_tracking.{hand}.landmarks",
        f"no grasp found: thumb tip + another fingertip never within {GRASP_DIST_M * 100:.1f} cm of an "
        f"object for {GRASP_HOLD_FRAMES} consecutive valid frames",
    )


def load_hug(aria_data_pkl: str | Path, scene_dir: str | Path, hand: str = "right") -> Recording:
    """One HUG-Bench scene; ``scene_dir`` holds ``<object>/sim_assets/``; ``hand`` ``"right"`` or ``"left"``. Raises
    DataError: bad pickle, missing or ill-shaped fields (frame named), no object assets, no valid frame, no grasp."""
    path = Path(aria_data_pkl)
    scene_dir = Path(scene_dir)
    if hand not in ("right", "left"):
        raise DataError(path, "hand", f"expected 'right' or 'left', got {hand!r}")
    fps, frames = _read_header(path)
    hf = _read_hand_frames(frames, hand, path)
    T, valid, lm, Tww = len(frames), hf.valid, hf.landmarks, hf.T_world_wrist
    tracks, meshes_world, placement, lowest = _read_objects(scene_dir, T)

    grasp, target = _first_grasp(lm, valid, meshes_world, path, hand)

    l0 = np.linalg.norm(lm[valid, 0] - Tww[valid, :3, 3], axis=1)
    rec = Recording(
        name=f"{scene_dir.parent.name}/{scene_dir.name}",
        dataset="hug-bench",
        source=path,
        fps=fps,
        time=np.arange(T) / fps,
        hand_side=hand,
        valid=valid,
        wrist_pos=None,
        wrist_quat=None,
        finger_quat=None,
        landmarks=lm,
        objects=tracks,
        target=target,
        support_height=lowest[tracks[target].name],
        grasp_frame=grasp,
        mano=MANOParams(
            finger_pose=hf.pose,
            global_orient=None,
            trans=None,
            T_world_wrist=Tww,
            betas=hf.betas,
            flat_hand_mean=None,
            vertices=None,
        ),
        meta={
            "fps_source": f"file: {path.name} fps",
            "frame_index": hf.index,
            "object_placement": placement,
            "object_lowest_z": lowest,
            "landmark0_to_wrist_mm": float(np.median(l0) * 1000),
            "missing_frames": int((~valid).sum()),
            "grasp_rule": f"first frame of {GRASP_HOLD_FRAMES} consecutive valid frames with thumb tip and another "
            f"fingertip within {GRASP_DIST_M} m of the same object's visual surface",
            "support_rule": "target object's lowest visual-mesh point (resting pose)",
            "scene_dir": str(scene_dir),
        },
    )
    return rec.validate()


def _read_header(path: Path) -> tuple[float, list]:
    """``(fps, frame_data)`` of an ``aria_data.pkl``; DataError when not a dict, ``fps`` missing or over
    ``MAX_PLAUSIBLE_FPS_HZ``, ``frame_data`` missing or under 2 frames."""
    data = load_dict(path)
    if "fps" not in data:
        raise DataError(path, "fps", "missing field")
    try:
        fps = float(data["fps"])
    except (TypeError, ValueError):
        raise DataError(path, "fps", f"expected a number, got {data['fps']!r}") from None
    if not (np.isfinite(fps) and 0 < fps <= MAX_PLAUSIBLE_FPS_HZ):
        raise DataError(
            path,
            "fps",
            f"implausible frame rate {fps:g} Hz (a hand recording is read at up to {MAX_PLAUSIBLE_FPS_HZ:g} Hz)",
            cause="frame_rate",
        )
    frames = data.get("frame_data")
    if frames is None:
        raise DataError(path, "frame_data", "missing field")
    if not isinstance(frames, (list, tuple)) or len(frames) < 2:
        raise DataError(path, "frame_data", "expected a list of at least 2 frames")
    return fps, frames


@dataclass(frozen=True)
class _HandFrames:
    """One hand's per-frame arrays (NaN where not valid): ``landmarks`` (T, 21, 3) world m, ``pose`` (T, 15, 3) rad,
    ``T_world_wrist`` (T, 4, 4), ``betas`` (T, 10) or None, ``index`` (T,) the file's frame indices."""

    valid: np.ndarray
    landmarks: np.ndarray
    pose: np.ndarray
    T_world_wrist: np.ndarray
    betas: np.ndarray | None
    index: np.ndarray


def _read_hand_frames(frames: list, hand: str, path: Path) -> _HandFrames:
    """Every frame's device pose and ``hand``. Raises DataError: a frame not a dict or lacking a field (index named),
    indices not strictly increasing, or no valid frame."""
    T = len(frames)
    valid = np.zeros(T, bool)
    lm = np.full((T, 21, 3), np.nan)
    pose = np.full((T, 15, 3), np.nan)
    Tww = np.full((T, 4, 4), np.nan)
    betas = np.full((T, 10), np.nan)
    have_betas = False
    index = np.zeros(T, np.int64)
    for t, fr in enumerate(frames):
        where = f"frame_data[{t}]"
        if not isinstance(fr, dict):
            raise DataError(path, where, f"expected a dict, got {type(fr).__name__}")
        for key in ("index", "T_world_device"):
            if key not in fr:
                raise DataError(path, f"{where}.{key}", "missing field")
        index[t] = int(fr["index"])
        T_wd = _mat4(fr["T_world_device"], path, f"{where}.T_world_device")
        entry = _hand_entry(fr, hand, path, t)
        if entry is None:
            continue
        read = _read_hand(entry, path, f"{where}.mano_hand_tracking.{hand}")
        if read is None:
            continue  # a dropout written as NaN: treat like a missing hand
        T_dw, p, l_dev, b = read
        valid[t] = True
        Tww[t] = T_wd @ T_dw
        lm[t] = l_dev @ T_wd[:3, :3].T + T_wd[:3, 3]
        pose[t] = p
        if b is not None:
            betas[t] = b
            have_betas = True
    if not np.all(np.diff(index) > 0):
        raise DataError(path, "frame_data.index", "frame indices are not strictly increasing")
    if not valid.any():
        raise DataError(path, f"frame_data.mano_hand_tracking.{hand}", f"no frame has a valid {hand} hand")
    return _HandFrames(valid, lm, pose, Tww, betas if have_betas else None, index)


def _read_hand(entry: dict, path: Path, hw: str):
    """``(T_device_wrist (4, 4), pose (15, 3) rad, landmarks (21, 3) device m, betas (10,) or None)``, or None for a
    non-finite dropout; DataError for a missing or ill-shaped field."""
    for key in ("T_device_wrist", "pose", "landmarks"):
        if key not in entry:
            raise DataError(path, f"{hw}.{key}", "missing field")
    T_dw = _mat4(entry["T_device_wrist"], path, f"{hw}.T_device_wrist")
    p = _pose15(entry["pose"], path, f"{hw}.pose")
    try:
        l_dev = np.asarray(entry["landmarks"], float)
    except (TypeError, ValueError):
        raise DataError(path, f"{hw}.landmarks", "expected a numeric array") from None
    if l_dev.shape != (21, 3):
        raise DataError(path, f"{hw}.landmarks", f"expected shape (21, 3), got {l_dev.shape}")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(l_dev))):
        return None
    betas = None
    for key in ("betas", "shape", "shape_params"):
        if key in entry and entry[key] is not None:
            b = np.asarray(entry[key], float).reshape(-1)
            if b.size >= 10:
                betas = b[:10]
            break
    return T_dw, p, l_dev, betas


def _read_objects(scene_dir: Path, T: int) -> tuple[list, list, dict, dict]:
    """``(tracks, meshes_world, placement, lowest)`` per ``<object>/sim_assets``: an untracked resting ObjectTrack,
    its visual mesh in the world (m), its placement rule, its lowest z (m). Raises DataError: no or bad asset."""
    obj_dirs = sorted(p.parent.parent for p in scene_dir.glob("*/sim_assets/visual.obj"))
    if not obj_dirs:
        raise DataError(scene_dir, "sim_assets", "no <object>/sim_assets/visual.obj in the scene folder")
    tracks, meshes_world, placement, lowest = [], [], {}, {}
    for od in obj_dirs:
        asset, wp = load_hug_object(od / "sim_assets", name=od.name)
        pos, rule = hug_object_pose(asset, wp)
        placement[asset.name] = rule
        mesh = load_mesh(asset.visual_mesh, "visual_mesh", asset.source)
        mesh.apply_translation(pos)
        meshes_world.append(mesh)
        lowest[asset.name] = float(mesh.bounds[0, 2])
        tracks.append(
            ObjectTrack(
                asset=asset, pos=np.tile(pos, (T, 1)), quat=np.tile([0.0, 0.0, 0.0, 1.0], (T, 1)), tracked=False
            )
        )
    return tracks, meshes_world, placement, lowest
