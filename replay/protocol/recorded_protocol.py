"""Recorded protocol: replay the recorded motion from ``approach_window_s`` before the lift onset to
:func:`manipulation_end`, object free, and track the recorded object (GRAB ``object.loc/rot``, TACO ``obj_pose``;
docs/fidelity.md). Quaternions xyzw."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import ReplayConfig
from replay.data.types import Recording
from replay.errors import DataError
from replay.protocol.lift_plan import recorded_rows
from replay.protocol.pad_depth_table import object_pose_at
from replay.protocol.plan import (
    PHASE_APPROACH,
    PHASE_RECORDED,
    PHASE_SETTLE,
    Plan,
    plan_from_rows,
    replayed_frames,
)

#: m below the support's top: the object fell off (more than the largest GRAB object, 222 mm across); the world stops
FELL_OFF_M = 0.3

#: a frame tracks when the object is within these of the recorded origin (m, world) and orientation (geodesic, deg):
#: per-frame object thresholds of the order hand-object imitation uses (DexTrack, Liu et al., ICLR 2025,
#: arXiv:2502.09614); the project's choice
TRACK_POS_TOL_M = 0.02
TRACK_ROT_TOL_DEG = 30.0
#: recorded s outside the tolerance (or to the end) that make a loss: a reach-to-grasp's closure (Jeannerod 1984)
TRACK_LOST_MIN_S = 0.5
#: end of the manipulation: the last frame the object is farther than this (m) from its final pose ...
MANIPULATION_REST_TOL_M = 0.01  # the 1 cm lift-onset threshold of replay.data.adapter_fields.LIFT_THRESHOLD_M
#: ... plus this margin (recorded s), so the release is replayed
MANIPULATION_END_MARGIN_S = 0.5


def manipulation_end(rec: Recording) -> int:
    """Last frame with the object more than :data:`MANIPULATION_REST_TOL_M` from its final position, plus
    :data:`MANIPULATION_END_MARGIN_S`, capped."""
    pos = np.asarray(rec.target_object.pos, float)
    away = np.flatnonzero(np.linalg.norm(pos - pos[-1], axis=1) > MANIPULATION_REST_TOL_M)
    last = int(away[-1]) if away.size else int(rec.grasp_frame)
    t_end = float(rec.time[last]) + MANIPULATION_END_MARGIN_S
    return int(min(rec.num_frames - 1, np.searchsorted(rec.time, t_end)))


def plan_recorded(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> Plan:
    """A :class:`Plan` settling on the first pose, then one control frame per ``frame_dt * replay_speed`` recorded s
    (``rec_time`` (F,) s); ``rec`` cropped, ``coords`` (T, 67, Newton joint_q order, xyzw). Raises DataError (coords
    shape, fewer than 2 tracked frames, an untracked object)."""
    if not rec.target_object.tracked:
        raise DataError(rec.source, "objects", "the recorded protocol needs a tracked object pose in every frame")
    g = int(rec.grasp_frame)
    t_g = float(rec.time[g])
    times, cc, first = replayed_frames(rec, coords, cfg.approach_window_s)
    rows, rt, n_settle = recorded_rows(cc, times, cfg)
    phase = [PHASE_SETTLE] * n_settle + [PHASE_APPROACH if t <= t_g else PHASE_RECORDED for t in rt[n_settle:]]
    return plan_from_rows(
        rows,
        phase,
        cfg.frame_dt,
        start_frame=first,
        grasp_frame=g,
        rec_time=np.asarray(rt, float),
        fell_off_m=FELL_OFF_M,
    )


def lost_frame(within: np.ndarray, times: np.ndarray | None = None, min_s: float = 0.0) -> int | None:
    """First frame of a run of False in ``within`` (F,) lasting ``min_s`` (``times`` (F,) s) or to the end; None."""
    w = np.asarray(within, bool)
    F = len(w)
    k = 0
    while k < F:
        if w[k]:
            k += 1
            continue
        j = k
        while j + 1 < F and not w[j + 1]:
            j += 1
        if j == F - 1 or times is None or times[j] - times[k] >= min_s:
            return k
        k = j + 1
    return None


def _track_errors(rec: Recording, plan: Plan, poses: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(pos_err (F,) mm, rot_err (F,) deg (NaN: not finite), recorded pos (F, 3) m, recorded quat (F, 4) xyzw)``."""
    F = len(poses["body_pos"])
    rpos, rquat = object_pose_at(rec, plan.rec_time[:F])
    spos = np.asarray(poses["body_pos"][:, -1], float)
    squat = np.asarray(poses["body_quat"][:, -1], float)
    pos_err = np.linalg.norm(spos - rpos, axis=1) * 1000.0
    ok = np.all(np.isfinite(squat), axis=1)
    rot_err = np.full(F, np.nan)
    if ok.any():
        rot_err[ok] = np.degrees((Rotation.from_quat(squat[ok]).inv() * Rotation.from_quat(rquat[ok])).magnitude())
    return pos_err, rot_err, rpos, rquat


def _stats(x: np.ndarray, name: str, unit: str) -> dict:
    """``<name>_median_<unit>``, ``_p95_``, ``_max_`` of the finite values of ``x`` (None if none)."""
    x = x[np.isfinite(x)]
    stats = {"median": np.median, "p95": lambda v: np.percentile(v, 95), "max": np.max}
    return {f"{name}_{k}_{unit}": float(f(x)) if x.size else None for k, f in stats.items()}


def track_metrics(
    rec: Recording, plan: Plan, poses: dict, *, cfg: ReplayConfig, unstable_frame: int | None
) -> tuple[dict, dict]:
    """(npz arrays ``track_pos_err_mm`` / ``track_rot_err_deg`` (F,) NaN while settling, ``recorded_object_pos`` (F, 3)
    m, ``recorded_object_quat`` (F, 4) xyzw; ``outcome`` and ``track_*`` fields) of the simulated object against the
    recorded track; lost before ``unstable_frame`` (None: stable) is ``lost``."""
    F = len(poses["body_pos"])
    pos_err, rot_err, rpos, rquat = _track_errors(rec, plan, poses)
    judged = np.asarray(plan.phase[:F]) != PHASE_SETTLE
    pos_err[~judged] = np.nan
    rot_err[~judged] = np.nan
    pe, re_ = pos_err[judged], rot_err[judged]
    within = (pe <= TRACK_POS_TOL_M * 1000.0) & (re_ <= TRACK_ROT_TOL_DEG)  # NaN compares False
    first = int(np.flatnonzero(judged)[0]) if judged.any() else F
    lost = lost_frame(within, plan.rec_time[:F][judged], TRACK_LOST_MIN_S)
    n_planned = int(np.sum(np.asarray(plan.phase) != PHASE_SETTLE))
    t_g = float(rec.time[rec.grasp_frame])
    lost_at = None if lost is None else first + lost
    if unstable_frame is not None and (lost_at is None or unstable_frame <= lost_at):
        outcome = "unstable"
    else:
        outcome = "tracked" if lost is None and within.size else "lost"
    figures = {
        "protocol": "recorded",
        "outcome": outcome,
        "lifted": None,
        "rise": None,
        "diagnosis": None,
        "shake_held": None,
        **_stats(pe, "track_pos_err", "mm"),
        **_stats(re_, "track_rot_err", "deg"),
        # over every planned frame after settling: frames not simulated count as outside
        "track_within": float(np.sum(within) / n_planned) if n_planned else None,
        "track_lost_frame": lost_at,
        "track_lost_s": None if lost_at is None else float(plan.rec_time[lost_at] - t_g),
        "track_frames": int(within.size),
        "track_frames_planned": n_planned,
        "track_recorded_s": float(plan.rec_time[F - 1] - plan.rec_time[first]) if F > first else 0.0,
        "track_tolerance": {"pos_mm": TRACK_POS_TOL_M * 1000.0, "rot_deg": TRACK_ROT_TOL_DEG},
    }
    arrays = {
        "track_pos_err_mm": pos_err.astype(np.float32),
        "track_rot_err_deg": rot_err.astype(np.float32),
        "recorded_object_pos": rpos.astype(np.float32),
        "recorded_object_quat": rquat.astype(np.float32),
    }
    return arrays, figures


#: per-recording fields of a recorded-protocol rollout in the study JSON's ``recorded_rollouts``
TRACK_FIELDS = (
    "sequence",
    "object",
    "intent",
    "outcome",
    "stable",
    "track_within",
    "track_pos_err_median_mm",
    "track_pos_err_p95_mm",
    "track_pos_err_max_mm",
    "track_rot_err_median_deg",
    "track_rot_err_p95_deg",
    "track_rot_err_max_deg",
    "track_lost_frame",
    "track_lost_s",
    "track_recorded_s",
    "track_frames",
    "track_frames_planned",
    "wrist_err_median_mm",
    "max_hand_object_contacts",
    "input_flags",
    "wall_s_total",
    "rtf",
    "contact_agreement_precision",
    "contact_agreement_recall",
)
