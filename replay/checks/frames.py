"""Untracked frames (marked in ``valid``), and before the grasp enough tracked frames, no long gap, a sane speed."""

from __future__ import annotations

import dataclasses

import numpy as np

from replay.checks.hand_points import WRIST, hand_points, wrist_track
from replay.data.types import Recording
from replay.errors import DataError

#: m: a wrist this close to the world origin, or hand points all within this extent, are untracked
ORIGIN_TOL_M = 1e-3
COLLAPSED_EXTENT_M = 0.01
#: s before the lift onset that every protocol replays (the default ``ReplayConfig.approach_window_s``)
CHECK_WINDOW_S = 2.0
MIN_TRACKED_BEFORE_GRASP_S = 0.5
MIN_TRACKED_FRAMES_BEFORE_GRASP = 8
#: s bridged by a straight line: a reach's transport is near-straight (Morasso, Exp. Brain Res. 1981), but its
#: hand closure fills the last third of ~0.6-1 s (Jeannerod, J. Motor Behavior 1984)
MAX_TRACKING_GAP_S = 0.5
#: m/s: reach-to-grasp speeds peak at ~1-1.5 m/s (Jeannerod, J. Motor Behavior 1984)
MAX_HAND_SPEED_M_S = 5.0


def untracked_frames(rec: Recording) -> dict[str, np.ndarray]:
    """Untracked frames by reason, each (T,) bool: ``at_origin``, ``collapsed``, ``zero_params`` (MANO parameters all
    0), ``repeated`` (an exact repeat: a frozen tracker). Non-finite frames are left to ``valid``."""
    pts, name = hand_points(rec)
    T = rec.num_frames
    none = np.zeros(T, bool)
    if pts is None:
        return {"at_origin": none, "collapsed": none.copy(), "repeated": none.copy()}
    finite = np.all(np.isfinite(pts.reshape(T, -1)), axis=1)
    wrist = pts[:, WRIST] if name == "landmarks" else pts.mean(axis=1)
    at_origin = finite & (np.linalg.norm(np.nan_to_num(wrist), axis=1) < ORIGIN_TOL_M)
    if pts.shape[1] > 1:
        extent = np.ptp(np.nan_to_num(pts), axis=1).max(axis=1)
        collapsed = finite & (extent < COLLAPSED_EXTENT_M)
    else:
        collapsed = none.copy()
    flat = pts.reshape(T, -1)
    zero_params = none.copy()
    if rec.mano is not None:
        arrs = [a for a in (rec.mano.global_orient, rec.mano.trans) if a is not None]
        P = np.concatenate([np.asarray(a, float).reshape(T, -1) for a in (rec.mano.finger_pose, *arrs)], axis=1)
        if name != "landmarks":  # MANO data: the parameters themselves
            flat = np.concatenate([flat, P], axis=1)
        if arrs:  # MANO parameters stored as zeros (the hand is then posed from them)
            zero_params = np.all(P == 0.0, axis=1)
    repeated = np.zeros(T, bool)
    repeated[1:] = finite[1:] & np.all(flat[1:] == flat[:-1], axis=1)
    return {
        "at_origin": at_origin,
        "collapsed": collapsed,
        "zero_params": zero_params,
        "repeated": repeated & ~at_origin & ~collapsed & ~zero_params,
    }


def mark_untracked(rec: Recording) -> tuple[Recording, int]:
    """(copy of ``rec`` with untracked frames False in ``valid``, frames newly marked)."""
    bad = np.zeros(rec.num_frames, bool)
    for v in untracked_frames(rec).values():
        bad |= v
    new = bad & np.asarray(rec.valid, bool)
    if not new.any():
        return rec, 0
    return dataclasses.replace(rec, valid=np.asarray(rec.valid, bool) & ~bad), int(new.sum())


def approach_window(rec: Recording) -> tuple[int, int]:
    """``(s, g)``: :data:`CHECK_WINDOW_S` before the lift onset (``grasp_frame``) to it."""
    g = int(rec.grasp_frame)
    s = int(np.searchsorted(rec.time, rec.time[g] - CHECK_WINDOW_S))
    return s, g


def index_runs(idx: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive runs ``[(first, last)]`` of sorted indices."""
    return [(int(r[0]), int(r[-1])) for r in np.split(idx, np.flatnonzero(np.diff(idx) != 1) + 1) if r.size]


def check_timing(rec: Recording) -> dict:
    """Figures ``window``, ``tracked_frames``, ``tracked_s``, ``max_gap_s``, ``max_speed_m_s`` over
    :func:`approach_window`. Raises DataError: too few tracked frames or seconds, a gap over
    :data:`MAX_TRACKING_GAP_S`, a wrist speed over :data:`MAX_HAND_SPEED_M_S`."""
    s, g = approach_window(rec)
    v = np.asarray(rec.valid, bool)
    idx = np.flatnonzero(v[s : g + 1]) + s
    t = np.asarray(rec.time, float)
    span = float(t[idx[-1]] - t[idx[0]]) if idx.size else 0.0
    fig = {"window": [s, g], "tracked_frames": int(idx.size), "tracked_s": round(span, 4)}
    if idx.size < MIN_TRACKED_FRAMES_BEFORE_GRASP or span < MIN_TRACKED_BEFORE_GRASP_S:
        raise DataError(
            rec.source,
            "time",
            f"too few frames before the grasp: {idx.size} tracked frame(s) over "
            f"{span:.3f} s before the lift onset (frame {g}, {t[g]:.3f} s); "
            f"need >= {MIN_TRACKED_FRAMES_BEFORE_GRASP} frames over >= "
            f"{MIN_TRACKED_BEFORE_GRASP_S} s to replay an approach (a clip or a "
            f"subsampled export? give the full-rate recording)",
            cause="too_few_frames",
        )
    gaps = np.diff(t[idx])
    k = int(np.argmax(gaps))
    fig["max_gap_s"] = round(float(gaps[k]), 4)
    if gaps[k] > MAX_TRACKING_GAP_S:
        raise DataError(
            rec.source,
            "valid",
            f"too sparse: no tracked hand for {gaps[k]:.3f} s between frames "
            f"{idx[k]} and {idx[k + 1]} before the lift onset (frame {g}); at most "
            f"{MAX_TRACKING_GAP_S} s can be bridged: use a recording without the dropout",
            cause="too_few_frames",
        )
    wrist = wrist_track(rec)
    if wrist is not None:
        sp = np.linalg.norm(np.diff(wrist[idx], axis=0), axis=1) / gaps
        j = int(np.argmax(sp))
        fig["max_speed_m_s"] = round(float(sp[j]), 3)
        if sp[j] > MAX_HAND_SPEED_M_S:
            field = hand_points(rec)[1]
            raise DataError(
                rec.source,
                field,
                f"implausible hand speed: the wrist moves {sp[j]:.1f} m/s between "
                f"frames {idx[j]} and {idx[j + 1]} before the lift onset (a hand reaches "
                f"at <= {MAX_HAND_SPEED_M_S:g} m/s): frames dropped, a wrong frame rate, "
                "or unmarked tracking errors",
                cause="hand_speed",
            )
    return fig
