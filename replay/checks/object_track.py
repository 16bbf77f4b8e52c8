"""The object track: jumps (HO-Cap#23, ContactPose#17) and noise no hand motion explains; refused inside the replayed
approach, flagged ``object_track`` after the lift onset (world, m; xyzw)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.checks.frames import MAX_HAND_SPEED_M_S, approach_window, index_runs
from replay.data.types import Recording
from replay.errors import DataError

#: s, longest excursion that returns (rounded to frames, at least one)
RETURN_S = 0.025
#: mm / deg off the running median: a jump (20 mm: a fingertip's width, more than a grasp absorbs)
JUMP_MM = 20.0
JUMP_DEG = 30.0
#: step between two frames, m/s (a hand's limit) and deg/s
STEP_SPEED_MAX_M_S = MAX_HAND_SPEED_M_S
STEP_ANG_SPEED_MAX_DEG_S = 5000.0
#: RMS of the one-frame excursion over the approach, mm / deg
NOISE_RMS_MM = 1.0
NOISE_RMS_DEG = 3.0


def _running_median(x: np.ndarray, k: int) -> np.ndarray:
    """Median over frames ``t - k .. t + k`` of (T, D) ``x`` per component (edge frames repeated)."""
    T = len(x)
    pad = np.concatenate([np.repeat(x[:1], k, axis=0), x, np.repeat(x[-1:], k, axis=0)])
    return np.median(np.stack([pad[i : i + T] for i in range(2 * k + 1)]), axis=0)


def excursions(pos: np.ndarray, quat: np.ndarray, frames: int) -> tuple[np.ndarray, np.ndarray]:
    """``(mm (T,), deg (T,))``: each pose's distance from the running median of ``2 * frames + 1`` frames (``pos``
    (T, 3) m, ``quat`` (T, 4) xyzw sign-continuous)."""
    pos = np.asarray(pos, float)
    q = np.asarray(quat, float)
    if len(pos) < 3:
        return np.zeros(len(pos)), np.zeros(len(pos))
    mm = np.linalg.norm(pos - _running_median(pos, frames), axis=1) * 1000
    qm = _running_median(q, frames)
    qm /= np.linalg.norm(qm, axis=1, keepdims=True)
    dot = np.clip(np.abs(np.sum(qm * q / np.linalg.norm(q, axis=1, keepdims=True), axis=1)), 0.0, 1.0)
    return mm, np.degrees(2 * np.arccos(dot))


def steps(pos: np.ndarray, quat: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """``(m/s (T-1,), deg/s (T-1,))``: speed and turn rate from each frame to the next."""
    pos = np.asarray(pos, float)
    rot = Rotation.from_quat(np.asarray(quat, float))
    return (
        np.linalg.norm(np.diff(pos, axis=0), axis=1) * fps,
        np.degrees((rot[1:] * rot[:-1].inv()).magnitude()) * fps,
    )


def track_jumps(pos: np.ndarray, quat: np.ndarray, fps: float) -> list[dict]:
    """``[{frames: [first, last], mm, deg, kind}]``, ``kind`` ``excursion`` (largest over the run) or ``step``."""
    mm, deg = excursions(pos, quat, max(1, int(round(RETURN_S * fps))))
    out = []
    for a, b in index_runs(np.flatnonzero((mm > JUMP_MM) | (deg > JUMP_DEG))):
        out.append(
            {
                "frames": [a, b],
                "mm": round(float(mm[a : b + 1].max()), 1),
                "deg": round(float(deg[a : b + 1].max()), 1),
                "kind": "excursion",
            }
        )
    sp, ang = steps(pos, quat, fps)
    for t in np.flatnonzero((sp > STEP_SPEED_MAX_M_S) | (ang > STEP_ANG_SPEED_MAX_DEG_S)):
        if not any(j["frames"][0] - 1 <= t <= j["frames"][1] for j in out):  # not one of the excursions
            out.append(
                {
                    "frames": [int(t), int(t) + 1],
                    "mm": round(float(sp[t] / fps * 1000), 1),
                    "deg": round(float(ang[t] / fps), 1),
                    "kind": "step",
                }
            )
    return sorted(out, key=lambda j: j["frames"][0])


def _noise(pos: np.ndarray, quat: np.ndarray, s: int, g: int) -> tuple[float, float]:
    """RMS over frames ``[s, g]`` of the one-frame excursion, (mm, deg)."""
    sl = slice(max(0, s - 1), g + 2)
    p, q = np.asarray(pos, float)[sl], np.asarray(quat, float)[sl]
    if len(p) < 3:
        return 0.0, 0.0
    mm, deg = excursions(p, q, 1)
    return float(np.sqrt(np.mean(mm[1:-1] ** 2))), float(np.sqrt(np.mean(deg[1:-1] ** 2)))


def _describe(jumps: list[dict]) -> str:
    """``frame 250 (80 mm, 0 deg), step 3119-3120 (13 mm, 110 deg)``."""

    def where(j):
        a, b = j["frames"]
        if j["kind"] == "step":
            return f"step {a}-{b}"
        return f"frame {a}" if a == b else f"frames {a}-{b}"

    return ", ".join(f"{where(j)} ({j['mm']:g} mm, {j['deg']:g} deg)" for j in jumps)


def check_object_track(rec: Recording) -> tuple[dict, dict]:
    """(flag ``object_track``: jumps after the lift onset or approach noise; figures per object ``jumps``,
    ``noise_rms_mm``, ``noise_rms_deg``). Raises DataError (field ``objects[<name>].pos``): a jump in the approach."""
    s, g = approach_window(rec)
    flags: list[str] = []
    figs: dict = {}
    for tr in rec.objects:
        if not tr.tracked:
            continue
        jumps = track_jumps(tr.pos, tr.quat, rec.fps)
        nmm, ndeg = _noise(tr.pos, tr.quat, s, g)
        figs[tr.name] = {"jumps": jumps, "noise_rms_mm": round(nmm, 3), "noise_rms_deg": round(ndeg, 3)}
        inside = [j for j in jumps if j["frames"][1] >= s and j["frames"][0] <= g]
        if inside:
            raise DataError(
                rec.source,
                f"objects[{tr.name}].pos",
                f"the object track jumps in the approach (frames {s}-{g}, up to the lift onset): "
                f"{_describe(inside)}, beyond {JUMP_MM:g} mm / {JUMP_DEG:g} deg off its path or "
                f"{STEP_SPEED_MAX_M_S:g} m/s: no hand moves an object so; the replay would reach for "
                "an object that is not there (a tracking fault: repair or drop those frames)",
                cause="object_track",
            )
        after = [j for j in jumps if j["frames"][0] > g]
        if after:
            flags.append(
                f"{tr.name}: jumps after the lift onset at {_describe(after)} (a tracking fault; only the "
                "recorded protocol replays these frames)"
            )
        if nmm > NOISE_RMS_MM or ndeg > NOISE_RMS_DEG:
            flags.append(
                f"{tr.name}: noisy track over the approach, RMS {nmm:.2f} mm / {ndeg:.2f} deg frame to "
                f"frame off its path (above {NOISE_RMS_MM:g} mm / {NOISE_RMS_DEG:g} deg)"
            )
    return ({"object_track": "; ".join(flags)} if flags else {}), figs
