"""The object track: jumps and noise that no hand motion explains.

A tracked object moves because a hand moves it, so its track is as smooth as a hand's.
Two kinds of jump are looked for in every tracked object's pose (world, m; quaternion xyzw,
made sign-continuous first, :mod:`replay.checks.quaternions`):

* an **excursion that returns**: a pose up to :data:`RETURN_S` of frames long (3 frames at
  GRAB's 120 Hz, 1 at TACO's 30 fps) off the running median of the frames around it by more
  than :data:`JUMP_MM` or :data:`JUMP_DEG` (the median ignores an excursion that short and
  follows a smooth path; IRVLUTD/HO-Cap#23, facebookresearch/ContactPose#17: tracking
  jitter and jumps);
* a **step** that does not return: between two frames the origin moves faster than
  :data:`STEP_SPEED_MAX_M_S` (the fastest a hand reaches,
  :data:`replay.checks.frames.MAX_HAND_SPEED_M_S`) or turns faster than
  :data:`STEP_ANG_SPEED_MAX_DEG_S`.

Where a jump falls decides what it does: inside the approach every protocol replays
(:func:`replay.checks.frames.approach_window`, up to the lift onset) it is refused (a
:class:`~replay.errors.DataError` naming the field and frames): the object the hand
reaches for is not where the track says; after the lift onset it is flagged
(``input_flags["object_track"]``, with the frames): only the recorded protocol replays
those frames, and its tracking error there is the tracker's; before the approach it is
only counted in the figures (no replay reads those frames). **Noise**, the RMS over the
approach of the one-frame excursion, above :data:`NOISE_RMS_MM` / :data:`NOISE_RMS_DEG` is
flagged.

Thresholds, and the clean mirror they were set from (30 GRAB lifts and 10 GRAB intents at
120 Hz, 2 TACO takes at 30 fps; measured with these functions; refused recordings left out):

* excursions in the approach: at most 1.36 mm and 6.2 deg (knife_lift, frames 193 and 185:
  the blade wobbles as the fingers close on it), the other 39 at most 0.69 mm and 1.35 deg;
  after the lift onset at most 5.0 mm (flashlight_lift 1090) and 5.1 deg (phone_lift 527),
  TACO 3.2 mm and 1.6 deg. :data:`JUMP_MM` = 20 mm (3x the largest; a fingertip's width,
  more than a grasp absorbs), :data:`JUMP_DEG` = 30 deg (4.8x);
* steps: at most 2.09 m/s (phone_call_1) and, in the approach, 2380 deg/s (knife_lift 193,
  the blade tipping up as it is pinched; the other 39 at most 1511 deg/s anywhere, a 12.6
  deg tracker step of camera_lift at 1385). :data:`STEP_ANG_SPEED_MAX_DEG_S` = 5000 deg/s;
* the clean mirror's one fault: knife_lift's track turns the nearly symmetric knife
  110-119 deg for a few frames at 3119-3124, and 45-69 deg at 3412-3419 (14,240 deg/s), 24 s
  after the lift onset: a tracker flip, flagged here (the lift protocol never replays it);
* noise over the approach: RMS at most 0.15 mm and 0.65 deg (knife_lift), 0.10 mm and
  0.13 deg for the other GRAB takes, 0.08 mm and 0.07 deg for TACO. :data:`NOISE_RMS_MM` =
  1 mm and :data:`NOISE_RMS_DEG` = 3 deg (4.6x and more).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.checks.frames import MAX_HAND_SPEED_M_S, approach_window
from replay.data.types import Recording
from replay.errors import DataError

#: longest excursion that returns, s (rounded to frames, at least one)
RETURN_S = 0.025
#: excursion from the path between the frames around it, mm / deg (module doc)
JUMP_MM = 20.0
JUMP_DEG = 30.0
#: step between two frames, m/s (the hand's limit) and deg/s
STEP_SPEED_MAX_M_S = MAX_HAND_SPEED_M_S
STEP_ANG_SPEED_MAX_DEG_S = 5000.0
#: RMS of the one-frame excursion over the approach, mm / deg
NOISE_RMS_MM = 1.0
NOISE_RMS_DEG = 3.0


def return_frames(fps: float) -> int:
    """Longest excursion that returns, in frames: ``RETURN_S * fps`` rounded, at least 1."""
    return max(1, int(round(RETURN_S * fps)))


def _running_median(x: np.ndarray, k: int) -> np.ndarray:
    """Median over frames ``t - k .. t + k`` of (T, D) ``x`` per component (edge frames repeated)."""
    T = len(x)
    pad = np.concatenate([np.repeat(x[:1], k, axis=0), x, np.repeat(x[-1:], k, axis=0)])
    return np.median(np.stack([pad[i : i + T] for i in range(2 * k + 1)]), axis=0)


def excursions(pos: np.ndarray, quat: np.ndarray, frames: int) -> tuple[np.ndarray, np.ndarray]:
    """Per frame, how far the pose lies from the running median of the ``2 * frames + 1`` frames
    around it: an excursion of up to ``frames`` frames that returns stands out alone (the
    median ignores it), while a smooth path stays on its median.

    Args:
        pos: (T, 3) world m; quat: (T, 4) xyzw, sign-continuous; frames: longest excursion
            (:func:`return_frames`).

    Returns:
        ``(mm (T,), deg (T,))``: distance from the median position; angle to the median
        orientation (component-wise median of the quaternions, normalised).
    """
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


def _runs(frames: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive runs ``[(first, last)]`` of sorted frame indices."""
    out: list[list[int]] = []
    for f in map(int, frames):
        if out and f == out[-1][1] + 1:
            out[-1][1] = f
        else:
            out.append([f, f])
    return [(a, b) for a, b in out]


def track_jumps(pos: np.ndarray, quat: np.ndarray, fps: float) -> list[dict]:
    """Jumps of one track (module doc): ``[{frames: [first, last], mm, deg, kind}]``, ``mm``/``deg``
    the largest excursion over the run (``kind`` excursion) or the step's displacement and turn
    (``kind`` step, frames the two frames of the step)."""
    mm, deg = excursions(pos, quat, return_frames(fps))
    out = []
    for a, b in _runs(np.flatnonzero((mm > JUMP_MM) | (deg > JUMP_DEG))):
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
    """Jumps and noise of every tracked object's pose (module doc).

    Returns:
        (flags, figures): flag ``object_track`` for jumps after the lift onset or noise over
        the approach; figures per object: ``jumps`` (all), ``noise_rms_mm``, ``noise_rms_deg``.

    Raises:
        DataError: a jump inside the approach (frames named), field ``objects[<name>].pos``.
    """
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
