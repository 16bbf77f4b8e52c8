"""The lift protocol's plan: settle ``settle_s``; approach, the recorded motion from ``approach_window_s`` before the
grasp at ``replay_speed``; lift ``lift_height`` along world +Z over ``lift_s`` (min-jerk); hold ``hold_s``; shake
``shake_s`` (lateral, lifted objects only). Positions m (world, Z up), times s, quaternions xyzw."""

from __future__ import annotations

import math

import numpy as np

from replay.config import ReplayConfig
from replay.data.types import Recording
from replay.kinematics.coords_interp import interp_coords
from replay.kinematics.hand_layout import finger_quats
from replay.kinematics.quat import quat_slerp
from replay.protocol.plan import (
    PHASE_APPROACH,
    PHASE_HOLD,
    PHASE_LIFT,
    PHASE_SETTLE,
    PHASE_SHAKE,
    Plan,
    plan_from_rows,
    replayed_frames,
)


def min_jerk(s: np.ndarray | float) -> np.ndarray | float:
    """Quintic min-jerk profile 10 s^3 - 15 s^4 + 6 s^5 on s in [0, 1] (0 velocity/accel at ends)."""
    s = np.clip(s, 0.0, 1.0)
    return 10 * s**3 - 15 * s**4 + 6 * s**5


def shake_offset(t: float, duration: float, amplitude: float, *, hz: float) -> np.ndarray:
    """Lateral wrist offset (x, y), m, at ``t`` s into a shake of ``duration`` s: ``x = A sin(2 pi f t)``, ``y = A/2
    sin(4 pi f t)``, times a min-jerk envelope over the first and last quarter period (starts and ends at rest)."""
    ramp = 0.25 / hz
    env = float(min_jerk(min(t, duration - t) / ramp)) if ramp > 0 else 1.0
    w = 2.0 * math.pi * hz * t
    return env * amplitude * np.array([math.sin(w), 0.5 * math.sin(2.0 * w)])


def approach_time(times: np.ndarray, k: int, cfg: ReplayConfig) -> float:
    """Recorded time, s, of approach frame ``k`` (1-based): ``times[0] + k replay_speed frame_dt``, <= ``times[-1]``."""
    return min(float(times[0]) + k * cfg.frame_dt * cfg.replay_speed, float(times[-1]))


def recorded_times(plan: Plan, times: np.ndarray, cfg: ReplayConfig) -> np.ndarray:
    """(F,) recorded time, s, each control frame of ``plan`` replays (held at the ends of the window ``times``)."""
    out = np.full(len(plan.phase), float(times[-1]))
    out[plan.phase == PHASE_SETTLE] = float(times[0])
    app = np.flatnonzero(plan.phase == PHASE_APPROACH)
    out[app] = [approach_time(times, k, cfg) for k in range(1, len(app) + 1)]
    return out


def recorded_rows(cc: np.ndarray, times: np.ndarray, cfg: ReplayConfig) -> tuple[list, list, int]:
    """``(rows (67,), recorded times s, settle rows)``: ``settle_s`` on ``cc[0]``, then the recorded motion ``cc``
    (K, 67) at ``times`` (K,) s, one row per control frame at ``replay_speed``."""
    n_settle = max(1, int(round(cfg.settle_s / cfg.frame_dt)))
    n_run = max(1, int(math.ceil((times[-1] - times[0]) / cfg.replay_speed / cfg.frame_dt)))
    t = [float(times[0])] * n_settle + [approach_time(times, k, cfg) for k in range(1, n_run + 1)]
    return [cc[0]] * n_settle + [interp_coords(cc, times, x) for x in t[n_settle:]], t, n_settle


def rise_rows(top: np.ndarray, height: float, fdt: float, *, lift_s: float, hold_s: float, linear: bool = False):
    """``(rows, phases)``: ``top`` (67,) raised ``height`` m along world +Z over ``lift_s`` s (min-jerk, else linear),
    then held ``hold_s`` s; ``fdt`` s a row."""
    n_lift, n_hold = (max(1, int(round(x / fdt))) for x in (lift_s, hold_s))
    rows = []
    for k in range(1, n_lift + n_hold + 1):
        a = min(k / n_lift, 1.0)
        r = top.copy()
        r[2] += height * (a if linear else min_jerk(a))
        rows.append(r)
    return rows, [PHASE_LIFT] * n_lift + [PHASE_HOLD] * n_hold


def plan_rollout(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> Plan:
    """The lift :class:`Plan` of ``coords`` (T, 67, Newton joint_q order), one row per ``cfg.frame_dt`` s. Raises
    DataError (coords shape, fewer than 2 valid frames before the grasp)."""
    g = int(rec.grasp_frame)
    times, cc, first = replayed_frames(rec, coords, cfg.approach_window_s, stop=g + 1)
    fdt = cfg.frame_dt
    rows, _, n_settle = recorded_rows(cc, times, cfg)
    phase = [PHASE_SETTLE] * n_settle + [PHASE_APPROACH] * (len(rows) - n_settle)
    top = rows[-1].copy()
    if cfg.lift.grip_overshoot > 0:
        # squeeze: finger targets continue the recorded closure past the grasp pose
        # (slerp from the window's first finger pose through the grasp pose to 1 + overshoot)
        q_open = finger_quats(cc[0])
        q_grasp = finger_quats(top)
        top[7:] = quat_slerp(q_open, q_grasp, 1.0 + cfg.lift.grip_overshoot).reshape(-1)
    lin = cfg.lift.lift_profile != "minjerk"
    up, up_phase = rise_rows(top, cfg.lift.lift_height, fdt, lift_s=cfg.lift.lift_s, hold_s=cfg.lift.hold_s, linear=lin)
    rows, phase = rows + up, phase + up_phase
    n_shake = int(round(cfg.lift.shake_s / fdt)) if cfg.lift.shake_amplitude > 0 else 0
    for k in range(1, n_shake + 1):
        r = top.copy()
        r[2] += cfg.lift.lift_height
        r[:2] += shake_offset(k * fdt, cfg.lift.shake_s, cfg.lift.shake_amplitude, hz=cfg.lift.shake_hz)
        rows.append(r)
        phase.append(PHASE_SHAKE)
    return plan_from_rows(rows, phase, fdt, start_frame=first, grasp_frame=g)
