"""Hand and object streams in sync: the lag that keeps the carried object's distance to the palm constant; a confident
offset is flagged or refused, naming ``--object-time-offset``."""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from replay.checks.hand_points import hand_points
from replay.data.types import Recording
from replay.errors import DataError

#: s of carry from the lift onset compared; lags tried up to +-MAX_OFFSET_S
CARRY_S = 1.0
MAX_OFFSET_S = 0.5
#: judged only when the shift explains this share of the spread, the object travels MIN_TRAVEL_M (m), the
#: carry is rigid at the offset (mm, a fingertip's width) and the shift gains more than a finger pad absorbs (mm)
MIN_CONFIDENCE = 0.7
MIN_TRAVEL_M = 0.02
RIGID_SPREAD_MM = 12.0
GAIN_MIN_MM = 3.0
#: s: one frame of a 30 fps camera, the coarsest common capture rate
OFFSET_FLAG_S = 1.0 / 30.0
#: s: at the lift protocol's 0.15 m/s the object is then 15 mm from the hand; a grasp's final closure lasts
#: ~0.1-0.2 s (Jeannerod, J. Motor Behavior 1984)
OFFSET_REFUSE_S = 0.1
PALM = (0, 5, 9, 13, 17)


def offset_spreads(rec: Recording, lags: np.ndarray) -> tuple[np.ndarray, float]:
    """Per lag (frames), the spread (mm: std over the carry window, mean over palm points) of the object-to-palm
    distances with the hand ``lag`` frames earlier (NaN where it leaves the take); and the object's travel (m)."""
    pts, _ = hand_points(rec)
    o = np.asarray(rec.target_object.pos, float)
    T, g = len(o), int(rec.grasp_frame)
    t = np.arange(g, min(T, g + int(round(CARRY_S * rec.fps)) + 1))
    valid = np.asarray(rec.valid, bool)
    palm = pts[:, list(PALM)] if pts.shape[1] == 21 else pts[:, ::50]  # landmarks: PALM; else every 50th point
    out = np.full(len(lags), np.nan)
    for n, k in enumerate(lags):  # the object's own carry window, paired with the hand k frames earlier
        tt = t[(t - k >= 0) & (t - k < T)]
        tt = tt[valid[tt - k]]
        if len(tt) < max(3, len(t) // 2):
            continue
        d = np.linalg.norm(o[tt][:, None] - palm[tt - k], axis=2)
        out[n] = float(d.std(axis=0).mean() * 1000)
    travel = float(np.ptp(o[t], axis=0).max()) if len(t) else 0.0
    return out, travel


def estimate_offset(rec: Recording) -> dict | None:
    """``{offset_s, offset_frames, spread_mm, spread_in_sync_mm, confidence, travel_mm}``: the lag of least spread,
    parabola-refined (> 0: the object lags); confidence ``1 - spread / spread in sync``; None without a carry."""
    pts, _ = hand_points(rec)
    if pts is None or not rec.target_object.tracked:
        return None
    K = int(round(MAX_OFFSET_S * rec.fps))
    lags = np.arange(-K, K + 1)
    sp, travel = offset_spreads(rec, lags)
    if not np.isfinite(sp).any() or not np.isfinite(sp[K]):
        return None
    j = int(np.nanargmin(sp))
    frac = 0.0
    if 0 < j < len(sp) - 1 and np.isfinite(sp[j - 1]) and np.isfinite(sp[j + 1]):
        den = sp[j - 1] - 2 * sp[j] + sp[j + 1]
        frac = float(np.clip(0.5 * (sp[j - 1] - sp[j + 1]) / den, -0.5, 0.5)) if den > 0 else 0.0
    k = float(lags[j]) + frac
    conf = 1.0 - sp[j] / sp[K] if sp[K] > 0 else 0.0
    return {
        "offset_s": round(k / rec.fps, 4),
        "offset_frames": round(k, 2),
        "spread_mm": round(float(sp[j]), 2),
        "spread_in_sync_mm": round(float(sp[K]), 2),
        "confidence": round(float(max(conf, 0.0)), 3),
        "travel_mm": round(travel * 1000, 1),
    }


def check_stream_sync(rec: Recording) -> tuple[dict, dict]:
    """(flag ``stream_offset``: above :data:`OFFSET_FLAG_S` or the stated one; figures and ``stated_s``). Raises
    DataError (cause ``stream_offset``, field ``objects[<name>].pos``): a confident offset over
    :data:`OFFSET_REFUSE_S`."""
    stated = rec.meta.get("object_time_offset_s")
    flags: dict = {}
    if stated:
        flags["stream_offset"] = (
            f"object track shifted {float(stated):+.3f} s against the hand, as the user stated (--object-time-offset)"
        )
    est = estimate_offset(rec)
    figs = dict(est or {}, stated_s=stated)
    if (
        est is None
        or est["confidence"] < MIN_CONFIDENCE
        or est["travel_mm"] < MIN_TRAVEL_M * 1000
        or est["spread_mm"] > RIGID_SPREAD_MM
        or est["spread_in_sync_mm"] - est["spread_mm"] < GAIN_MIN_MM
    ):
        return flags, figs
    off = est["offset_s"]
    if abs(off) <= OFFSET_FLAG_S:
        return flags, figs
    side = "behind" if off > 0 else "ahead of"
    what = (
        f"the object track runs {abs(off):.3f} s ({abs(est['offset_frames']):.1f} frames) {side} the hand track: "
        f"while the hand carries it the object keeps its distance to the palm within {est['spread_mm']:.1f} mm "
        f"only when shifted so ({est['spread_in_sync_mm']:.1f} mm as recorded; confidence {est['confidence']:.2f})"
    )
    fix = f"state the offset with --object-time-offset {off:+.3f}" + (" (added to the one stated)" if stated else "")
    if abs(off) > OFFSET_REFUSE_S:
        raise DataError(
            rec.source,
            f"objects[{rec.target_object.name}].pos",
            f"hand and object streams out of sync: {what}; beyond {OFFSET_REFUSE_S:g} s the replay's hand "
            f"would close where the object is not: refused; {fix}",
            cause="stream_offset",
        )
    flags["stream_offset"] = "; ".join(
        filter(None, [flags.get("stream_offset"), f"{what} (above {OFFSET_FLAG_S:.3f} s); {fix}"])
    )
    return flags, figs


def with_object_time_offset(rec: Recording, offset_s: float) -> Recording:
    """``rec`` with object tracks shifted ``offset_s`` s earlier (positions linear, xyzw slerped, ends held),
    ``grasp_frame`` with them. Raises DataError (field ``object_time_offset_s``): not finite or not within the take."""
    try:
        off = float(offset_s)
    except (TypeError, ValueError):
        off = float("nan")
    t = np.asarray(rec.time, float)
    if not np.isfinite(off) or abs(off) >= t[-1] - t[0]:
        raise DataError(
            rec.source,
            "object_time_offset_s",
            f"{offset_s!r} s is not an offset within the take ({t[-1] - t[0]:.2f} s long)",
            cause="stream_offset",
        )
    if off == 0.0:
        return rec
    q = np.clip(t + off, t[0], t[-1])
    objs = []
    for o in rec.objects:
        if not o.tracked:
            objs.append(o)
            continue
        pos = np.stack([np.interp(q, t, np.asarray(o.pos, float)[:, i]) for i in range(3)], axis=1)
        quat = Slerp(t, Rotation.from_quat(np.asarray(o.quat, float)))(q).as_quat()
        objs.append(dataclasses.replace(o, pos=pos, quat=quat))
    g = int(np.clip(np.searchsorted(t, t[rec.grasp_frame] - off), 0, len(t) - 1))
    meta = dict(rec.meta, object_time_offset_s=off)
    return dataclasses.replace(rec, objects=objs, grasp_frame=g, meta=meta)
