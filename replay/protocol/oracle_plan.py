"""The hug-oracle protocol's plan: the HUG authors' human-grasp oracle (arXiv:2606.17054, app. E.1/E.2;
docs/oracle.md), each element an ``oracle_*`` field. Positions m (world, Z up), times s, quaternions xyzw."""

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
from replay.protocol.lift_plan import min_jerk, plan_rollout, rise_rows
from replay.protocol.plan import (
    PHASE_APPROACH,
    PHASE_SETTLE,
    Plan,
    plan_from_rows,
    replayed_frames,
)
from replay.results.engine_choice import EngineChoice
from replay.results.oracle_fields import (
    CONTACT_MANOSIM,
    ORACLE_CONTROL_FPS,
    ORACLE_NO_LIMIT_NM,
    START_RECORDED,
    SUCCESS_LIFT,
)
from replay.sim import physics

#: the hug-oracle's key among a physics choice's per-protocol values (finger_effort_limit)
ORACLE = "hug-oracle"
#: the thumb base (MANO joint 13) among the 15 finger joints (MANO order, three joints a finger)
THUMB_BASE = 12
#: rad: a smaller recorded grasp rotation gets no extra flexion (its axis is noise)
MIN_FLEX_RAD = math.radians(5.0)


def oracle_config(cfg: ReplayConfig) -> ReplayConfig:
    """``cfg`` with the oracle's departures (``finger_effort_limit`` entry, None = :data:`ORACLE_NO_LIMIT_NM`; no pad
    compression; ``contact_mixing`` ``hand`` for ``oracle.contact`` ``manosim``; ``oracle.dt`` at 50 Hz control; no
    shake or release). Raises DataError (bad fields; ``manosim`` contact off mujoco-c)."""
    own = _own_effort(cfg)
    over = {
        **(cfg.physics_overrides or {}),
        "finger_effort_limit": ORACLE_NO_LIMIT_NM if own is None else float(own),
        "pad_compression": 0.0,
    }
    kw = dict(
        lift=dataclasses.replace(cfg.lift, shake_s=0.0, release_s=0.0, grip_overshoot=0.0), physics_overrides=over
    )
    if cfg.oracle.contact == CONTACT_MANOSIM:
        if cfg.engine is not EngineChoice.MUJOCO_C:
            raise DataError(
                None,
                "config.oracle.contact",
                "'manosim' (contact as authored) edits the compiled model "
                "and runs on the MuJoCo C engine (engine mujoco-c) only; set "
                "oracle_contact 'compiled' on this engine",
            )
        over["contact_mixing"] = "hand"
    if cfg.oracle.dt is not None:
        kw.update(control_fps=ORACLE_CONTROL_FPS, substeps=int(round(1.0 / (ORACLE_CONTROL_FPS * cfg.oracle.dt))))
    return dataclasses.replace(cfg, **kw).validate()


def _own_effort(cfg: ReplayConfig):
    """The hug-oracle's ``finger_effort_limit``, N·m (None: as authored): its override, else the table's."""
    value = physics.choice_value(cfg, "finger_effort_limit")
    if not isinstance(value, dict):
        value = physics.table(cfg.physics)["finger_effort_limit"].value
    return value.get(ORACLE)


def extra_flexion(q: np.ndarray, extra_rad: float) -> np.ndarray:
    """Finger rotations (..., 4) xyzw turned ``extra_rad`` further about their own axis; joints under
    :data:`MIN_FLEX_RAD` unchanged."""
    rv = Rotation.from_quat(np.asarray(q, float).reshape(-1, 4)).as_rotvec()
    ang = np.linalg.norm(rv, axis=1)
    scale = np.where(ang >= MIN_FLEX_RAD, (ang + extra_rad) / np.maximum(ang, 1e-12), 1.0)
    return Rotation.from_rotvec(rv * scale[:, None]).as_quat().reshape(np.shape(q))


def grasp_on_rest(rec: Recording, coords: np.ndarray, rest: int) -> np.ndarray:
    """(67,) grasp-frame coords with the wrist carried with the object onto its pose at frame ``rest``."""
    g, obj = int(rec.grasp_frame), rec.target_object
    r_g, r_r = Rotation.from_quat(obj.quat[g]), Rotation.from_quat(obj.quat[rest])
    move = r_r * r_g.inv()
    out = np.array(coords[g], float)
    out[:3] = move.apply(out[:3] - obj.pos[g]) + obj.pos[rest]
    out[3:7] = (move * Rotation.from_quat(out[3:7])).as_quat()
    return out


def start_pose(grasp: np.ndarray, cfg: ReplayConfig, hand_side: str) -> np.ndarray:
    """(67,) start coords: wrist moved ``offset_m`` along its own (+-x, +y) (x sign +1 right hand, -1 left; manosim
    README's wrist frame), fingers flat, thumb base ``thumb_prebend_rad`` about its grasp axis (z where unrotated)."""
    out = np.array(grasp, float)
    sx = 1.0 if hand_side == "right" else -1.0
    off = np.array([sx * cfg.oracle.offset_m, cfg.oracle.offset_m, 0.0])
    out[:3] = grasp[:3] + Rotation.from_quat(grasp[3:7]).apply(off)
    fq = np.zeros((MANOSIM_HAND.finger_joints, 4))
    fq[:, 3] = 1.0
    rv = Rotation.from_quat(finger_quats(grasp)[THUMB_BASE]).as_rotvec()
    n = float(np.linalg.norm(rv))
    axis = rv / n if n > 1e-9 else np.array([0.0, 0.0, 1.0])
    fq[THUMB_BASE] = Rotation.from_rotvec(axis * cfg.oracle.thumb_prebend_rad).as_quat()
    out[MANOSIM_HAND.finger_coord_start :] = fq.reshape(-1)
    return out


def _flexed_recording(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> np.ndarray:
    """(T, 67) coords with the extra flexion blended in (min-jerk) over the ``closure_s`` s before the grasp frame."""
    out = np.array(coords, float)
    extra = math.radians(cfg.oracle.extra_flexion_deg)
    if extra == 0:
        return out
    g = int(rec.grasp_frame)
    t_g = float(rec.time[g])
    for k in range(len(out)):
        w = float(min_jerk((float(rec.time[k]) - (t_g - cfg.oracle.closure_s)) / cfg.oracle.closure_s))
        if w > 0 and rec.valid[k]:
            fq = finger_quats(out[k])
            out[k, MANOSIM_HAND.finger_coord_start :] = extra_flexion(fq, extra * w).reshape(-1)
    return out


def plan_oracle(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> Plan:
    """The hug-oracle :class:`~replay.protocol.plan.Plan` of ``coords`` (T, 67, Newton joint_q order, xyzw) under
    :func:`oracle_config`; ``start_frame`` the object's start pose. Raises DataError (coords shape, fewer than 2
    tracked frames before the grasp, an untracked grasp frame)."""
    rise = cfg.lift if cfg.oracle.success == SUCCESS_LIFT else cfg.oracle  # the success test's rise m, lift s, hold s
    height, lift_s, hold_s = rise.lift_height, rise.lift_s, rise.hold_s
    if cfg.oracle.start == START_RECORDED:
        lift_cfg = cfg.replace(lift={"lift_height": height, "lift_s": lift_s, "hold_s": hold_s, "shake_s": 0.0})
        return plan_rollout(rec, _flexed_recording(rec, coords, cfg), lift_cfg)
    g = int(rec.grasp_frame)
    if not rec.valid[g]:
        raise DataError(rec.source, "valid", f"the grasp frame {g} is not tracked")
    first = replayed_frames(rec, coords, cfg.approach_window_s, stop=g + 1)[2]
    grasp = grasp_on_rest(rec, coords, first)
    fs = MANOSIM_HAND.finger_coord_start
    grasp[fs:] = extra_flexion(finger_quats(grasp), math.radians(cfg.oracle.extra_flexion_deg)).reshape(-1)
    start = start_pose(grasp, cfg, rec.hand_side)
    fdt = cfg.frame_dt
    n = {k: max(1, int(round(v / fdt))) for k, v in (("settle", cfg.settle_s), ("close", cfg.oracle.closure_s))}
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
    up, up_phase = rise_rows(grasp, height, fdt, lift_s=lift_s, hold_s=hold_s)
    return plan_from_rows(rows + up, phase + up_phase, fdt, start_frame=first, grasp_frame=g)
