"""Landmark IK: the manosim hand's pose fitted to recorded landmarks (GRAB) every ``stride``-th frame
(:class:`~replay.kinematics.ik_solver.LandmarkIK`), interpolated between, cached in ``$REPLAY_CACHE/ik``."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from replay.data.cache import cache_dir
from replay.errors import DataError
from replay.kinematics.ik_solver import (
    DEFAULT_LANDMARK_WEIGHTS,
    FITTED_LANDMARK_WEIGHTS,
    IKOptions,
    IKResult,
    LandmarkIK,
)
from replay.kinematics.model import NUM_JOINTS, HandKinematics

__all__ = [
    "IK_VERSION",
    "IKOptions",
    "IKResult",
    "LandmarkIK",
    "default_cache_dir",
    "fit_landmarks",
    "ik_options_for",
    "interpolate_pose",
]

#: bump when the fitting changes, so cached results are recomputed
IK_VERSION = 2


def default_cache_dir() -> Path:
    """:func:`replay.data.cache.cache_dir`: ``$REPLAY_CACHE``, else ``data/cache``."""
    return cache_dir()


def ik_options_for(mjcf_path: str | Path, **changes) -> IKOptions:
    """The default :class:`IKOptions` for the hand of ``mjcf_path`` (``changes`` applied): a fitted hand's
    landmark weights are :data:`FITTED_LANDMARK_WEIGHTS`, others :data:`DEFAULT_LANDMARK_WEIGHTS`."""
    from replay.kinematics.fitted_hand import is_fitted_hand  # trimesh, only to tell

    weights = FITTED_LANDMARK_WEIGHTS if is_fitted_hand(mjcf_path) else DEFAULT_LANDMARK_WEIGHTS
    return IKOptions(**{"landmark_weights": weights, **changes})


def _cache_key(kin: HandKinematics, landmarks: np.ndarray, frames: np.ndarray, opt: IKOptions) -> str:
    h = hashlib.sha256()
    h.update(f"ik-v{IK_VERSION}".encode())
    for arr in (kin.body_pos, kin.body_rot, kin.anchor, kin.landmark_local, kin.parent):
        h.update(np.ascontiguousarray(arr).tobytes())
    h.update(np.ascontiguousarray(landmarks[frames], dtype=np.float32).tobytes())
    h.update(np.ascontiguousarray(frames, dtype=np.int64).tobytes())
    h.update(json.dumps(asdict(opt), sort_keys=True).encode())
    return h.hexdigest()[:32]


def fit_landmarks(
    kin: HandKinematics,
    landmarks: np.ndarray,
    valid: np.ndarray | None = None,
    *,
    window: tuple[int, int] | None = None,
    options: IKOptions | None = None,
    cache: bool | str | Path = True,
    progress: bool = False,
    source: str | Path | None = None,
) -> IKResult:
    """:class:`IKResult` of the hand fitted to ``landmarks`` (T, 21, 3) world m, manopth order, at valid frames
    ``start, start + stride, ...`` of ``window`` and its last valid one; ``cache``: True, a folder, or False.

    Raises:
        DataError: bad shapes, non-finite landmarks in valid frames, empty window (naming ``source``).
    """
    opt = options or IKOptions()
    landmarks = np.asarray(landmarks)
    frames = _frames_to_fit(landmarks, valid, window, opt, source)
    path = None
    if cache:
        cdir = default_cache_dir() if cache is True else Path(cache)
        path = cdir / "ik" / f"{_cache_key(kin, landmarks, frames, opt)}.npz"
        hit = _read_cached(path, opt)
        if hit is not None:
            return hit
    res = LandmarkIK(kin, opt).fit(landmarks, frames, progress=progress)
    if path is not None:
        _write_cached(path, res)
    return res


def _frames_to_fit(
    landmarks: np.ndarray,
    valid: np.ndarray | None,
    window: tuple[int, int] | None,
    opt: IKOptions,
    source: str | Path | None,
) -> np.ndarray:
    """(F,) frames :func:`fit_landmarks` fits; DataError for bad shapes, stride < 1, no valid frame, non-finite
    landmarks in a fitted frame."""
    if landmarks.ndim != 3 or landmarks.shape[1:] != (21, 3):
        raise DataError(source, "landmarks", f"expected shape (T, 21, 3), got {landmarks.shape}")
    T = landmarks.shape[0]
    valid = np.ones(T, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    if valid.shape != (T,):
        raise DataError(source, "valid", f"expected shape ({T},), got {valid.shape}")
    if opt.stride < 1:
        raise DataError(source, "stride", "must be >= 1")
    start, stop = (0, T) if window is None else (max(0, int(window[0])), min(T, int(window[1])))
    frames = np.arange(start, stop, opt.stride)
    vidx = np.flatnonzero(valid[start:stop]) + start
    if len(vidx) and vidx[-1] not in frames:
        frames = np.append(frames, vidx[-1])
    frames = frames[valid[frames]]
    if len(frames) == 0:
        raise DataError(source, "landmarks", f"no valid frame in window [{start}, {stop})")
    if not np.all(np.isfinite(landmarks[frames])):
        bad = frames[~np.all(np.isfinite(landmarks[frames].reshape(len(frames), -1)), axis=1)][0]
        raise DataError(source, "landmarks", f"non-finite landmarks at frame {bad} (marked valid)")
    return frames


def _read_cached(path: Path, opt: IKOptions) -> IKResult | None:
    """The cached :class:`IKResult` at ``path``, or None (missing or corrupt: deleted)."""
    if not path.is_file():
        return None
    try:
        z = np.load(path)
        return IKResult(
            z["frames"],
            z["wrist_pos"],
            z["wrist_quat"],
            z["finger_quat"],
            z["residual"],
            z["nfev"],
            float(z["seconds"]),
            True,
            asdict(opt),
            z["restarts"],
        )
    except Exception:  # a corrupt cache entry is recomputed, never trusted
        path.unlink(missing_ok=True)
        return None


def _write_cached(path: Path, res: IKResult) -> None:
    """``res`` to ``path`` (npz, written under a temporary name and renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + f".tmp{os.getpid()}.npz")
    np.savez_compressed(
        tmp,
        frames=res.frames,
        wrist_pos=res.wrist_pos,
        wrist_quat=res.wrist_quat,
        finger_quat=res.finger_quat,
        residual=res.residual,
        nfev=res.nfev,
        seconds=res.seconds,
        restarts=res.restarts,
    )
    os.replace(tmp, path)


def interpolate_pose(
    frames: np.ndarray, wrist_pos: np.ndarray, wrist_quat: np.ndarray, *, finger_quat: np.ndarray, T: int
):
    """A pose known at increasing ``frames`` (F,) -> ``(wrist_pos (T, 3) m, wrist_quat (T, 4), finger_quat
    (T, 15, 4))`` xyzw: positions linear, rotations slerped, the nearest known pose held outside."""
    frames = np.asarray(frames)
    q = np.clip(np.arange(T), frames[0], frames[-1]).astype(np.float64)
    pos = np.stack([np.interp(q, frames, wrist_pos[:, a]) for a in range(3)], axis=1)
    if len(frames) == 1:
        return pos, np.repeat(wrist_quat, T, 0), np.repeat(finger_quat, T, 0)
    wq = Slerp(frames, Rotation.from_quat(wrist_quat))(q).as_quat()
    fq = np.stack(
        [Slerp(frames, Rotation.from_quat(finger_quat[:, j]))(q).as_quat() for j in range(NUM_JOINTS)], axis=1
    )
    return pos, wq, fq
