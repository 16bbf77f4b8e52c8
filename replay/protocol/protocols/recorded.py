"""The recorded protocol (``--protocol recorded``): the whole recorded motion, the object free, compared per
frame with the recorded object track (:mod:`replay.protocol.recorded_protocol`); no ablation."""

from __future__ import annotations

import numpy as np

from replay.checks.intent import INTENT_UNKNOWN
from replay.protocol import recorded_protocol as tracking
from replay.protocol.protocols.base import Protocol, register
from replay.protocol.protocols.counting import agreement_medians
from replay.results.outcomes import LOST, TRACKED, UNSTABLE
from replay.results.protocol_results import TrackResult


@register
class Recorded(Protocol):
    """Results ``<sequence>.recorded.json``, rows ``recorded_rollouts`` (``study.recorded.csv``); its setting
    ``max_s``: at most this many recorded seconds after the lift onset (None: to the manipulation's end)."""

    name = "recorded"
    rows_field = "recorded_rollouts"
    row_fields = tracking.TRACK_FIELDS
    csv_suffix = ".recorded"
    success = TRACKED
    result_type = TrackResult

    def plan(self, rec, coords, mjcf, *, cfg):
        return tracking.plan_recorded(rec, coords, cfg)

    def judge(self, rec, plan, scene, *, extent, cfg, trace, poses, metrics):
        """The track figures (the lift verdict does not apply); the per-frame errors join ``poses``."""
        arrays, figures = tracking.track_metrics(rec, plan, poses, cfg=cfg, unstable_frame=metrics["unstable_frame"])
        poses.update(arrays)
        return figures

    def window_end(self, rec, settings):
        stop = tracking.manipulation_end(rec)
        max_s = (settings or {}).get("max_s")
        if max_s is not None:
            g = int(rec.grasp_frame)
            stop = min(stop, int(np.searchsorted(rec.time, rec.time[g] + max_s)))
        return stop

    def record_fields(self, settings):
        return {"recorded_max_s": (settings or {}).get("max_s")}

    def same_settings(self, rec, settings):
        return getattr(rec.result, "recorded_max_s", None) == (settings or {}).get("max_s")

    def row(self, rec, json_rel):
        flat = rec.flat()
        return dict({k: flat.get(k) for k in self.row_fields}, json=json_rel)

    def counts(self, recs, failed, wall_s):
        """Tracked / lost / unstable, medians of ``track_within`` (0-1) and median errors (mm, deg), contact
        agreement, ``by_intent``, ``failed_inputs``, ``wall_s`` s."""
        tr = [r.result for r in recs if r.result is not None]

        def med(k):
            v = [getattr(x, k) for x in tr if getattr(x, k) is not None]
            return float(np.median(v)) if v else None

        by_intent: dict[str, dict[str, int]] = {}
        for r in recs:
            c = by_intent.setdefault(str(r.intent or INTENT_UNKNOWN), {"rollouts": 0, "tracked": 0})
            c["rollouts"] += 1
            c["tracked"] += r.outcome == self.success
        return dict(
            rollouts=len(recs),
            tracked=sum(r.outcome == self.success for r in recs),
            lost=sum(r.outcome == LOST for r in recs),
            unstable=sum(r.outcome == UNSTABLE for r in recs),
            median_track_within=med("track_within"),
            median_track_pos_err_mm=med("track_pos_err_median_mm"),
            median_track_rot_err_deg=med("track_rot_err_median_deg"),
            **agreement_medians(recs),
            by_intent=by_intent,
            failed_inputs=len(failed),
            wall_s=wall_s,
        )
