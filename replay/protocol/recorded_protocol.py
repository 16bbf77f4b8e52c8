"""Recorded protocol: replay the whole recorded motion and track the recorded object.

GRAB (``object.loc/rot``) and TACO (``obj_pose``) record the object's pose in every
frame: the ground truth a replay can be checked against over the whole manipulation,
not just a lift. :func:`plan_recorded` plans the recorded wrist and finger targets from
the approach window (``approach_window_s`` before the lift onset) to the end of the
manipulation (:func:`manipulation_end`) at ``replay_speed``, object free, nothing
synthetic. :func:`track_metrics` compares the simulated object with the recorded track
per control frame:

* ``track_pos_err_mm`` (F,): distance between simulated and recorded object origin, mm;
* ``track_rot_err_deg`` (F,): geodesic angle between the orientations, deg; their median,
  p95 and max in the JSON are over the simulated frames (``track_frames`` of
  ``track_frames_planned``: a world whose object fell off the support stops there);
* ``track_within``: fraction of the planned frames after settling with both within
  :data:`TRACK_POS_TOL_M` (2 cm) and :data:`TRACK_ROT_TOL_DEG`
  (30 deg); ``track_lost_frame`` / ``track_lost_s``: the first frame that starts a run
  outside the tolerance of at least :data:`TRACK_LOST_MIN_S` (0.5 s recorded)
  or to the end (recorded seconds after the lift onset), None if there is none: the
  outcome is then ``tracked``.

Quaternions: xyzw (Newton / scipy) throughout; the GRAB adapter converted the file's
scalar-first wxyz on load.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from replay.config import ReplayConfig
from replay.data.types import Recording
from replay.errors import DataError
from replay.kinematics.coords_interp import interp_coords
from replay.protocol.plan import (
    PHASE_APPROACH,
    PHASE_RECORDED,
    PHASE_SETTLE,
    Plan,
    plan_from_rows,
    replayed_frames,
)

#: An object this far (m) below the support's top has fallen off it: the recorded protocol stops
#: that world (:func:`replay.protocol.step_plan.step_protocol`). 0.3 m: more than the largest GRAB object
#: (222 mm across, input_checks) lies below the table top only when it left the table.
FELL_OFF_M = 0.3

#: A frame tracks the recording when the simulated object is within TRACK_POS_TOL_M of the
#: recorded position (object frame origin, world, m) AND within TRACK_ROT_TOL_DEG of the
#: recorded orientation (geodesic angle, deg). 2 cm / 30 deg: the per-frame object tracking
#: thresholds of hand-object imitation work (physics-based tracking of human hand-object
#: demonstrations, e.g. DexTrack, Liu et al., ICLR 2025, arXiv:2502.09614, reports success
#: under per-frame object translation and rotation thresholds of this order); the pair
#: used here is the one the project adopted, not re-derived from the data.
TRACK_POS_TOL_M = 0.02
TRACK_ROT_TOL_DEG = 30.0
#: The object is lost at the first frame that starts a run of frames outside that tolerance
#: lasting at least this long (recorded s) or running to the end: a brief excursion (a contact
#: transient) is not a loss, and an object left on the table is not "tracked" because the person
#: later puts the recorded one back where the simulated one stayed. 0.5 s: the scale of a
#: reach-to-grasp's closure (Jeannerod, J. Motor Behavior 1984), far longer than a transient.
TRACK_LOST_MIN_S = 0.5
#: End of the manipulation (recorded protocol): the last recorded frame whose object pose
#: is farther than this from the object's final pose (m, origin) ...
MANIPULATION_REST_TOL_M = 0.01  # the 1 cm lift-onset threshold of replay.data.adapter_fields.LIFT_THRESHOLD_M
#: ... plus this margin (s, recorded), capped at the recording's end, so the release is replayed.
MANIPULATION_END_MARGIN_S = 0.5


def manipulation_end(rec: Recording) -> int:
    """Last recorded frame of the manipulation: the last frame whose target object is more
    than :data:`MANIPULATION_REST_TOL_M` from its final position, plus
    :data:`MANIPULATION_END_MARGIN_S`, capped at the last frame. An object
    that never comes to rest gives the last frame."""
    pos = np.asarray(rec.target_object.pos, float)
    away = np.flatnonzero(np.linalg.norm(pos - pos[-1], axis=1) > MANIPULATION_REST_TOL_M)
    last = int(away[-1]) if away.size else int(rec.grasp_frame)
    t_end = float(rec.time[last]) + MANIPULATION_END_MARGIN_S
    return int(min(rec.num_frames - 1, np.searchsorted(rec.time, t_end)))


def plan_recorded(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> Plan:
    """Targets of the recorded protocol: settle, then the recorded motion to the last frame.

    Args:
        rec: the recording, cropped to the replayed window (``time`` s, ``valid``,
            ``grasp_frame``, tracked target object).
        coords: (T, 67) hand coords per recorded frame (Newton joint_q order, xyzw).
        cfg: ``settle_s``, ``replay_speed``, ``approach_window_s``, ``frame_dt``.

    Returns:
        A :class:`Plan`: ``settle_s`` holding the first pose, then one
        control frame every ``frame_dt * replay_speed`` recorded seconds (phase 1 up to
        the lift onset, 5 after it) to the last frame of ``rec``; ``rec_time`` (F,) the
        recorded time each control frame replays.

    Raises:
        DataError: coords shape, fewer than 2 tracked frames, or an untracked object.
    """
    if not rec.target_object.tracked:
        raise DataError(rec.source, "objects", "the recorded protocol needs a tracked object pose in every frame")
    g = int(rec.grasp_frame)
    t_g = float(rec.time[g])
    times, cc, first = replayed_frames(rec, coords, cfg.approach_window_s)
    fdt = cfg.frame_dt
    n_settle = max(1, int(round(cfg.settle_s / fdt)))
    n_run = max(1, int(math.ceil((times[-1] - times[0]) / cfg.replay_speed / fdt)))
    rows, phase, rt = [], [], []
    for _ in range(n_settle):
        rows.append(cc[0])
        phase.append(PHASE_SETTLE)
        rt.append(times[0])
    for k in range(1, n_run + 1):
        t = min(times[0] + k * fdt * cfg.replay_speed, times[-1])
        rows.append(interp_coords(cc, times, t))
        phase.append(PHASE_APPROACH if t <= t_g else PHASE_RECORDED)
        rt.append(t)
    return plan_from_rows(rows, phase, fdt, first, g, rec_time=np.asarray(rt, float), fell_off_m=FELL_OFF_M)


def recorded_object_pose(rec: Recording, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Recorded target-object pose at ``times`` (s): ((F, 3) m world, linear; (F, 4) xyzw, slerped)."""
    obj = rec.target_object
    t = np.clip(np.asarray(times, float), rec.time[0], rec.time[-1])
    pos = np.stack([np.interp(t, rec.time, obj.pos[:, i]) for i in range(3)], axis=1)
    quat = Slerp(rec.time, Rotation.from_quat(obj.quat))(t).as_quat()
    return pos, quat


def lost_frame(within: np.ndarray, times: np.ndarray | None = None, min_s: float = 0.0) -> int | None:
    """Index of the first frame that starts a run of False in ``within`` (bool (F,)) lasting
    at least ``min_s`` (by ``times`` (F,) s) or running to the last frame; None if there is none.

    With ``min_s`` 0 any False frame counts."""
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
    """Per simulated frame (F of them): ``(pos_err (F,) mm, rot_err (F,) deg (NaN where the
    simulated orientation is not finite), recorded pos (F, 3) m, recorded quat (F, 4) xyzw)``."""
    F = len(poses["body_pos"])
    rpos, rquat = recorded_object_pose(rec, plan.rec_time[:F])
    spos = np.asarray(poses["body_pos"][:, -1], float)
    squat = np.asarray(poses["body_quat"][:, -1], float)
    pos_err = np.linalg.norm(spos - rpos, axis=1) * 1000.0
    ok = np.all(np.isfinite(squat), axis=1)
    rot_err = np.full(F, np.nan)
    if ok.any():
        rot_err[ok] = np.degrees((Rotation.from_quat(squat[ok]).inv() * Rotation.from_quat(rquat[ok])).magnitude())
    return pos_err, rot_err, rpos, rquat


def _stats(x: np.ndarray, unit: str) -> dict:
    """``median_<unit>``, ``p95_<unit>``, ``max_<unit>`` of the finite values of ``x`` (None if none)."""
    x = x[np.isfinite(x)]
    if not x.size:
        return {f"median_{unit}": None, f"p95_{unit}": None, f"max_{unit}": None}
    return {
        f"median_{unit}": float(np.median(x)),
        f"p95_{unit}": float(np.percentile(x, 95)),
        f"max_{unit}": float(np.max(x)),
    }


def track_metrics(
    rec: Recording, plan: Plan, poses: dict, cfg: ReplayConfig, unstable_frame: int | None
) -> tuple[dict, dict]:
    """Compare the simulated object with the recorded track (module doc).

    Args:
        rec: the replayed recording; plan: its ``recorded`` plan.
        poses: the rollout's saved poses (``body_pos`` (F, B, 3) m, ``body_quat`` (F, B, 4)
            xyzw, the object last), F <= len(plan.coords) frames simulated.
        unstable_frame: control frame where the simulation became unstable (None: stable).
            An object lost before it (e.g. dropped off the table, then falling until its
            speed trips the runaway check) is ``lost``, not ``unstable``.

    Returns:
        (arrays for the poses npz: ``track_pos_err_mm``, ``track_rot_err_deg`` (F,) NaN while
        settling, ``recorded_object_pos`` (F, 3), ``recorded_object_quat`` (F, 4) xyzw;
        JSON figures: ``protocol``, ``outcome`` (``tracked`` when never lost, ``lost``,
        ``unstable`` when the simulation failed before the object was lost), ``track_pos_err_{median,p95,max}_mm``,
        ``track_rot_err_{median,p95,max}_deg`` (simulated frames after settling),
        ``track_within`` (over the planned frames), ``track_lost_frame``, ``track_lost_s``,
        ``track_frames`` / ``track_frames_planned``, ``track_recorded_s``, the tolerances; the lift
        verdicts (``lifted``, ``rise``, ``diagnosis``) set to None).
    """
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
        **{f"track_pos_err_{k}": v for k, v in _stats(pe, "mm").items()},
        **{f"track_rot_err_{k}": v for k, v in _stats(re_, "deg").items()},
        # over every planned frame after settling: frames not simulated (the world stopped,
        # e.g. an object fallen off the table tripping the runaway check) count as outside
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
