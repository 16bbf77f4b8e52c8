"""Extra finger closure of a world: each finger's targets turned further toward flexion.

A :class:`replay.sim.engine.variants.Variant` with ``finger_closure`` (5 angles, rad, one per finger:
index, middle, pinky, ring, thumb, MANO's bone order) has every joint target of finger f
rotated by ``closure[f]`` about that joint's flexion axis::

    q'_j = q_j * exp(r(k) closure[f] a_j)       (Newton xyzw; a_j in the joint's child frame)

with ``r(k)`` a min-jerk ramp from 0 to 1 over the last :data:`RAMP_RECORDED_S` recorded
seconds of the approach (the part where the recorded hand closes on the object), 1 from
the grasp frame on (lift, hold, shake); before the ramp the targets are as recorded. The
release ends it: over the release's opening (``release_s``, as the fingers slerp to the
pre-grasp pose, :mod:`replay.protocol.release`) ``r`` falls linearly from 1 to 0 with the
slerp's fraction, so the opened hand is the recorded pre-grasp pose exactly (a closure held
through the release left a refined hand closed by it, biased toward ``stuck``).

The flexion axis of a joint (:func:`flexion_axes`) is ``normalize(bone x n)``: ``bone`` the
direction from the joint's body to its child body (a distal bone: its own offset from its
parent) in the hand's rest pose, ``n`` the palm normal. manosim's MJCF has every body frame
parallel to the palm frame at rest, fingers along -x (right hand; +x for the mirrored left)
and spread along z, so the palmar side is -y: rotating a right-hand finger along -x about
+z moves its tip to -y. Checked on the recorded GRAB grasp poses (cubesmall, mug, banana,
knife): the joints of the four fingers have their largest rotation component about +z at the
grasp frame, 1-92 deg. For the thumb the same rule gives an axis of about (0.6, 0, 0.8): the
thumb turning toward the palm.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import ReplayConfig
from replay.kinematics.hand_layout import MANOSIM_HAND, finger_quats
from replay.protocol import release
from replay.protocol.lift_plan import min_jerk
from replay.protocol.plan import PHASE_APPROACH, Plan

#: fingers, MANO bone order (3 joints each, proximal to distal: joints 1-3 index, ...)
FINGERS = ("index", "middle", "pinky", "ring", "thumb")
#: palm normal, palmar side, in manosim's hand frame (module doc)
PALM_NORMAL = np.array([0.0, -1.0, 0.0])
#: recorded seconds before the grasp frame over which the extra closure ramps in (the last
#: part of the approach: the recorded hand closes on the object over its last ~0.5 s in GRAB)
RAMP_RECORDED_S = 0.5


def flexion_axes(body_pos: np.ndarray) -> np.ndarray:
    """(15, 3) unit flexion axis of each finger joint, in its child frame (module doc).

    Args:
        body_pos: (16, 3) each hand body's position in its parent's frame at rest, m
            (MuJoCo ``body_pos`` of ``mano_body_0..15``).
    """
    J = MANOSIM_HAND.finger_joints
    per = J // len(FINGERS)
    axes = np.zeros((J, 3))
    for j in range(J):
        distal = (j % per) == per - 1
        bone = np.asarray(body_pos[j + 1 if distal else j + 2], float)
        a = np.cross(bone, PALM_NORMAL)
        axes[j] = a / np.linalg.norm(a)
    return axes


def ramp(plan: Plan, replay_speed: float, frame_dt: float, release_s: float = 0.0) -> np.ndarray:
    """(F,) closure weight per control frame: 0 before the approach's last
    :data:`RAMP_RECORDED_S` recorded s, min-jerk up to 1 at the grasp frame, 1 after, and
    from the release's first frame down to 0 over ``release_s`` (s) with the opening's slerp
    fraction (:func:`replay.protocol.release.opening_fraction`), 0 after it."""
    app = np.flatnonzero(plan.phase == PHASE_APPROACH)
    grasp = int(app[-1])
    n = max(1, min(len(app), int(round(RAMP_RECORDED_S / replay_speed / frame_dt))))
    k = np.arange(len(plan.phase))
    r = np.where(k >= grasp, 1.0, min_jerk((k - (grasp - n)) / n))
    r[k < grasp - n] = 0.0
    return r * (1.0 - release.opening_fraction(plan.phase, frame_dt, release_s))


def closed_targets(fingers: np.ndarray, closure, axes: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Finger targets with the extra closure.

    Args:
        fingers: (F, 15, 4) recorded finger targets per control frame, Newton xyzw.
        closure: (5,) rad per finger (:data:`FINGERS`). axes: (15, 3) from :func:`flexion_axes`.
        weight: (F,) ramp from :func:`ramp`.

    Returns:
        (F, 15, 4) new array, xyzw.
    """
    c = np.repeat(np.asarray(closure, float), MANOSIM_HAND.finger_joints // len(FINGERS))  # (15,)
    rv = weight[:, None, None] * (c[:, None] * axes)[None]  # (F, 15, 3)
    q = Rotation.from_quat(fingers.reshape(-1, 4)) * Rotation.from_rotvec(rv.reshape(-1, 3))
    return q.as_quat().reshape(fingers.shape)


def world_finger_targets(plan: Plan, batch, cfg: ReplayConfig) -> np.ndarray:
    """(N, F, 15, 4) finger targets of every world of ``batch``, Newton xyzw: the plan's (a broadcast view)
    unless a world's variant moves its fingers: its extra closure (axes from the compiled hand) on the plan's
    uncompressed targets, then its pad compression (:class:`replay.protocol.pad_compression.PadPlan`: at the
    variant's depth, else the plan's, solved on the world's own finger pose).

    Raises:
        ValueError: a variant asks a pad depth of a plan without pad compression."""
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
        weight = ramp(plan, cfg.replay_speed, cfg.frame_dt, cfg.lift.release_s)
    out = np.empty((N,) + fingers.shape)
    for i, w in enumerate(batch.worlds):
        v = w.variant
        if not v.moves_fingers:
            out[i] = fingers
            continue
        base = fingers if pad is None else pad.raw
        if v.closes_fingers:
            base = closed_targets(base, v.finger_closure, axes, weight)
        if pad is not None:
            depth = pad.depth_mm if v.pad_depth_mm is None else float(v.pad_depth_mm)
            base = pad.compressed(depth, base, figures=False)[0]
        out[i] = base
    return out
