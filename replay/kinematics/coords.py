"""Recording -> the imported hand's Newton ``joint_q`` (67): ``[0:3]`` ``mano_body_0``'s world position (m), ``[3:7]``
its quaternion xyzw (the FREE joint), then ``mano_joint_1..15``'s xyzw, 4 each, in MJCF order."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from replay.data.locate import dataset_dir
from replay.data.types import TIP_LANDMARKS, Recording
from replay.datasets import DATASETS
from replay.errors import DataError
from replay.kinematics.ik import IKOptions, fit_landmarks, ik_options_for, interpolate_pose
from replay.kinematics.mano import (
    MANO_TIP_VERTICES,
    fit_wrist_offset,
    mano_to_finger_quat,
    wrist_from_global_orient,
    wrist_from_transform,
)
from replay.kinematics.model import HandKinematics

#: per dataset: its MANO finger values are relative to the flat hand where its files do not say
DEFAULT_FLAT_HAND_MEAN = {n: d.flat_hand_mean for n, d in DATASETS.items() if d.flat_hand_mean is not None}

#: m: a MANO recording whose median fingertip fit is worse is refused, a wrong side or reading (docs/hand.md)
MAX_TIP_FIT_M = 0.025

_KIN_CACHE: dict[tuple[str, str], HandKinematics] = {}


def default_mjcf(side: str, shape: str = "myhand", data_dir: str | Path | None = None) -> Path:
    """The manosim capsule hand MJCF for ``side`` from the staged data or the mirror; DataError if missing."""
    hand = "mano_rhand" if side == "right" else "mano_lhand"
    path = dataset_dir("manosim", data_dir) / "assets" / shape / hand / "capsule_hand.xml"
    if not path.is_file():
        raise DataError(path, None, "manosim capsule hand MJCF missing")
    return path


def load_kinematics(mjcf_path: str | Path, side: str | None = None) -> HandKinematics:
    """:meth:`HandKinematics.from_mjcf`, memoised per (path, side)."""
    key = (str(Path(mjcf_path).resolve()), str(side))
    if key not in _KIN_CACHE:
        _KIN_CACHE[key] = HandKinematics.from_mjcf(mjcf_path, side=side)
    return _KIN_CACHE[key]


def complete_hand(
    recording: Recording,
    mjcf_path: str | Path | None = None,
    ik_options: IKOptions | None = None,
    *,
    window: tuple[int, int] | None = None,
    cache: bool | str | Path = True,
    progress: bool = False,
    check_fit: bool = True,
) -> Recording:
    """A copy of ``recording`` with ``wrist_pos``, ``wrist_quat`` and ``finger_quat`` filled from ``mano``, else by
    landmark IK over ``window`` (``cache``: True, a folder, or False); ``meta["kinematics"]`` says how, fit in mm.
    ``mjcf_path`` default ``myhand``; ``check_fit`` False only to measure a fit over :data:`MAX_TIP_FIT_M`. Raises
    DataError: nothing to compute the hand from, the MJCF of the other side, bad MANO or landmark arrays."""
    rec = recording
    if rec.wrist_pos is not None and rec.wrist_quat is not None and rec.finger_quat is not None:
        return dataclasses.replace(rec, meta=dict(rec.meta))
    path, kin = _hand_model(rec, mjcf_path)
    meta = dict(rec.meta)
    if rec.mano is not None:
        wrist_pos, wrist_quat, finger_quat, info = _hand_from_mano(rec, kin, path, check_fit)
    elif rec.landmarks is not None:
        res = fit_landmarks(
            kin,
            rec.landmarks,
            rec.valid,
            window=window,
            options=ik_options or ik_options_for(path),
            cache=cache,
            progress=progress,
            source=rec.source,
        )
        wrist_pos, wrist_quat, finger_quat = interpolate_pose(
            res.frames, res.wrist_pos, res.wrist_quat, finger_quat=res.finger_quat, T=rec.num_frames
        )
        info = _ik_summary(res, path)
        meta["ik_result"] = res
    else:
        raise DataError(rec.source, "landmarks", "recording has neither MANO parameters nor landmarks")
    meta["kinematics"] = info
    return dataclasses.replace(rec, wrist_pos=wrist_pos, wrist_quat=wrist_quat, finger_quat=finger_quat, meta=meta)


def _hand_model(rec: Recording, mjcf_path: str | Path | None) -> tuple[Path, HandKinematics]:
    """(MJCF, hand model) for :func:`complete_hand`; DataError if the MJCF's side is not the recording's."""
    path = Path(mjcf_path) if mjcf_path is not None else default_mjcf(rec.hand_side)
    kin = load_kinematics(path, side=None if mjcf_path is not None else rec.hand_side)
    if kin.side != rec.hand_side:
        raise DataError(rec.source, "hand_side", f"recording is a {rec.hand_side} hand but {path} is a {kin.side} hand")
    return path, kin


def _ik_summary(res, path: Path) -> dict:
    """``meta["kinematics"]`` of a landmark-IK hand: frames, options, residual (mm), time (s)."""
    r = res.residual * 1000.0
    return {
        "source": "landmark_ik",
        "mjcf": str(path),
        "ik_frames": [int(res.frames[0]), int(res.frames[-1]), int(len(res.frames))],
        "ik_options": res.options,
        "ik_residual_mm": {"median": float(np.median(r)), "p90": float(np.percentile(r, 90)), "max": float(r.max())},
        "ik_seconds": res.seconds,
        "ik_cached": res.cached,
        "ik_restarts": int(np.sum(res.restarts)),
    }


def _hand_from_mano(rec: Recording, kin: HandKinematics, path: Path, check_fit: bool) -> tuple:
    """``(wrist_pos (T, 3) m, wrist_quat (T, 4) xyzw, finger_quat (T, 15, 4) xyzw, info)`` from ``rec.mano``;
    DataError for an unknown reading, no valid frame, an ill-shaped pose, no wrist source, a bad tip fit."""
    mano, T = rec.mano, rec.num_frames
    flat = mano.flat_hand_mean
    if flat is None:
        if rec.dataset not in DEFAULT_FLAT_HAND_MEAN:
            raise DataError(rec.source, "mano.flat_hand_mean", f"unknown for dataset {rec.dataset!r}; set it")
        flat = DEFAULT_FLAT_HAND_MEAN[rec.dataset]
    v = np.asarray(rec.valid, dtype=bool)
    fv = np.flatnonzero(v)
    if len(fv) == 0:
        raise DataError(rec.source, "valid", "no valid hand frame")
    pose = np.asarray(mano.finger_pose, dtype=np.float64)
    if pose.shape[0] != T:
        raise DataError(rec.source, "mano.finger_pose", f"{pose.shape[0]} frames, recording has {T}")
    try:
        finger_quat = mano_to_finger_quat(pose[fv], rec.hand_side, flat)
    except DataError as exc:
        raise DataError(rec.source, "mano.finger_pose", f"{exc} (in valid frames)") from exc
    info = {"source": "mano", "flat_hand_mean": bool(flat), "mjcf": str(path)}
    if mano.T_world_wrist is not None:
        wrist_pos, wrist_quat = wrist_from_transform(np.asarray(mano.T_world_wrist)[fv], rec.source)
        info["wrist"] = "T_world_wrist"
    elif mano.global_orient is not None and mano.trans is not None:
        wrist_pos, wrist_quat = _wrist_with_fitted_j0(rec, kin, fv, finger_quat, flat, check_fit, info)
    else:
        raise DataError(rec.source, "mano", "neither T_world_wrist nor global_orient + trans given")
    if len(fv) < T:  # invalid frames: interpolate between / hold the nearest valid ones
        wrist_pos, wrist_quat, finger_quat = interpolate_pose(fv, wrist_pos, wrist_quat, finger_quat=finger_quat, T=T)
        info["filled_invalid_frames"] = int(T - len(fv))
    return wrist_pos, wrist_quat, finger_quat, info


def _wrist_with_fitted_j0(
    rec: Recording,
    kin: HandKinematics,
    fv: np.ndarray,
    finger_quat: np.ndarray,
    flat: bool,
    check_fit: bool,
    info: dict,
) -> tuple[np.ndarray, np.ndarray]:
    """Wrist ``(pos (n, 3) m, quat (n, 4) xyzw)`` on frames ``fv``, J0 fitted to the tip vertices (else landmarks);
    DataError for nothing to fit to or a median tip error over :data:`MAX_TIP_FIT_M`."""
    mano = rec.mano
    go = np.asarray(mano.global_orient, dtype=np.float64)[fv]
    tr = np.asarray(mano.trans, dtype=np.float64)[fv]
    _, wq = wrist_from_global_orient(go, tr, np.zeros(3))
    if mano.vertices is not None:
        tips = np.asarray(mano.vertices, dtype=np.float64)[fv][:, list(MANO_TIP_VERTICES)]
        info["j0_fit"] = "fingertip vertices " + str(MANO_TIP_VERTICES)
    elif rec.landmarks is not None:
        tips = np.asarray(rec.landmarks, dtype=np.float64)[fv][:, list(TIP_LANDMARKS)]
        info["j0_fit"] = "fingertip landmarks"
    else:
        raise DataError(rec.source, "mano.trans", "MANO's J0 is needed; give vertices or landmarks to fit it")
    j0 = fit_wrist_offset(kin, wq, tr, finger_quat=finger_quat, tips=tips)
    wrist_pos, wrist_quat = wrist_from_global_orient(go, tr, j0)
    info["wrist"] = "global_orient + trans + fitted J0"
    info["j0_m"] = j0.tolist()
    L = kin.fk_landmarks(wrist_pos, wrist_quat, finger_quat)
    tip_err = float(np.median(np.linalg.norm(L[:, list(TIP_LANDMARKS)] - tips, axis=-1)))
    info["tip_fit_median_mm"] = tip_err * 1000.0
    if check_fit and tip_err > MAX_TIP_FIT_M:
        raise DataError(
            rec.source,
            "hand_side",
            f"simulated fingertips are a median {tip_err * 1000:.0f} mm from the recorded ones after fitting "
            f"J0 (expected ~10 mm): wrong hand_side ({rec.hand_side!r}) or flat_hand_mean ({flat})?",
        )
    return wrist_pos, wrist_quat


def hand_coords(recording: Recording) -> np.ndarray:
    """(T, 67) Newton joint_q, quaternions normalised and sign-continuous; DataError for wrist or finger fields
    unfilled (:func:`complete_hand` first) or of the wrong shape."""
    rec = recording
    T = rec.num_frames
    for name in ("wrist_pos", "wrist_quat", "finger_quat"):
        if getattr(rec, name) is None:
            raise DataError(
                rec.source, name, "not filled; call replay.kinematics.coords.complete_hand(recording) first"
            )
    wp = np.asarray(rec.wrist_pos, dtype=np.float64)
    wq = np.asarray(rec.wrist_quat, dtype=np.float64)
    fq = np.asarray(rec.finger_quat, dtype=np.float64)
    for name, arr, shape in (("wrist_pos", wp, (T, 3)), ("wrist_quat", wq, (T, 4)), ("finger_quat", fq, (T, 15, 4))):
        if arr.shape != shape:
            raise DataError(rec.source, name, f"expected shape {shape}, got {arr.shape}")
    wq = _continuous(wq / np.linalg.norm(wq, axis=-1, keepdims=True))
    fq = _continuous(fq / np.linalg.norm(fq, axis=-1, keepdims=True))
    return np.concatenate([wp, wq, fq.reshape(T, 60)], axis=1)


def _continuous(q: np.ndarray) -> np.ndarray:
    """Quaternion signs flipped so that ``q_t . q_{t-1} >= 0``."""
    q = q.copy()
    for t in range(1, q.shape[0]):
        neg = np.sum(q[t] * q[t - 1], axis=-1) < 0
        q[t][neg] *= -1
    return q
