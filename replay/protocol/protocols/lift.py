"""The lift protocol (``--protocol lift``, the default): settle, the recorded approach, a synthetic lift, hold,
shake and release (:mod:`replay.protocol.lift_plan`, :mod:`replay.protocol.release`); judged on the lift
(:mod:`replay.protocol.measures`), with its contact ablation and the sampled verdict."""

from __future__ import annotations

from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.protocol import release
from replay.protocol.lift_plan import plan_rollout
from replay.protocol.pad_compression import DEEP_FINGERS, PadPlan
from replay.protocol.protocols.base import Protocol, register
from replay.protocol.protocols.counting import lift_counts
from replay.sim import physics


@register
class Lift(Protocol):
    """Results ``<sequence>.json``, rows ``rollouts`` (``study.csv``)."""

    name = "lift"
    primary = True
    rows_field = "rollouts"
    csv_suffix = ""
    ablation = True
    sampled = True
    judged_on_lift = True
    shakes = True
    config_part = "lift"
    counts = staticmethod(lift_counts)

    def plan(self, rec, coords, mjcf, *, cfg):
        """The lift plan, release appended (fingers to the pre-grasp pose), with a ``PadPlan`` where ``pad_compression``
        > 0."""
        plan = plan_rollout(rec, coords, cfg)
        plan = release.extend_plan(
            plan, plan.coords[0], cfg.frame_dt, release_s=cfg.lift.release_s, fall_s=cfg.lift.release_fall_s
        )
        depth = float(physics.choice_value(cfg, "pad_compression"))
        if depth > 0:
            deep = DEEP_FINGERS[physics.choice_value(cfg, "pad_deep_fingers")]
            plan.pad_plan = PadPlan.build(rec, coords, mjcf, cfg=cfg, plan=plan, depth_mm=depth, open_deep=deep.opens)
            fingers, plan.pad = plan.pad_plan.compressed(depth)
            plan.coords = plan.coords.copy()
            plan.coords[:, MANOSIM_HAND.finger_coord_start :] = fingers.reshape(len(fingers), -1)
        return plan
