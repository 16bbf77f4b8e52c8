"""Canonical recording -> the imported hand's generalised coordinates.

:func:`complete_hand` fills a :class:`~replay.data.types.Recording`'s
``wrist_pos``/``wrist_quat``/``finger_quat`` from whatever the dataset has
(MANO parameters, or landmarks through the landmark IK), and
:func:`hand_coords` lays them out as Newton ``joint_q`` of the imported hand.

Newton joint_q layout of the hand (67 coordinates), as imported with the wrist's
three slides + ball folded into one FREE joint on ``mano_body_0`` and then the 15
ball joints in MJCF order (``mano_joint_1..15``):

* ``[0:3]``   free joint position = world position of ``mano_body_0``, m;
* ``[3:7]``   free joint rotation, quaternion **xyzw** (Newton's FREE joint reads
  ``joint_q[q_start:q_start+3]`` as the translation and ``[q_start+3:q_start+7]``
  as ``wp.quat(x, y, z, w)``, see ``newton/_src/sim/articulation.py``,
  ``eval_single_articulation_fk``);
* ``[7 + 4*i : 11 + 4*i]`` rotation of ``mano_joint_{i+1}``, xyzw (a BALL joint's
  four coordinates, same function).

This equals the body pose only because manosim's root body sits at the origin
with its ball joint anchored at the body origin (checked by
:meth:`HandKinematics.from_mjcf`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from replay.data.locate import dataset_dir
from replay.data.types import Recording
from replay.datasets import DATASETS
from replay.errors import DataError
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.kinematics.ik import IKOptions, fit_landmarks, ik_options_for, interpolate_pose
from replay.kinematics.mano import (
    MANO_TIP_VERTICES,
    fit_wrist_offset,
    mano_to_finger_quat,
    wrist_from_global_orient,
    wrist_from_transform,
)
from replay.kinematics.model import TIP_LANDMARKS, HandKinematics

#: number of hand coordinates in Newton's joint_q (7 free + 15 x 4 ball).
HAND_COORDS = MANOSIM_HAND.coords

#: Whether a dataset's MANO finger values are relative to the flat hand where its files do not
#: say (MANOParams.flat_hand_mean is None): :attr:`replay.datasets.Dataset.flat_hand_mean`,
#: with how each was settled.
DEFAULT_FLAT_HAND_MEAN = {n: d.flat_hand_mean for n, d in DATASETS.items() if d.flat_hand_mean is not None}

#: fingertip fit (median, m) above which a MANO recording is rejected as a wrong
#: side / reading. Measured on TACO: correct reading ~0.010 m, mean-pose reading
#: ~0.034 m, wrong hand model ~0.1 m.
MAX_TIP_FIT_M = 0.025

_KIN_CACHE: dict[tuple[str, str], HandKinematics] = {}


def default_mjcf(side: str, shape: str = "myhand", data_dir: str | Path | None = None) -> Path:
    """The manosim capsule hand for ``side`` from the staged data (``data_dir``, default
    :func:`replay.data.locate.default_data_dir`) or the mirror.

    Raises:
        DataError: manosim not found (see :func:`replay.data.locate.dataset_dir`).
    """

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
    window: tuple[int, int] | None = None,
    cache: bool | str | Path = True,
    progress: bool = False,
    check_fit: bool = True,
) -> Recording:
    """Return a copy of ``recording`` with ``wrist_pos``, ``wrist_quat`` and ``finger_quat`` filled.

    Sources, in order of preference:

    1. already filled: returned unchanged (a shallow copy);
    2. ``recording.mano`` (valid frames; invalid frames are then filled by
       interpolation / holding the nearest valid pose, so :func:`hand_coords` is
       finite everywhere and ``valid`` still marks them): finger rotations by :func:`mano_to_finger_quat`
       (reading from ``mano.flat_hand_mean``, else :data:`DEFAULT_FLAT_HAND_MEAN`);
       the wrist from ``T_world_wrist`` (HUG-Bench) or from ``global_orient`` +
       ``trans`` + a per-sequence J0 fitted in closed form to the fingertip vertices
       (``mano.vertices``) or, without vertices, to the fingertip landmarks;
    3. ``recording.landmarks`` only (GRAB): landmark IK (:func:`fit_landmarks`,
       every ``ik_options.stride``-th frame of ``window``, cached on disk), the other
       frames interpolated; frames outside ``window`` hold the nearest fitted pose.

    ``meta["kinematics"]`` records the source, reading, J0 offset or IK residual
    summary (median/p90/max landmark error in mm over the fitted frames).

    Args:
        recording: a canonical recording.
        mjcf_path: the manosim MJCF to use (default: ``myhand`` capsule hand of the
            recording's side, via :func:`default_mjcf`).
        ik_options: landmark IK options (default :func:`~replay.kinematics.ik.ik_options_for` the MJCF).
            window: IK frame range ``(start, stop)``.
        cache: IK cache (True: ``$REPLAY_CACHE`` or ``data/cache``; a folder; False).
        progress: tqdm bar for the IK.
        check_fit: for MANO data with a fitted J0, reject a fingertip fit worse than
            :data:`MAX_TIP_FIT_M` (wrong side or reading); False only to measure such fits.

    Raises:
        DataError: nothing to compute the hand from, side mismatch between the
            recording and the MJCF, or bad MANO/landmark arrays (naming the recording's file).
    """
    rec = recording
    if rec.wrist_pos is not None and rec.wrist_quat is not None and rec.finger_quat is not None:
        return dataclasses.replace(rec, meta=dict(rec.meta))
    path, kin = _hand_model(rec, mjcf_path)
    meta = dict(rec.meta)
    if rec.mano is not None:
        wrist_pos, wrist_quat, finger_quat, info = _hand_from_mano(rec, kin, path, check_fit)
    elif rec.landmarks is not None:
        res = fit_landmarks(
            kin, rec.landmarks, rec.valid, window, ik_options or ik_options_for(path), cache, progress, rec.source
        )
        wrist_pos, wrist_quat, finger_quat = interpolate_pose(
            res.frames, res.wrist_pos, res.wrist_quat, res.finger_quat, rec.num_frames
        )
        info = _ik_summary(res, path)
        meta["ik_result"] = res
    else:
        raise DataError(rec.source, "landmarks", "recording has neither MANO parameters nor landmarks")
    meta["kinematics"] = info
    return dataclasses.replace(rec, wrist_pos=wrist_pos, wrist_quat=wrist_quat, finger_quat=finger_quat, meta=meta)


def _hand_model(rec: Recording, mjcf_path: str | Path | None) -> tuple[Path, HandKinematics]:
    """The MJCF and hand model :func:`complete_hand` uses (``mjcf_path``, else :func:`default_mjcf`
    of the recording's side).

    Raises:
        DataError: the MJCF's hand is of the other side than the recording.
    """
    path = Path(mjcf_path) if mjcf_path is not None else default_mjcf(rec.hand_side)
    kin = load_kinematics(path, side=None if mjcf_path is not None else rec.hand_side)
    if kin.side != rec.hand_side:
        raise DataError(rec.source, "hand_side", f"recording is a {rec.hand_side} hand but {path} is a {kin.side} hand")
    return path, kin


def _ik_summary(res, path: Path) -> dict:
    """``meta["kinematics"]`` of a landmark-IK hand: fitted frame range, options, residual (mm), time (s)."""
    r = res.residual * 1000.0
    return {
        "source": "landmark_ik",
        "mjcf": str(path),
        "ik_frames": [int(res.frames[0]), int(res.frames[-1]), int(len(res.frames))],
        "ik_options": res.options,
        "ik_residual_mm": {"median": float(np.median(r)), "p90": float(np.percentile(r, 90)), "max": float(r.max())},
        "ik_seconds": res.seconds,
        "ik_cached": res.cached,
        "ik_restarts": int(np.sum(res.restarts)) if res.restarts is not None else 0,
    }


def _hand_from_mano(rec: Recording, kin: HandKinematics, path: Path, check_fit: bool) -> tuple:
    """``(wrist_pos (T, 3) m, wrist_quat (T, 4) xyzw, finger_quat (T, 15, 4) xyzw, info)`` from ``rec.mano``
    (:func:`complete_hand`, source 2); invalid frames interpolated / held.

    Raises:
        DataError: unknown ``flat_hand_mean``, no valid frame, ill-shaped pose, no wrist source,
            or (``check_fit``) a fingertip fit worse than :data:`MAX_TIP_FIT_M`.
    """
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
        wrist_pos, wrist_quat, finger_quat = interpolate_pose(fv, wrist_pos, wrist_quat, finger_quat, T)
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
    """Wrist ``(pos (n, 3) m, quat (n, 4) xyzw)`` on the valid frames ``fv`` from MANO ``global_orient`` +
    ``trans`` and a per-sequence J0 fitted to the fingertip vertices (else landmarks); records the
    fit in ``info``.

    Raises:
        DataError: neither vertices nor landmarks to fit J0, or (``check_fit``) a median fingertip
            error above :data:`MAX_TIP_FIT_M`.
    """
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
    j0 = fit_wrist_offset(kin, wq, tr, finger_quat, tips)
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
    """(T, 67) Newton joint_q of the imported hand for every frame (layout in the module docstring).

    Quaternions are xyzw, normalised, and sign-continuous over time (each frame's
    quaternion is chosen from {q, -q} to be nearest the previous frame's, so
    differences between frames are meaningful); units m.

    Raises:
        DataError: wrist or finger fields are None (call :func:`complete_hand` first)
            or have the wrong shape.
    """
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
    """Flip quaternion signs (q and -q are one rotation) so consecutive frames have q_t . q_{t-1} >= 0."""
    q = q.copy()
    for t in range(1, q.shape[0]):
        neg = np.sum(q[t] * q[t - 1], axis=-1) < 0
        q[t][neg] *= -1
    return q
