"""Per approach frame and finger, the pad's signed distance to the object (m, negative inside; deeper of the middle and
distal capsules, object frame) over closure angles ``-max..+max`` rad (negative: opened), for ``pad_deep_fingers``
``opened``. Hand coords (67,): wrist m, wrist xyzw, 15 finger xyzw; object quaternions xyzw."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from replay.kinematics.hand_layout import finger_quats

#: closure-angle grid step, rad (a fingertip 6 cm out moves ~1 mm per degree; linear between grid points)
GRID_STEP = math.radians(1.0)
#: grid steps evaluated per pass outward from the recorded pose (:func:`depth_table`)
CHUNK = 4
#: the deepest pad compression a table is read at, m (the sources' 2-4 mm, with room; :meth:`DepthTable.angles`)
DEPTH_MAX = 0.010
#: evaluated points x face planes per block of the signed distance (memory bound, ~32 MB of float64)
BLOCK = 4_000_000


@dataclass(frozen=True)
class DepthTable:
    """Pad depth over the closure angle: ``grid`` (S,) rad ascending, ``grid[S // 2] == 0``; ``pad`` (K, 5, S) m (+inf:
    not tabulated); ``pad0`` (K, 5) m and ``near`` (K, 5) m, the pad's and nearest capsule's at the recorded pose."""

    grid: np.ndarray
    pad: np.ndarray
    pad0: np.ndarray
    near: np.ndarray

    def angles(self, depth_m: float) -> np.ndarray:
        """(K, 5) closure angle, rad, putting each pad ``depth_m`` inside: < 0 opened (NaN: none in the grid), > 0
        closed (+inf: none), 0 as recorded. ValueError: ``depth_m`` outside (0, :data:`DEPTH_MAX`]."""
        if not 0 < depth_m <= DEPTH_MAX:
            raise ValueError(f"pad depth {depth_m * 1000:g} mm outside (0, {DEPTH_MAX * 1000:g}] mm")
        i0 = len(self.grid) // 2
        g = self.pad + float(depth_m)  # > 0: shallower than the depth
        out = np.zeros(g.shape[:2])
        deep, shallow = g[..., i0] < 0, g[..., i0] > 0
        out[deep] = np.nan
        out[shallow] = np.inf
        for sign, mask, hit in ((-1, deep, lambda x: x >= 0), (1, shallow, lambda x: x <= 0)):
            side = g[..., i0::sign]  # from the recorded pose outward: opening (-1) or closing (+1)
            crossed = hit(side) & mask[..., None]
            j = np.argmax(crossed, axis=-1)  # first grid point past the depth
            k, f = np.nonzero(crossed.any(axis=-1))
            j = j[k, f]
            a, b = side[k, f, j - 1], side[k, f, j]
            out[k, f] = sign * (j - 1 + a / (a - b)) * (self.grid[1] - self.grid[0])  # between points j-1 and j
        return out


def object_frame_poses(coords: np.ndarray, obj_pos: np.ndarray, obj_quat: np.ndarray):
    """``(wrist_pos (K, 3) m, wrist_R (K, 3, 3), joint_R (K, 15, 3, 3))`` of hand coords (K, 67) in the object's frame
    (``obj_pos`` (K, 3) m, ``obj_quat`` (K, 4) xyzw, world)."""
    Ro = Rotation.from_quat(obj_quat).inv()
    wp = Ro.apply(coords[:, :3] - obj_pos)
    wR = (Ro * Rotation.from_quat(coords[:, 3:7])).as_matrix()
    K = len(coords)
    return wp, wR, Rotation.from_quat(finger_quats(coords).reshape(-1, 4)).as_matrix().reshape(K, 15, 3, 3)


def depth_table(
    kin,
    caps,
    sdf,
    *,
    fingers,
    coords,
    obj_pos,
    obj_quat,
    axes,
    shares,
    max_rad: float,
    samples: int,
    near_m: float,
    close_from: int,
) -> DepthTable:
    """The :class:`DepthTable` of ``coords`` (K, 67) against the object at ``obj_pos`` (K, 3) m / ``obj_quat`` (K, 4)
    xyzw, tabulated only where read: opening for a pad inside as recorded, closing from ``close_from`` for a finger
    within ``near_m`` m. ``axes`` (5, 3, 3) joint frame, ``max_rad`` rad."""
    n = int(round(max_rad / GRID_STEP))
    grid = np.arange(-n, n + 1) * GRID_STEP
    K, S = len(coords), len(grid)
    wp, wR, JR = object_frame_poses(coords, obj_pos, obj_quat)
    X, G, _ = kin.fk_frames(wp, wR, JR)
    chains = list(fingers.values())
    d0 = _capsule_sdf(caps, sdf, X, G, [b for bs in chains for b in bs], samples).reshape(K, 5, 3)
    near, pad0 = d0.min(axis=-1), d0[..., 1:].min(axis=-1)
    pad = np.full((K, 5, S), np.inf)
    pad[..., n] = pad0
    if not np.any(pad0 < 0) and not np.any(near[close_from:] <= near_m):
        return DepthTable(grid=grid, pad=pad, pad0=pad0, near=near)
    steps = np.zeros((15, S, 3, 3))
    steps[:] = np.eye(3)
    for f, bs in enumerate(chains):
        for i, b in enumerate(bs):
            steps[b - 1] = Rotation.from_rotvec(np.outer(grid * shares[f][i], axes[f][i])).as_matrix()
    pads = np.array([bs[1:] for bs in chains])
    # outward from the recorded pose, CHUNK grid steps at a time, each side of each frame and finger until read:
    # opening until the pad is outside (any depth's first crossing lies before), closing until DEPTH_MAX inside
    todo = np.zeros((K, 5, 2), bool)
    todo[..., 0] = pad0 < 0
    todo[close_from:, :, 1] = near[close_from:] <= near_m
    for c in range(0, n, CHUNK):
        k, f, side = np.nonzero(todo)
        if k.size == 0:
            break
        j = np.arange(c + 1, min(c + CHUNK, n) + 1)
        k, f, side = (np.repeat(x, len(j)) for x in (k, f, side))
        idx = np.where(side == 0, n - np.tile(j, len(k) // len(j)), n + np.tile(j, len(k) // len(j)))
        X, G, _ = kin.fk_frames(wp[k], wR[k], np.einsum("pjab,pjbc->pjac", JR[k], steps[:, idx].swapaxes(0, 1)))
        pad[k, f, idx] = _capsule_sdf(caps, sdf, X, G, pads[f], samples).min(axis=-1)
        opening, closing = pad[..., :n], pad[..., n + 1 :]
        todo[..., 0] &= ~np.any(np.isfinite(opening) & (opening >= 0), axis=-1)
        todo[..., 1] &= ~np.any(closing <= -DEPTH_MAX, axis=-1)
    return DepthTable(grid=grid, pad=pad, pad0=pad0, near=near)


def _capsule_sdf(caps, sdf, X: np.ndarray, G: np.ndarray, bodies, samples: int) -> np.ndarray:
    """(P, B) signed distance, m, of capsules for P poses (body origins X (P, 16, 3), orientations G (P, 16, 3, 3),
    object frame); ``bodies``: (B,) for every pose, or (P, B)."""
    t = np.linspace(-1.0, 1.0, samples)
    b = np.asarray(bodies)
    b = np.broadcast_to(b, (len(X), b.shape[-1])) if b.ndim == 1 else b
    p = np.arange(len(X))[:, None]
    Gb = G[p, b]
    c = X[p, b] + np.einsum("pbij,pbj->pbi", Gb, caps.pos[b])
    ax = np.einsum("pbij,pbj->pbi", Gb, caps.axis[b])
    pts = c[:, :, None] + (t[None, None, :, None] * caps.half[b][..., None, None]) * ax[:, :, None]
    flat = np.ascontiguousarray(pts.reshape(-1, 3).T)  # (3, N): planes x points, max over planes
    best = np.full(flat.shape[1], np.inf)
    for e in sdf.eqs:
        step = max(1, BLOCK // len(e))
        for s in range(0, flat.shape[1], step):
            d = (e[:, :3] @ flat[:, s : s + step] + e[:, 3:4]).max(axis=0)
            best[s : s + step] = np.minimum(best[s : s + step], d)
    return best.reshape(pts.shape[:3]).min(axis=-1) - caps.radius[b]


@dataclass(frozen=True)
class SeatFrames:
    """The approach control ``frames`` (K,) (last: the grasp) with ``wrist`` (K, 7) m/xyzw, the object's recorded
    ``obj_pos`` (K, 3) m / ``obj_quat`` (K, 4) xyzw, and its ``sdf`` in its own frame."""

    frames: np.ndarray
    wrist: np.ndarray
    obj_pos: np.ndarray
    obj_quat: np.ndarray
    sdf: object


def object_pose_at(rec, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(pos (K, 3) m, quat (K, 4) xyzw)`` of the recorded object at ``t`` (K,) s (linear / slerp, clamped)."""
    obj, time = rec.target_object, np.asarray(rec.time, float)
    tt = np.clip(np.asarray(t, float), time[0], time[-1])
    pos = np.stack([np.interp(tt, time, obj.pos[:, i]) for i in range(3)], axis=1)
    return pos, Slerp(time, Rotation.from_quat(obj.quat))(tt).as_quat()


def frame_angles(
    table: DepthTable, depth_m: float, near_m: float, *, weight: np.ndarray, frames: np.ndarray, rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(S (F, 5) rad, status (5,))``: each finger's closure per control frame and status at the grasp. S is the lower
    envelope ``min_j target_j + rate |k - j|`` (``rate`` rad/frame) of the grasp closure capped at ``depth_m``, held
    from the grasp on, times ``weight`` (F,); ``frames`` (K,) are ``table``'s rows."""
    s = table.angles(depth_m)
    near = table.near[-1] <= near_m
    s_g = np.where(near & np.isfinite(s[-1]), s[-1], 0.0)
    cap = np.where(np.isnan(s), 0.0, s)
    target = np.minimum(weight[frames, None] * np.maximum(s_g, 0.0)[None], cap)
    k = np.arange(len(frames), dtype=float)
    env = (target[None, :, :] + rate * np.abs(k[:, None] - k[None, :])[..., None]).min(axis=1)
    at = int(frames[-1])
    S = np.zeros((len(weight), 5))
    S[frames] = env
    S[at:] = weight[at:, None] * env[-1][None]
    last = s[-1]
    status = np.select(
        [~near, ~np.isfinite(last), last < 0, last > 0], ["far", "unreached", "opened", "closed"], "already"
    )
    return S, status
