"""A Variant's extra finger closure (5,) rad, MANO order index, middle, pinky, ring, thumb (docs/refine.md):
``q'_j = q_j * exp(r(k) closure[f] a_j)`` (xyzw), ``a_j = normalize(bone x n)`` child frame, ``n`` the palm normal
(-y, manosim's hand frame), ``r`` 0-1 (:func:`ramp`)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import ReplayConfig
from replay.kinematics.hand_layout import MANOSIM_HAND, finger_quats
from replay.protocol import release
from replay.protocol.lift_plan import min_jerk
from replay.protocol.pad_compression import FINGERS, PALM_NORMAL
from replay.protocol.plan import PHASE_APPROACH, Plan

#: recorded seconds before the grasp frame over which the extra closure ramps in (the last
#: part of the approach: the recorded hand closes on the object over its last ~0.5 s in GRAB)
RAMP_RECORDED_S = 0.5


def flexion_axes(body_pos: np.ndarray) -> np.ndarray:
    """(15, 3) unit flexion axes, child frame, from MuJoCo ``body_pos`` (16, 3) m of ``mano_body_0..15``."""
    J = MANOSIM_HAND.finger_joints
    per = J // len(FINGERS)
    axes = np.zeros((J, 3))
    for j in range(J):
        distal = (j % per) == per - 1
        bone = np.asarray(body_pos[j + 1 if distal else j + 2], float)
        a = np.cross(bone, PALM_NORMAL)
        axes[j] = a / np.linalg.norm(a)
    return axes


def ramp(plan: Plan, replay_speed: float, frame_dt: float, *, release_s: float = 0.0) -> np.ndarray:
    """(F,) closure weight per control frame: min-jerk 0 to 1 over the approach's last :data:`RAMP_RECORDED_S` recorded
    s, 1 after, times one minus the release's opening fraction (``release_s`` s)."""
    app = np.flatnonzero(plan.phase == PHASE_APPROACH)
    grasp = int(app[-1])
    n = max(1, min(len(app), int(round(RAMP_RECORDED_S / replay_speed / frame_dt))))
    k = np.arange(len(plan.phase))
    r = np.where(k >= grasp, 1.0, min_jerk((k - (grasp - n)) / n))
    r[k < grasp - n] = 0.0
    return r * (1.0 - release.opening_fraction(plan.phase, frame_dt, release_s))


def closed_targets(fingers: np.ndarray, closure, axes: np.ndarray, *, weight: np.ndarray) -> np.ndarray:
    """(F, 15, 4) xyzw ``fingers`` turned by ``closure`` (5,) rad about ``axes`` (15, 3), times ``weight`` (F,)."""
    c = np.repeat(np.asarray(closure, float), MANOSIM_HAND.finger_joints // len(FINGERS))  # (15,)
    rv = weight[:, None, None] * (c[:, None] * axes)[None]  # (F, 15, 3)
    q = Rotation.from_quat(fingers.reshape(-1, 4)) * Rotation.from_rotvec(rv.reshape(-1, 3))
    return q.as_quat().reshape(fingers.shape)


def world_finger_targets(plan: Plan, batch, cfg: ReplayConfig) -> np.ndarray:
    """(N, F, 15, 4) xyzw finger targets per world: the plan's (a broadcast view) unless its variant closes or
    compresses them. ValueError: a variant asks a pad depth of a plan without pad compression."""
    fingers = finger_quats(plan.coords)
    N = len(batch.worlds)
    if not any(getattr(w.variant, "moves_fingers", False) for w in batch.worlds):
        return np.broadcast_to(fingers[None], (N,) + fingers.shape)
    pad = plan.pad_plan
    if pad is None and any(w.variant.pad_depth_mm for w in batch.worlds):
        raise ValueError("a world asks a pad compression depth of a plan built without pad compression")
    axes = weight = None
    if any(w.variant.closes_fingers for w in batch.worlds):
        m = batch.scene.solver.mj_model
        axes = flexion_axes(np.asarray(m.body_pos)[batch.layout.hand_bodies])
        weight = ramp(plan, cfg.replay_speed, cfg.frame_dt, release_s=cfg.lift.release_s)
    out = np.empty((N,) + fingers.shape)
    for i, w in enumerate(batch.worlds):
        v = w.variant
        if not v.moves_fingers:
            out[i] = fingers
            continue
        base = fingers if pad is None else pad.raw
        if v.closes_fingers:
            base = closed_targets(base, v.finger_closure, axes, weight=weight)
        if pad is not None:
            depth = pad.depth_mm if v.pad_depth_mm is None else float(v.pad_depth_mm)
            base = pad.compressed(depth, base, figures=False)[0]
        out[i] = base
    return out
