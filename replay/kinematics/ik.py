"""Landmark inverse kinematics: fit the manosim hand's pose to recorded MANO landmarks.

For datasets that store only the 21 landmarks (GRAB), the root pose of ``mano_body_0`` and
the 15 ball-joint rotations are fitted per frame by :class:`~replay.kinematics.ik_solver.LandmarkIK`
(its module doc gives the unknowns, residuals and Jacobian), warm-started from the previous
fitted frame.

The fitted frames are every ``stride``-th frame of the requested window (GRAB is
120 Hz and the replay runs at 30 Hz, so ``stride=4`` by default); the frames in
between are filled by linear interpolation (positions) and slerp (rotations) in
:func:`interpolate_pose`. Results are cached on disk in ``$REPLAY_CACHE/ik`` (or
``data/cache/ik``) under a SHA-256 of the landmarks, the hand geometry, the options
and :data:`IK_VERSION`.
"""

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
from replay.kinematics.ik_solver import IKOptions, IKResult, LandmarkIK
from replay.kinematics.model import NUM_JOINTS, HandKinematics

__all__ = [
    "IK_VERSION",
    "IKOptions",
    "IKResult",
    "LandmarkIK",
    "default_cache_dir",
    "fit_landmarks",
    "interpolate_pose",
]

#: bump when the fitting changes, so cached results are recomputed.
IK_VERSION = 2


def default_cache_dir() -> Path:
    """``$REPLAY_CACHE`` if set, else ``data/cache`` (relative to the working directory);
    the project's one cache root, :func:`replay.data.cache.cache_dir`."""

    return cache_dir()


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
    window: tuple[int, int] | None = None,
    options: IKOptions | None = None,
    cache: bool | str | Path = True,
    progress: bool = False,
    source: str | Path | None = None,
) -> IKResult:
    """Fit the hand to a landmark sequence (cached on disk).

    Args:
        kin: hand model (its side must match the recorded hand).
        landmarks: (T, 21, 3) world landmarks in manopth order, m.
        valid: (T,) bool; invalid frames are not fitted. Default all valid.
        window: ``(start, stop)`` frame range to fit (default the whole sequence);
            frames ``start, start+stride, ...`` below ``stop`` and the last valid
            frame of the window are fitted.
        options: :class:`IKOptions`.
        cache: True for :func:`default_cache_dir`, a folder, or False to disable.
        progress: show a tqdm bar.
        source: file the landmarks came from (for error messages).

    Returns:
        :class:`IKResult` at the fitted frames.

    Raises:
        DataError: bad shapes, non-finite landmarks in valid frames, empty window.
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
    """(F,) frame indices :func:`fit_landmarks` fits: every ``opt.stride``-th frame of ``window``
    and its last valid frame, valid frames only.

    Raises:
        DataError: bad shapes, stride < 1, no valid frame in the window, non-finite landmarks in a
            fitted frame.
    """
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
    """The cached :class:`IKResult` at ``path``, or None (missing; a corrupt entry is deleted and
    recomputed, never trusted)."""
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
    """Write ``res`` to ``path`` (npz, written under a temporary name and renamed)."""
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
    frames: np.ndarray, wrist_pos: np.ndarray, wrist_quat: np.ndarray, finger_quat: np.ndarray, T: int
):
    """Fill a pose known at ``frames`` into all T frames.

    Positions are interpolated linearly, rotations by slerp; frames before the first
    / after the last known frame hold the nearest known pose.

    Args:
        frames: (F,) increasing frame indices; wrist_pos (F,3) m; wrist_quat (F,4)
            xyzw; finger_quat (F,15,4) xyzw; T: number of output frames.

    Returns:
        ``(wrist_pos (T,3), wrist_quat (T,4), finger_quat (T,15,4))``, xyzw.
    """
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
