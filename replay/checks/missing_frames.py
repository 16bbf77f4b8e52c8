"""Frames missing from every stream, found from timestamps or the hand's motion: short drops outside the grasp
bridged and flagged, the others refused."""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from replay.checks.frames import approach_window
from replay.checks.geometry import collision_parts
from replay.checks.hand_points import hand_points
from replay.checks.object_rest import hand_free_until
from replay.data.types import Recording
from replay.errors import DataError

#: frames either side of a step in the quadratic fit (50 ms at 120 Hz: a minimum-jerk reach's acceleration
#: changes little over it; Flash and Hogan, J. Neurosci. 1985)
WINDOW_FRAMES = 3
MAX_RUN = 3
#: residual ratio (a likelihood ratio under Gaussian tracking noise) above which a step is a drop
GAP_RATIO = 10.0
PERIODIC_MIN = 5
PERIODIC_SHARE = 0.8
#: s: a straight line across t s misses a path of acceleration a by a t^2 / 8: 2.4 mm at the reference
#: 7.8 m/s^2 (:data:`~replay.checks.time_base.REF_PEAK_ACCEL_M_S2`), below a finger pad's 2-4 mm compliance
MAX_BRIDGED_S = 0.05
#: a timestamp step longer than this many median steps is a gap
TIMESTAMP_GAP = 1.5


def _residual(t: np.ndarray, W: np.ndarray) -> np.ndarray:
    """(K,): squared residual of a least-squares quadratic in ``t`` (n,) fitted to each window of ``W`` (K, D, n)."""
    A = np.vander(t, 3)
    return (np.einsum("ij,ndj->ndi", np.eye(len(t)) - A @ np.linalg.pinv(A), W) ** 2).sum(axis=(1, 2))


def gap_ratios(X: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """(T-1, MAX_RUN): per step ``i -> i + 1`` and ``m`` = 1..:data:`MAX_RUN`, the residual of a quadratic fit over
    :data:`WINDOW_FRAMES` either side on the stored clock over that with ``m`` frames missing after ``i``; NaN where
    the window leaves the take or holds an untracked frame. ``X`` (T, D) m, ``ok`` (T,) bool."""
    T, w = len(X), WINDOW_FRAMES
    out = np.full((max(T - 1, 0), MAX_RUN), np.nan)
    if T < 2 * w + 1:
        return out
    t0 = np.arange(2 * w) - w + 0.5
    W = sliding_window_view(np.asarray(X, float), 2 * w, axis=0)  # (T-2w+1, D, 2w): window k holds frames k..k+2w-1
    good = sliding_window_view(np.asarray(ok, bool), 2 * w).all(axis=1)
    s0 = _residual(t0, W)
    for m in range(1, MAX_RUN + 1):
        t1 = t0.copy()
        t1[w:] += m
        s1 = _residual(t1, W)
        r = np.where(good, s0 / np.maximum(s1, 1e-30), np.nan)
        out[w - 1 : w - 1 + len(r), m - 1] = r  # window k tests the step between frames k+w-1 and k+w
    return out


def periodic(steps: np.ndarray, n_steps: int) -> int:
    """The period (stored steps) :data:`PERIODIC_SHARE` of the drops' spacings share, else 0."""
    if len(steps) < PERIODIC_MIN:
        return 0
    d = np.diff(steps)
    p = int(np.bincount(d).argmax())
    if p < 2 or np.mean(d % p == 0) < PERIODIC_SHARE:
        return 0
    return p


def find_gaps(rec: Recording) -> dict:
    """``{"source", "gaps": {i: m}, "period", "found"}``: ``m`` frames missing after stored frame ``i``."""
    t = np.asarray(rec.time, float)
    dt = np.diff(t)
    if dt.size and np.median(dt) > 0 and (dt > TIMESTAMP_GAP * np.median(dt)).any():
        med = float(np.median(dt))
        idx = np.flatnonzero(dt > TIMESTAMP_GAP * med)
        return {
            "source": "timestamps",
            "gaps": {int(i): int(round(dt[i] / med)) - 1 for i in idx},
            "period": 0,
            "found": int(idx.size),
        }
    pts, _ = hand_points(rec)
    out = {"source": "motion", "gaps": {}, "period": 0, "found": 0}
    if pts is None:
        return out
    X = pts.reshape(len(pts), -1)
    ok = np.asarray(rec.valid, bool) & np.all(np.isfinite(X), axis=1)
    r = gap_ratios(np.nan_to_num(X), ok)
    best = np.nanmax(np.nan_to_num(r, nan=0.0), axis=1)
    steps = np.flatnonzero(best > GAP_RATIO)
    gaps = {int(i): int(np.nanargmax(r[i])) + 1 for i in steps}
    out["found"] = len(gaps)
    p = periodic(steps, len(X) - 1)
    if p:
        first = int(steps[0]) % p
        gaps = {i: gaps.get(i, 1) for i in range(first, len(X) - 1, p)}
        out["period"] = p
    out["gaps"] = gaps
    return out


def grasp_window(rec: Recording) -> tuple[int, int]:
    """``(near, g)``: the first approach frame with the hand within :data:`~replay.checks.object_rest.HAND_NEAR_M` of
    the target's parts, to the lift onset."""
    s, g = approach_window(rec)
    return hand_free_until(rec, collision_parts(rec.target_object.asset), s, g=g), g


def insert_frames(rec: Recording, gaps: dict) -> Recording:
    """``rec`` with ``m`` frames inserted after each stored frame ``i`` of ``gaps``, linearly interpolated
    (quaternions renormalised), inserted hand frames untracked."""
    T = rec.num_frames
    shift = np.zeros(T, int)
    for i, m in gaps.items():
        shift[i + 1 :] += m
    pos = np.arange(T) + shift  # where each stored frame goes
    T2 = int(pos[-1]) + 1
    grid = np.arange(T2)

    def re(a):
        if not isinstance(a, np.ndarray) or a.ndim == 0 or a.shape[0] != T or a.dtype.kind not in "fc":
            return a
        flat = a.reshape(T, -1)
        out = np.stack([np.interp(grid, pos, flat[:, j]) for j in range(flat.shape[1])], axis=1).reshape(
            (T2,) + a.shape[1:]
        )
        if a.shape[-1] == 4 and np.allclose(np.linalg.norm(a, axis=-1), 1.0, atol=1e-3):  # a quaternion stream
            out /= np.linalg.norm(out, axis=-1, keepdims=True)
        return out

    valid = np.zeros(T2, bool)
    valid[pos] = np.asarray(rec.valid, bool)
    objs = [
        dataclasses.replace(o, pos=re(np.asarray(o.pos, float)), quat=re(np.asarray(o.quat, float)))
        for o in rec.objects
    ]
    mano = rec.mano
    if mano is not None:
        mano = dataclasses.replace(mano, **{f.name: re(getattr(mano, f.name)) for f in dataclasses.fields(mano)})
    arrays = {k: re(getattr(rec, k)) for k in ("wrist_pos", "wrist_quat", "finger_quat", "landmarks")}
    meta = {k: re(v) for k, v in rec.meta.items()}
    return dataclasses.replace(
        rec,
        **arrays,
        objects=objs,
        mano=mano,
        valid=valid,
        time=grid / float(rec.fps),
        grasp_frame=int(pos[rec.grasp_frame]),
        meta=meta,
    )


def _frames_text(gaps: dict, limit: int = 8) -> str:
    """``after stored frames 8, 17, 26, ... (319 in all)``."""
    ks = sorted(gaps)
    txt = ", ".join(f"{i}" + (f" (+{gaps[i]})" if gaps[i] > 1 else "") for i in ks[:limit])
    return f"after stored frame{'s' if len(ks) > 1 else ''} {txt}" + (
        f", ... ({len(ks)} places)" if len(ks) > limit else ""
    )


def describe(found: dict, fps: float) -> str:
    """``319 frames missing (every 10th frame; after stored frames 8, 17, ...)``."""
    n = sum(found["gaps"].values())
    how = f"1 frame in {found['period'] + 1}, periodic; " if found["period"] else ""
    src = (
        "the timestamps" if found["source"] == "timestamps" else f"double-length steps in the motion read at {fps:g} Hz"
    )
    return f"{n} frame{'s' if n != 1 else ''} missing ({how}{_frames_text(found['gaps'])}; from {src})"


def check_missing_frames(rec: Recording) -> tuple[Recording, dict, dict]:
    """(recording with short drops bridged, flag ``frames_missing``, figures). Raises DataError (cause
    ``frames_missing``, field ``time``): a drop inside the grasp or over :data:`MAX_BRIDGED_S`."""
    found = find_gaps(rec)
    gaps = found["gaps"]
    figs = {
        "source": found["source"],
        "missing": int(sum(gaps.values())),
        "places": len(gaps),
        "period": found["period"],
        "found_from_motion": found["found"],
    }
    if not gaps:
        return rec, {}, figs
    near, g = grasp_window(rec)
    figs["grasp"] = [near, g]
    what = describe(found, rec.fps)
    inside = {i: m for i, m in gaps.items() if near <= i + 1 and i <= g}
    long = {i: m for i, m in gaps.items() if (m + 1) / rec.fps > MAX_BRIDGED_S + 1e-9}
    if inside or long:
        why = (
            f"{sum(inside.values())} of them inside the grasp (frames {near}-{g}, the hand within reach of the "
            f"object up to the lift onset: {_frames_text(inside, 4)})"
            if inside
            else f"{len(long)} drop(s) longer than {MAX_BRIDGED_S * 1000:g} ms ({_frames_text(long, 4)})"
        )
        raise DataError(
            rec.source,
            "time",
            f"{what}: frames missing, not a wrong frame rate (the steps between the "
            f"drops fit {rec.fps:g} Hz); {why}: refused, what the hand did there is not "
            "recorded (give the recording with its timestamps, or the full take)",
            cause="frames_missing",
        )
    return (
        insert_frames(rec, gaps),
        {
            "frames_missing": f"{what}: outside the grasp, each at most "
            f"{MAX_BRIDGED_S * 1000:g} ms: bridged by interpolation "
            "(hand marked untracked there)"
        },
        figs,
    )
