"""Landmark IK: the manosim hand's pose fitted to landmarks every ``stride``-th frame, interpolated between, cached in
``$REPLAY_CACHE/ik`` (the fit and its residuals: ``docs/hand.md``, "The landmark IK on it")."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation, Slerp

from replay import console
from replay.data.cache import cache_dir
from replay.data.types import TIP_LANDMARKS
from replay.errors import DataError
from replay.kinematics.model import NUM_BODIES, NUM_JOINTS, HandKinematics

#: bump when the fitting changes, so cached results are recomputed
IK_VERSION = 2


#: per-landmark weights on an authored hand: fingertips (they carry the contacts) 3, others 1 (docs/hand.md)
DEFAULT_LANDMARK_WEIGHTS = tuple(3.0 if k in TIP_LANDMARKS else 1.0 for k in range(21))
#: per-landmark weights on a fitted hand: fingertips 1.5, others 1 (docs/hand.md, the landmark IK on it)
FITTED_LANDMARK_WEIGHTS = tuple(1.5 if k in TIP_LANDMARKS else 1.0 for k in range(21))


@dataclass(frozen=True)
class IKOptions:
    """Knobs of the landmark IK.

    Attributes:
        w_twist: twist prior, m per rad (0.01: 0.1 rad of twist costs as much as 1 mm of landmark error).
        w_temporal: smoothness prior, m per rad; ``w_temporal_pos``: on the root position (unitless).
        landmark_weights: (21,), None for all 1. max_nfev, max_nfev_first: per warm / cold start.
        restart_m: m; a warm start leaving a landmark farther is refitted cold, the better kept.
        tol: ``ftol`` and ``xtol`` of :func:`scipy.optimize.least_squares`."""

    stride: int = 4
    w_twist: float = 0.01
    w_temporal: float = 0.002
    w_temporal_pos: float = 0.05
    landmark_weights: tuple[float, ...] | None = DEFAULT_LANDMARK_WEIGHTS
    max_nfev: int = 100
    max_nfev_first: int = 400
    tol: float = 1e-6
    restart_m: float = 0.03


@dataclass
class IKResult:
    """Poses at ``frames`` (F,): ``wrist_pos`` (F, 3) m, ``wrist_quat`` (F, 4) xyzw (``mano_body_0``, world),
    ``finger_quat`` (F, 15, 4) xyzw, ``residual`` (F, 21) m, ``nfev`` (F,), ``seconds``, ``restarts`` (F,) bool."""

    frames: np.ndarray
    wrist_pos: np.ndarray
    wrist_quat: np.ndarray
    finger_quat: np.ndarray
    residual: np.ndarray
    nfev: np.ndarray
    restarts: np.ndarray
    seconds: float = 0.0
    cached: bool = False
    options: dict = field(default_factory=dict)


def _skew(v: np.ndarray) -> np.ndarray:
    """(..., 3) -> (..., 3, 3) cross-product matrices."""
    S = np.zeros(v.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -v[..., 2], v[..., 1]
    S[..., 1, 0], S[..., 1, 2] = v[..., 2], -v[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -v[..., 1], v[..., 0]
    return S


def right_jacobian(phi: np.ndarray) -> np.ndarray:
    """Right Jacobian of SO(3), (..., 3) -> (..., 3, 3): d exp(phi + e) = exp(phi) exp(J_r(phi) e)."""
    th = np.linalg.norm(phi, axis=-1)[..., None, None]
    K = _skew(phi)
    small = th < 1e-4
    th_s = np.where(small, 1.0, th)
    a = np.where(small, 0.5 - th**2 / 24.0, (1.0 - np.cos(th_s)) / th_s**2)
    b = np.where(small, 1.0 / 6.0 - th**2 / 120.0, (th_s - np.sin(th_s)) / th_s**3)
    return np.eye(3) - a * K + b * (K @ K)


class LandmarkIK:
    def __init__(self, kin: HandKinematics, options: IKOptions | None = None):
        self.kin = kin
        self.opt = options or IKOptions()
        w = np.ones(21) if self.opt.landmark_weights is None else np.asarray(self.opt.landmark_weights, float)
        if w.shape != (21,) or np.any(w < 0):
            raise DataError(None, "landmark_weights", f"expected 21 non-negative weights, got shape {w.shape}")
        self.w = w
        # anc[k, j]: body j lies on the chain from the root to landmark k's body
        anc = np.zeros((21, NUM_BODIES), dtype=bool)
        for k, b in enumerate(kin.landmark_body):
            while b >= 0:
                anc[k, b] = True
                b = kin.parent[b]
        self.anc = anc
        self.nres = 21 * 3 + NUM_JOINTS + 3 * NUM_BODIES + 3
        self._wt, self._wtp = self.opt.w_temporal, self.opt.w_temporal_pos
        self._memo_x = None
        self._memo = None
        # constant part of the Jacobian (root-position columns, twist rows); temporal rows depend on cold/warm
        J0 = np.zeros((self.nres, 3 + 3 * NUM_BODIES))
        J0[:63, :3] = np.kron(self.w[:, None], np.eye(3))
        for j in range(1, NUM_BODIES):
            J0[63 + j - 1, 3 + 3 * j : 6 + 3 * j] = self.opt.w_twist * kin.bone_dir[j]
        self._J0 = J0
        self._eye_rot = np.eye(3 * NUM_BODIES)
        self._eye3 = np.eye(3)
        self._blk_scale = (self.anc * self.w[:, None])[:, :, None, None]

    def _unpack(self, x, R_prev):
        if self._memo_x is not None and np.array_equal(x, self._memo_x) and self._memo[0] is R_prev:
            return self._memo[1]
        t = x[:3]
        r = x[3:].reshape(NUM_BODIES, 3)
        R = Rotation.from_rotvec(r).as_matrix()
        R_root = R_prev @ R[0]
        X, G, A = self.kin.fk_frames(t[None], R_root[None], R[None, 1:])
        P = self.kin.landmarks_from_frames(X, G)[0]
        out = (t, r, G[0], A[0], P)
        self._memo_x, self._memo = x.copy(), (R_prev, out)
        return out

    def _residual(self, x, target, R_prev, x_prev):
        t, r, G, A, P = self._unpack(x, R_prev)
        o = self.opt
        res = [
            (self.w[:, None] * (P - target)).ravel(),
            o.w_twist * np.einsum("jk,jk->j", r[1:], self.kin.bone_dir[1:]),
            self._wt * (r - x_prev[3:].reshape(NUM_BODIES, 3) * np.r_[0, np.ones(NUM_JOINTS)][:, None]).ravel(),
            self._wtp * (t - x_prev[:3]),
        ]
        return np.concatenate(res)

    def _jacobian(self, x, target, R_prev, x_prev):
        t, r, G, A, P = self._unpack(x, R_prev)
        J = self._J0.copy()
        Jr = right_jacobian(r)  # (16,3,3)
        M = G @ Jr  # (16,3,3)
        D = P[:, None, :] - A[None, :, :]  # (21,16,3)
        # block[k, j] = -skew(D[k,j]) @ M[j], zero where joint j is not on landmark k's chain
        blk = -(_skew(D) @ M[None]) * self._blk_scale
        J[:63, 3:] = blk.transpose(0, 2, 1, 3).reshape(63, 3 * NUM_BODIES)
        row = 63 + NUM_JOINTS
        J[row : row + 3 * NUM_BODIES, 3:] = self._wt * self._eye_rot
        row += 3 * NUM_BODIES
        J[row : row + 3, :3] = self._wtp * self._eye3
        return J

    def solve_frame(
        self, target: np.ndarray, R_prev: np.ndarray, x_prev: np.ndarray, *, max_nfev: int, cold: bool = False
    ):
        """(solution (51,), root rotation, nfev) of one frame, relative to ``R_prev`` / ``x_prev`` (cold: no prior)."""
        self._wt, self._wtp = (0.0, 0.0) if cold else (self.opt.w_temporal, self.opt.w_temporal_pos)
        # solve for the increment: least_squares sizes its first trust region from |x0|, useless near zero
        base = x_prev.copy()
        base[3:6] = 0.0
        args = (target, R_prev, x_prev)
        sol = least_squares(
            lambda d: self._residual(base + d, *args),
            np.zeros_like(base),
            jac=lambda d: self._jacobian(base + d, *args),
            method="lm",
            max_nfev=max_nfev,
            xtol=self.opt.tol,
            ftol=self.opt.tol,
        )
        x = base + sol.x
        R_root = R_prev @ Rotation.from_rotvec(x[3:6]).as_matrix()
        return x, R_root, sol.nfev

    def initial_root(self, target: np.ndarray):
        """Root pose from a Kabsch fit of the palm landmarks (wrist, thumb CMC, 4 MCPs) at the reference pose."""
        palm = [0, 1, 5, 9, 13, 17]
        ref = self.kin.fk_landmarks(np.zeros((1, 3)), np.array([[0, 0, 0, 1.0]]), np.tile([0, 0, 0, 1.0], (1, 15, 1)))[
            0
        ]
        rot, _ = Rotation.align_vectors(target[palm] - target[palm].mean(0), ref[palm] - ref[palm].mean(0))
        R = rot.as_matrix()
        t = target[palm].mean(0) - R @ ref[palm].mean(0)
        return t, R

    def _cold_start(self, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(root rotation (3, 3), x (51,))`` of :meth:`initial_root`, every joint at zero."""
        t, R = self.initial_root(target)
        x = np.zeros(3 + 3 * NUM_BODIES)
        x[:3] = t
        return R, x

    def fit(self, landmarks: np.ndarray, frames: np.ndarray, progress: bool = False) -> IKResult:
        """Fit ``frames`` of (T, 21, 3) landmarks in order, warm-started (cold after a gap over ``4 * stride``)."""
        frames = np.asarray(frames, dtype=np.int64)
        F = len(frames)
        out_x = np.zeros((F, 3 + 3 * NUM_BODIES))
        out_R = np.zeros((F, 3, 3))
        nfev = np.zeros(F, dtype=np.int64)
        restarts = np.zeros(F, dtype=bool)
        t0 = time.perf_counter()
        x_prev = None
        R_prev = None
        last = None
        it = range(F)
        if progress:
            it = console.bar(iterable=it, desc="landmark IK", unit="frame")
        for i in it:
            f = frames[i]
            target = landmarks[f].astype(np.float64)
            cold = x_prev is None or f - last > 4 * self.opt.stride
            if cold:
                R_prev, x_prev = self._cold_start(target)
            x, R_root, n = self.solve_frame(
                target, R_prev, x_prev, max_nfev=self.opt.max_nfev_first if cold else self.opt.max_nfev, cold=cold
            )
            if not cold and self._max_error(x, R_root, target) > self.opt.restart_m:
                # a warm start trapped after a glitch: retry from the palm fit, keep the better
                x2, R2, n2 = self.solve_frame(
                    target, *self._cold_start(target), max_nfev=self.opt.max_nfev_first, cold=True
                )
                n += n2
                restarts[i] = True
                if self._max_error(x2, R2, target) < self._max_error(x, R_root, target):
                    x, R_root = x2, R2
            out_x[i], out_R[i], nfev[i] = x, R_root, n
            x_prev, R_prev, last = x, R_root, f
        secs = time.perf_counter() - t0
        wrist_quat = Rotation.from_matrix(out_R).as_quat()
        finger_quat = Rotation.from_rotvec(out_x[:, 6:].reshape(-1, 3)).as_quat().reshape(F, NUM_JOINTS, 4)
        wrist_pos = out_x[:, :3].copy()
        fit = self.kin.fk_landmarks(wrist_pos, wrist_quat, finger_quat)
        residual = np.linalg.norm(fit - landmarks[frames], axis=-1)
        return IKResult(
            frames, wrist_pos, wrist_quat, finger_quat, residual, nfev, restarts, secs, False, asdict(self.opt)
        )

    def _max_error(self, x, R_root, target) -> float:
        t = x[:3]
        R = Rotation.from_rotvec(x[6:].reshape(NUM_JOINTS, 3)).as_matrix()
        X, G, _ = self.kin.fk_frames(t[None], R_root[None], R[None])
        return float(np.linalg.norm(self.kin.landmarks_from_frames(X, G)[0] - target, axis=-1).max())


def ik_options_for(mjcf_path: str | Path, **changes) -> IKOptions:
    """The default :class:`IKOptions` for ``mjcf_path``'s hand, ``changes`` applied (landmark weights by hand kind)."""
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
    """:class:`IKResult` fitted to ``landmarks`` (T, 21, 3) world m at valid frames ``start, start + stride, ...``
    of ``window`` and its last valid one; ``cache``: True, a folder, or False. Raises DataError naming ``source``:
    bad shapes, non-finite landmarks in valid frames, empty window."""
    opt = options or IKOptions()
    landmarks = np.asarray(landmarks)
    frames = _frames_to_fit(landmarks, valid, window, opt, source)
    path = None
    if cache:
        cdir = cache_dir() if cache is True else Path(cache)
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
    """(F,) frames to fit; DataError: bad shapes, stride < 1, no valid frame, non-finite landmarks to fit."""
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


#: the :class:`IKResult` arrays an IK cache file holds, with ``seconds``
_CACHED_ARRAYS = ("frames", "wrist_pos", "wrist_quat", "finger_quat", "residual", "nfev", "restarts")


def _read_cached(path: Path, opt: IKOptions) -> IKResult | None:
    """The cached :class:`IKResult` at ``path``, or None (a corrupt one deleted)."""
    if not path.is_file():
        return None
    try:
        z = np.load(path)
        arrays = {k: z[k] for k in _CACHED_ARRAYS}
        return IKResult(**arrays, seconds=float(z["seconds"]), cached=True, options=asdict(opt))
    except Exception:  # a corrupt cache entry is recomputed, never trusted
        path.unlink(missing_ok=True)
        return None


def _write_cached(path: Path, res: IKResult) -> None:
    """``res`` to ``path`` as npz, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + f".tmp{os.getpid()}.npz")
    np.savez_compressed(tmp, seconds=res.seconds, **{k: getattr(res, k) for k in _CACHED_ARRAYS})
    os.replace(tmp, path)


def interpolate_pose(
    frames: np.ndarray, wrist_pos: np.ndarray, wrist_quat: np.ndarray, *, finger_quat: np.ndarray, T: int
):
    """Pose at ``frames`` (F,) -> ``(wrist_pos (T, 3) m, wrist_quat (T, 4), finger_quat (T, 15, 4))`` xyzw:
    positions linear, rotations slerped, the nearest held outside."""
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
