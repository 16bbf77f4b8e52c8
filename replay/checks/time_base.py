"""The time base: does the take's motion fit the frame rate it is read at?

Most hand-object datasets do not store their frame rate (GRAB, TACO: the adapter takes it
from the dataset's documentation); an export at another rate in the same format (every
4th frame of a 120 Hz take, a 30 Hz clip) is then read 4x too fast, and replays as a
human hand moving 4x faster than it did. The canonical recording says where its rate
came from (``meta["fps_source"]``: ``file``, ``documentation`` or ``user``;
:func:`with_fps` sets a rate the user states, ``--fps``).

**Plausibility** (:func:`check_time_base`): over the tracked frames of the whole take
(untracked ones bridged by linear interpolation on the recorded clock), the wrist track
(landmark 0, else the MANO vertex centroid or wrist translation) smoothed with a
:data:`SMOOTH_S` = 50 ms moving average gives the peak (99th percentile) wrist acceleration,
reported with the peak (99th percentile) and median wrist speed. Read at a rate ``k`` times
too high, speeds scale by ``k`` and accelerations by ``k^2``: the **time-scale factor** is
``sqrt(peak acceleration / REF_PEAK_ACCEL_M_S2)`` (1 = the motion fits the rate; ``fps / k``
is the rate it looks like, named with the common rates beside it). Of the three figures the
acceleration separates best (on the clean mirror a factor
from the peak speed spreads 0.47-1.52, from the median speed 0.69-3.37, from the
acceleration 0.76-1.42). :data:`REF_PEAK_ACCEL_M_S2` = 7.8 m/s^2 is the median over the
mirror's 30 GRAB lifts (their peak speeds 1.17-2.05 m/s); it agrees with published
prehension kinematics: reach-to-grasp peak wrist speeds of ~1-1.5 m/s over movements of
0.6-1 s (Jeannerod, J. Motor Behavior 1984), and for a minimum-jerk reach (Flash and Hogan,
J. Neurosci. 1985: peak speed 1.875 D/T, peak acceleration 5.77 D/T^2) a 0.4 m reach in
0.5 s peaks at 1.5 m/s and 9.2 m/s^2.
Measured on the clean mirror (README's input-check table): factor 0.76-1.42 (30 GRAB lifts,
9 intents, 2 TACO; the highest elephant_inspect_1, turning the object over). Above
:data:`FACTOR_REFUSE` = 1.6: refused, naming the rate it looks like and ``--fps``; above
:data:`FACTOR_FLAG` = 1.45, or below 1 / 1.45: flagged (``input_flags["time_base"]``). Too slow
is never refused: a person can move slowly on purpose (and a synthetic scene at constant
speed has no acceleration to judge), no one reaches 1.6x faster than these takes. Every one of the 30 GRAB lifts taken at 60 Hz (every 2nd
frame) and read at 120 Hz has a factor of 1.49-2.71 (flagged or refused); at 30 Hz and
below, refused. A person moving 1.5x faster than these takes and a clock 1.5x off cannot
be told apart from the motion alone: between the two thresholds the flag says so.

**Sample-and-hold** (:func:`sample_and_hold`): a lower-rate stream written at a higher
rate by repeating each sample (every frame shown ``n`` times) is said as such, with the
rate it was sampled at, rather than as untracked frames (the held frames are still
marked untracked, so the replay interpolates between the real samples).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from replay.checks.hand_points import wrist_track
from replay.data.limits import MAX_PLAUSIBLE_FPS_HZ
from replay.data.types import Recording
from replay.errors import DataError

SMOOTH_S = 0.05
REF_PEAK_ACCEL_M_S2 = 7.8
FACTOR_FLAG = 1.45
FACTOR_REFUSE = 1.6
#: the take must span this long (s) and this many tracked frames for the figures to mean anything
MIN_TAKE_S = 1.0
MIN_TAKE_FRAMES = 10
#: frame rates recordings are commonly captured or exported at, Hz (film 24, PAL 25/50, NTSC 30/60, mocap 100/120/240)
COMMON_RATES_HZ = (5, 10, 12, 15, 20, 24, 25, 30, 48, 50, 60, 90, 100, 120, 144, 200, 240, 250, 300, 480)
#: a run of held frames counts as sample-and-hold when at least this share of frames repeats the previous one
HOLD_SHARE_MIN = 0.4


def with_fps(rec: Recording, fps: float, source: str = "user") -> Recording:
    """A copy of ``rec`` read at ``fps`` Hz: ``time`` rescaled (s from the first frame), ``fps`` and
    ``meta["fps_source"]`` (e.g. ``"user (--fps)"``) set; the frames are unchanged.

    Raises:
        DataError: ``fps`` not a positive finite number, or above
            :data:`~replay.data.limits.MAX_PLAUSIBLE_FPS_HZ` (field ``fps``, cause ``frame_rate``).
    """
    try:
        fps = float(fps)
    except (TypeError, ValueError):
        raise DataError(rec.source, "fps", f"expected a frame rate in Hz, got {fps!r}") from None
    if not (np.isfinite(fps) and fps > 0):
        raise DataError(
            rec.source, "fps", f"must be a positive frame rate in Hz, got {fps} ({source})", cause="frame_rate"
        )
    if fps > MAX_PLAUSIBLE_FPS_HZ:
        raise DataError(
            rec.source,
            "fps",
            f"implausible frame rate {fps:g} Hz ({source}): a hand recording is read "
            f"at up to {MAX_PLAUSIBLE_FPS_HZ:g} Hz",
            cause="frame_rate",
        )
    t = np.asarray(rec.time, float)
    time = (t - t[0]) * (float(rec.fps) / fps)
    meta = dict(rec.meta, fps_source=f"{source}: {fps:g} Hz (the reader's own {float(rec.fps):g} Hz replaced)")
    return dataclasses.replace(rec, fps=fps, time=time, meta=meta)


def nearest_rate(fps: float) -> str:
    """``"~27 Hz (25 or 30 Hz?)"``: the estimate and the common rates (:data:`COMMON_RATES_HZ`) either
    side of it within 25 % (a person's own speed moves the estimate by about that much)."""
    near = [c for c in COMMON_RATES_HZ if abs(np.log(c / fps)) < np.log(1.25)]
    near = sorted(near, key=lambda c: abs(np.log(c / fps)))[:2]
    alt = f" ({' or '.join(f'{c:g}' for c in sorted(near))} Hz?)" if near else ""
    return f"~{fps:.3g} Hz{alt}"


def motion_figures(rec: Recording) -> dict | None:
    """The wrist's peak and median speed (m/s), peak acceleration (m/s^2) and the time-scale factor
    (module doc), or None when the take is too short (< :data:`MIN_TAKE_S`, < :data:`MIN_TAKE_FRAMES`
    tracked frames) or has no hand points."""
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
    """The hold length ``n`` (each sample shown ``n`` frames) when at least :data:`HOLD_SHARE_MIN` of
    the frames repeat the previous one exactly (``repeated`` (T,) bool), else 0."""
    rep = np.asarray(repeated, bool)
    if rep.size < 2 or rep.mean() < HOLD_SHARE_MIN:
        return 0
    starts = np.flatnonzero(~rep)
    runs = np.diff(np.append(starts, rep.size))
    return int(np.median(runs)) if runs.size else 0


def check_time_base(rec: Recording, hold: int = 0) -> tuple[dict, dict]:
    """Is the take's motion that of a person at ``rec.fps`` (module doc)?

    Args:
        rec: the recording, untracked frames already marked in ``valid``.
        hold: the sample-and-hold length found before marking (:func:`sample_and_hold`; 0: none).

    Returns:
        (flags, figures): flags ``time_base`` (factor between :data:`FACTOR_FLAG` and
        :data:`FACTOR_REFUSE`) and ``sample_and_hold``; figures ``fps``, ``fps_source`` and those of
        :func:`motion_figures`.

    Raises:
        DataError: a rate above :data:`~replay.data.limits.MAX_PLAUSIBLE_FPS_HZ`, or a time-scale
            factor above :data:`FACTOR_REFUSE` (field ``fps``), naming the rate the motion looks like
            and ``--fps``.
    """
    src = str(rec.meta.get("fps_source", "unknown"))
    if not 0 < float(rec.fps) <= MAX_PLAUSIBLE_FPS_HZ:  # before "too few frames": 1e9 Hz is a wrong number
        raise DataError(
            rec.source,
            "fps",
            f"implausible frame rate {float(rec.fps):g} Hz ({src}): a hand recording "
            f"is read at up to {MAX_PLAUSIBLE_FPS_HZ:g} Hz",
            cause="frame_rate",
        )
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
