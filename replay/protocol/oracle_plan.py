"""The hug-oracle protocol's plan: the HUG authors' human-grasp oracle on our recordings.

HUG (*Human Universal Grasping*, arXiv:2606.17054, appendix E.1/E.2) scores a recorded grasp
by starting the hand at the recording's terminal grasp, backed off and opened, closing it onto
the grasp and lifting the wrist 0.5 m; the grasp succeeds when the object no longer touches
the table (:mod:`replay.protocol.oracle_success`). Every element is a field of
:class:`replay.results.oracle_fields.OracleFields` (``oracle_*``), so ``scripts/bridge.py`` can switch
one at a time toward the lift protocol (:mod:`replay.protocol.lift_plan`).

Phases (:mod:`replay.protocol.plan` codes), ``oracle_start = "synthetic"``:

0. settle ``settle_s``: the object rests at its pose at the start of the approach window
   (on the support); the hand holds the start pose: the grasp wrist pose *relative to the
   object at the grasp frame*, carried onto the resting object, moved ``oracle_offset_m``
   along the wrist's own +x (right hand; -x for a left hand: away from the fingers, manosim
   README's wrist frame: wrist -> middle is -X for the right MANO hand) and +y (away from the
   palm, whose normal is -Y), orientation the grasp's; fingers flat (identity rotations),
   the thumb base (MANO joint 13) pre-bent ``oracle_thumb_prebend_rad`` about the axis of
   its recorded grasp rotation;
1. approach (the closure) ``oracle_closure_s``: the wrist on the straight line to the grasp
   pose (min-jerk timed, or at constant speed: the physics choice ``closure_profile``), orientation fixed; every finger joint slerped from its start to
   its recorded grasp rotation plus ``oracle_extra_flexion_deg`` (:func:`extra_flexion`);
2. lift: the wrist rises ``oracle_lift_height`` along world +Z over ``oracle_lift_s``
   (quintic min-jerk); 3. hold ``oracle_hold_s`` at the top (the success window).

``oracle_start = "recorded"``: settle and approach are the lift protocol's (the recorded
approach at ``replay_speed``), with the extra flexion blended in over the last
``oracle_closure_s`` of recorded time before the grasp. ``oracle_success = "lift"`` swaps
the lift and hold for the lift protocol's ``lift_height`` / ``lift_s`` / ``hold_s``. No
shake and no release: the oracle ends with the hold.

Positions m (world, Z up), times s, quaternions Newton xyzw.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import ReplayConfig
from replay.data.types import Recording
from replay.errors import DataError
from replay.kinematics.hand_layout import MANOSIM_HAND, finger_quats
from replay.kinematics.quat import quat_slerp
from replay.protocol.lift_plan import min_jerk, plan_rollout
from replay.protocol.plan import (
    PHASE_APPROACH,
    PHASE_HOLD,
    PHASE_LIFT,
    PHASE_SETTLE,
    Plan,
    plan_from_rows,
    replayed_frames,
)
from replay.results.oracle_fields import (
    CONTACT_MANOSIM,
    ORACLE_CONTROL_FPS,
    ORACLE_NO_LIMIT_NM,
    START_RECORDED,
    SUCCESS_LIFT,
)
from replay.sim import physics

#: index of the thumb base (MANO joint 13) among the 15 finger joints (MANO order: index, middle,
#: pinky, ring, thumb; three joints each)
THUMB_BASE = 12
#: joints whose recorded grasp rotation is smaller than this (rad, 5 deg) get no extra flexion:
#: their rotation axis is noise, not a flexion direction
MIN_FLEX_RAD = math.radians(5.0)


def oracle_config(cfg: ReplayConfig) -> ReplayConfig:
    """The settings a hug-oracle rollout runs with: ``cfg`` with the oracle's drive (finger
    ``effort_limit``: ``oracle_effort_limit``, None = :data:`ORACLE_NO_LIMIT_NM`), contact
    (where ``oracle_contact`` is ``manosim``: the protocol's departure ``contact_mixing = "hand"`` in
    ``physics_overrides``, listed in the rollout's ``physics`` record), step (``oracle_dt``:
    ``control_fps`` 50 Hz with the substeps making that dt; None keeps the lift protocol's) and
    no shake or release. Raises :class:`DataError` (validation) on bad fields."""
    kw = dict(
        effort_limit=ORACLE_NO_LIMIT_NM if cfg.oracle_effort_limit is None else float(cfg.oracle_effort_limit),
        shake_s=0.0,
        release_s=0.0,
        grip_overshoot=0.0,
        pad_compression_mm=0.0,
    )
    if cfg.oracle_contact == CONTACT_MANOSIM:
        if not (cfg.device == "cpu" and cfg.engine == "direct"):
            raise DataError(
                None,
                "config.oracle_contact",
                "'manosim' (contact as authored) edits the compiled model "
                "and runs on the direct MuJoCo C engine (device cpu, engine direct) only; set "
                "oracle_contact 'compiled' on this engine",
            )
        kw["physics_overrides"] = {**(cfg.physics_overrides or {}), "contact_mixing": "hand"}
    if cfg.oracle_dt is not None:
        kw.update(control_fps=ORACLE_CONTROL_FPS, substeps=int(round(1.0 / (ORACLE_CONTROL_FPS * cfg.oracle_dt))))
    return dataclasses.replace(cfg, **kw).validate()


def extra_flexion(q: np.ndarray, extra_rad: float) -> np.ndarray:
    """Finger rotations (..., 4) xyzw turned ``extra_rad`` further about their own axis (the
    rotation vector scaled from |r| to |r| + extra); joints under :data:`MIN_FLEX_RAD` unchanged."""
    rv = Rotation.from_quat(np.asarray(q, float).reshape(-1, 4)).as_rotvec()
    ang = np.linalg.norm(rv, axis=1)
    scale = np.where(ang >= MIN_FLEX_RAD, (ang + extra_rad) / np.maximum(ang, 1e-12), 1.0)
    return Rotation.from_rotvec(rv * scale[:, None]).as_quat().reshape(np.shape(q))


def grasp_on_rest(rec: Recording, coords: np.ndarray, rest: int) -> np.ndarray:
    """(67,) grasp-frame coords with the wrist carried from the object's grasp-frame pose onto
    its pose at frame ``rest`` (hand pose relative to the object kept; fingers as recorded)."""
    g, obj = int(rec.grasp_frame), rec.target_object
    r_g, r_r = Rotation.from_quat(obj.quat[g]), Rotation.from_quat(obj.quat[rest])
    move = r_r * r_g.inv()
    out = np.array(coords[g], float)
    out[:3] = move.apply(out[:3] - obj.pos[g]) + obj.pos[rest]
    out[3:7] = (move * Rotation.from_quat(out[3:7])).as_quat()
    return out


def start_pose(grasp: np.ndarray, cfg: ReplayConfig, hand_side: str) -> np.ndarray:
    """(67,) the oracle's start coords from (67,) grasp coords: wrist moved ``oracle_offset_m``
    along its own (+-x, +y) (module doc; x sign: +1 right hand, -1 left), orientation kept;
    fingers flat; thumb base ``oracle_thumb_prebend_rad`` about its recorded grasp axis (z
    where the recorded thumb base is unrotated)."""
    out = np.array(grasp, float)
    sx = 1.0 if hand_side == "right" else -1.0
    off = np.array([sx * cfg.oracle_offset_m, cfg.oracle_offset_m, 0.0])
    out[:3] = grasp[:3] + Rotation.from_quat(grasp[3:7]).apply(off)
    fq = np.zeros((MANOSIM_HAND.finger_joints, 4))
    fq[:, 3] = 1.0
    rv = Rotation.from_quat(finger_quats(grasp)[THUMB_BASE]).as_rotvec()
    n = float(np.linalg.norm(rv))
    axis = rv / n if n > 1e-9 else np.array([0.0, 0.0, 1.0])
    fq[THUMB_BASE] = Rotation.from_rotvec(axis * cfg.oracle_thumb_prebend_rad).as_quat()
    out[MANOSIM_HAND.finger_coord_start :] = fq.reshape(-1)
    return out


def _lift_settings(cfg: ReplayConfig) -> tuple[float, float, float]:
    """(rise m, lift s, hold s) of the oracle's success test (module doc)."""
    if cfg.oracle_success == SUCCESS_LIFT:
        return cfg.lift_height, cfg.lift_s, cfg.hold_s
    return cfg.oracle_lift_height, cfg.oracle_lift_s, cfg.oracle_hold_s


def _flexed_recording(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> np.ndarray:
    """(T, 67) coords with the extra flexion blended in (min-jerk) over the last
    ``oracle_closure_s`` of recorded time before the grasp frame, full from it on."""
    out = np.array(coords, float)
    extra = math.radians(cfg.oracle_extra_flexion_deg)
    if extra == 0:
        return out
    g = int(rec.grasp_frame)
    t_g = float(rec.time[g])
    for k in range(len(out)):
        w = float(min_jerk((float(rec.time[k]) - (t_g - cfg.oracle_closure_s)) / cfg.oracle_closure_s))
        if w > 0 and rec.valid[k]:
            fq = finger_quats(out[k])
            out[k, MANOSIM_HAND.finger_coord_start :] = extra_flexion(fq, extra * w).reshape(-1)
    return out


def plan_oracle(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> Plan:
    """Targets for every control frame of the hug-oracle protocol (module doc).

    Args:
        rec: the recording (``time``, ``valid``, ``grasp_frame``, ``hand_side``, target object track).
        coords: (T, 67) hand coords per recorded frame (Newton joint_q order, xyzw).
        cfg: the oracle's settings (:func:`oracle_config`), ``frame_dt`` s per row.

    Returns:
        A :class:`~replay.protocol.plan.Plan`; ``start_frame`` is the frame
        whose object pose the scene starts from (the approach window's first), ``grasp_frame`` the
        recording's.

    Raises:
        DataError: coords shape, fewer than 2 tracked frames before the grasp, or an untracked
            grasp frame.
    """
    height, lift_s, hold_s = _lift_settings(cfg)
    if cfg.oracle_start == START_RECORDED:
        lift_cfg = dataclasses.replace(cfg, lift_height=height, lift_s=lift_s, hold_s=hold_s, shake_s=0.0)
        plan = plan_rollout(rec, _flexed_recording(rec, coords, cfg), lift_cfg)
        return plan
    g = int(rec.grasp_frame)
    if not rec.valid[g]:
        raise DataError(rec.source, "valid", f"the grasp frame {g} is not tracked")
    first = replayed_frames(rec, coords, cfg.approach_window_s, g + 1)[2]
    grasp = grasp_on_rest(rec, coords, first)
    fs = MANOSIM_HAND.finger_coord_start
    grasp[fs:] = extra_flexion(finger_quats(grasp), math.radians(cfg.oracle_extra_flexion_deg)).reshape(-1)
    start = start_pose(grasp, cfg, rec.hand_side)
    fdt = cfg.frame_dt
    n = {
        k: max(1, int(round(v / fdt)))
        for k, v in (("settle", cfg.settle_s), ("close", cfg.oracle_closure_s), ("lift", lift_s), ("hold", hold_s))
    }
    rows, phase = [start.copy() for _ in range(n["settle"])], [PHASE_SETTLE] * n["settle"]
    q0, q1 = finger_quats(start), finger_quats(grasp)
    linear = physics.choice_value(cfg, "closure_profile") == "linear"
    for k in range(1, n["close"] + 1):
        s = k / n["close"] if linear else float(min_jerk(k / n["close"]))
        r = grasp.copy()
        r[:3] = (1 - s) * start[:3] + s * grasp[:3]
        r[fs:] = quat_slerp(q0, q1, s).reshape(-1)
        rows.append(r)
        phase.append(PHASE_APPROACH)
    for k in range(1, n["lift"] + 1):
        r = grasp.copy()
        r[2] += height * float(min_jerk(k / n["lift"]))
        rows.append(r)
        phase.append(PHASE_LIFT)
    for _ in range(n["hold"]):
        r = grasp.copy()
        r[2] += height
        rows.append(r)
        phase.append(PHASE_HOLD)
    return plan_from_rows(rows, phase, fdt, first, g)
