"""The time base: does the take's motion fit its frame rate? Read ``k`` times too fast, accelerations scale by ``k^2``:
factor ``sqrt(peak wrist acceleration / REF_PEAK_ACCEL_M_S2)``; also sample-and-hold streams."""

from __future__ import annotations

import dataclasses

import numpy as np

from replay.checks.hand_points import wrist_track
from replay.data.limits import MAX_PLAUSIBLE_FPS_HZ
from replay.data.types import Recording
from replay.errors import DataError

SMOOTH_S = 0.05
#: m/s^2: the median over the mirror's 30 GRAB lifts; a minimum-jerk 0.4 m reach in 0.5 s peaks at 9.2
#: (Flash and Hogan, J. Neurosci. 1985)
REF_PEAK_ACCEL_M_S2 = 7.8
#: flagged above FACTOR_FLAG or below its inverse, refused above FACTOR_REFUSE
FACTOR_FLAG = 1.45
FACTOR_REFUSE = 1.6
#: s and tracked frames a take must span for the figures to mean anything
MIN_TAKE_S = 1.0
MIN_TAKE_FRAMES = 10
#: Hz, common capture and export rates (film 24, PAL 25/50, NTSC 30/60, mocap 100/120/240)
COMMON_RATES_HZ = (5, 10, 12, 15, 20, 24, 25, 30, 48, 50, 60, 90, 100, 120, 144, 200, 240, 250, 300, 480)
#: share of frames repeating the previous one that makes a stream sample-and-hold
HOLD_SHARE_MIN = 0.4


def with_fps(rec: Recording, fps: float, source: str = "user") -> Recording:
    """``rec`` read at ``fps`` Hz (``time``, ``fps``, ``meta["fps_source"]``). Raises DataError (field ``fps``): not a
    positive rate up to ``MAX_PLAUSIBLE_FPS_HZ``."""
    try:
        fps = float(fps)
    except (TypeError, ValueError):
        raise DataError(rec.source, "fps", f"expected a frame rate in Hz, got {fps!r}") from None
    if not (np.isfinite(fps) and fps > 0):
        raise DataError(
            rec.source, "fps", f"must be a positive frame rate in Hz, got {fps} ({source})", cause="frame_rate"
        )
    _check_rate(rec, fps, source)
    t = np.asarray(rec.time, float)
    time = (t - t[0]) * (float(rec.fps) / fps)
    meta = dict(rec.meta, fps_source=f"{source}: {fps:g} Hz (the reader's own {float(rec.fps):g} Hz replaced)")
    return dataclasses.replace(rec, fps=fps, time=time, meta=meta)


def _check_rate(rec: Recording, fps: float, source: str) -> None:
    """DataError (field ``fps``) unless 0 < ``fps`` <= ``MAX_PLAUSIBLE_FPS_HZ``."""
    if not 0 < fps <= MAX_PLAUSIBLE_FPS_HZ:
        raise DataError(
            rec.source,
            "fps",
            f"implausible frame rate {fps:g} Hz ({source}): a hand recording is read at up to "
            f"{MAX_PLAUSIBLE_FPS_HZ:g} Hz",
            cause="frame_rate",
        )


def nearest_rate(fps: float) -> str:
    """``"~27 Hz (25 or 30 Hz?)"``: the estimate and the common rates within 25 % of it."""
    near = [c for c in COMMON_RATES_HZ if abs(np.log(c / fps)) < np.log(1.25)]
    near = sorted(near, key=lambda c: abs(np.log(c / fps)))[:2]
    alt = f" ({' or '.join(f'{c:g}' for c in sorted(near))} Hz?)" if near else ""
    return f"~{fps:.3g} Hz{alt}"


def motion_figures(rec: Recording) -> dict | None:
    """The wrist's p99 and median speed (m/s), p99 acceleration (m/s^2) after :data:`SMOOTH_S` smoothing, and the
    time-scale factor; None for a take too short or without hand points."""
    w = wrist_track(rec)
    if w is None:
        return None
    t = np.asarray(rec.time, float)
    ok = np.asarray(rec.valid, bool) & np.all(np.isfinite(w), axis=1)
    idx = np.flatnonzero(ok)
    if idx.size < MIN_TAKE_FRAMES or t[idx[-1]] - t[idx[0]] < MIN_TAKE_S:
        return None
    tt = t[idx[0] : idx[-1] + 1]
    ws = np.stack([np.interp(tt, t[idx], w[idx, i]) for i in range(3)], axis=1)
    dt = float(np.median(np.diff(tt)))
    n = max(1, int(round(SMOOTH_S / dt)))
    if len(ws) < n + 3:
        return None
    ker = np.ones(n) / n
    ws = np.stack([np.convolve(ws[:, i], ker, mode="valid") for i in range(3)], axis=1)
    v = np.diff(ws, axis=0) / dt
    sp = np.linalg.norm(v, axis=1)
    acc = np.linalg.norm(np.diff(v, axis=0), axis=1) / dt
    peak, med, pacc = float(np.percentile(sp, 99)), float(np.median(sp)), float(np.percentile(acc, 99))
    factor = float(np.sqrt(pacc / REF_PEAK_ACCEL_M_S2))
    return {
        "peak_speed_m_s": round(peak, 3),
        "median_speed_m_s": round(med, 4),
        "peak_accel_m_s2": round(pacc, 2),
        "time_scale_factor": round(factor, 3),
    }


def sample_and_hold(repeated: np.ndarray) -> int:
    """The hold length when :data:`HOLD_SHARE_MIN` of ``repeated`` (T,) frames repeat, else 0."""
    rep = np.asarray(repeated, bool)
    if rep.size < 2 or rep.mean() < HOLD_SHARE_MIN:
        return 0
    starts = np.flatnonzero(~rep)
    runs = np.diff(np.append(starts, rep.size))
    return int(np.median(runs)) if runs.size else 0


def check_time_base(rec: Recording, hold: int = 0) -> tuple[dict, dict]:
    """(flags ``time_base``, ``sample_and_hold``; figures) of ``rec`` (untracked frames marked; ``hold`` found before).
    Raises DataError (field ``fps``): a rate over ``MAX_PLAUSIBLE_FPS_HZ`` or a factor over :data:`FACTOR_REFUSE`,
    naming the rate the motion looks like and ``--fps``."""
    src = str(rec.meta.get("fps_source", "unknown"))
    _check_rate(rec, float(rec.fps), src)  # before "too few frames": 1e9 Hz is a wrong number
    figs = {"fps": float(rec.fps), "fps_source": src}
    flags: dict = {}
    if hold > 1:
        flags["sample_and_hold"] = (
            f"each sample is repeated for {hold} frames: a {rec.fps / hold:.3g} Hz "
            f"stream written at {rec.fps:g} Hz; the held frames are interpolated over"
        )
        figs["hold_frames"] = hold
    m = motion_figures(rec)
    if m is None:
        return flags, figs
    figs.update(m)
    k = m["time_scale_factor"]
    what = (
        f"read at {rec.fps:g} Hz ({src}) the wrist peaks at {m['peak_speed_m_s']:.2f} m/s, median "
        f"{m['median_speed_m_s']:.2f} m/s, {m['peak_accel_m_s2']:.0f} m/s^2: {k:.2f}x "
        f"{'faster' if k > 1 else 'slower'} than a human reach"
    )
    if k > FACTOR_REFUSE:  # a hand cannot move this fast; it can move slowly (the slow side is flagged only)
        looks = nearest_rate(rec.fps / k)
        raise DataError(
            rec.source,
            "fps",
            f"wrong frame rate? {what}; the motion fits {looks}: give the recording's true rate with --fps",
            cause="frame_rate",
        )
    if k > FACTOR_FLAG or k < 1 / FACTOR_FLAG:
        looks = nearest_rate(rec.fps / k)
        mover = "a fast mover" if k > 1 else "a slow mover"
        flags["time_base"] = f"{what} (looks like {looks}, or {mover}; state the rate with --fps)"
    return flags, figs
