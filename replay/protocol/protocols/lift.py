"""The lift protocol (``--protocol lift``, the default): settle, the recorded approach, a synthetic lift, hold,
shake and release (:mod:`replay.protocol.lift_plan`, :mod:`replay.protocol.release`); judged on the lift
(:mod:`replay.protocol.measures`), with its contact ablation and the sampled verdict."""

from __future__ import annotations

from replay.protocol import release
from replay.protocol.lift_plan import plan_rollout
from replay.protocol.pad_compression import compress_coords
from replay.protocol.plan import replayed_frames
from replay.protocol.protocols.base import Protocol, register
from replay.protocol.protocols.counting import lift_counts


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

    def plan(self, rec, coords, mjcf, cfg):
        """The lift plan with the release appended; with ``pad_compression_mm`` > 0 the fingers closed to a
        preload depth at the grasp frame (the release opens to the recorded pre-grasp pose)."""
        pad, raw = None, coords
        if cfg.pad_compression_mm > 0:
            first = replayed_frames(rec, coords, cfg.approach_window_s, int(rec.grasp_frame) + 1)[2]
            coords, pad = compress_coords(rec, coords, mjcf, cfg, first)
        plan = plan_rollout(rec, coords, cfg)
        opened = plan.coords[0] if pad is None else plan_rollout(rec, raw, cfg).coords[0]
        plan = release.extend_plan(plan, opened, cfg.frame_dt, cfg.release_s, cfg.release_fall_s)
        plan.pad, plan.contact_coords = pad, raw
        return plan

    def counts(self, recs, failed, wall_s):
        return lift_counts(recs, failed, wall_s)
