"""The recorded protocol (``--protocol recorded``): the whole recorded motion, the object free, compared per
frame with the recorded object track (:mod:`replay.protocol.recorded_protocol`); no ablation."""

from __future__ import annotations

import numpy as np

from replay.protocol import recorded_protocol as tracking
from replay.protocol.protocols.base import Protocol, register
from replay.protocol.protocols.counting import agreement_medians


@register
class Recorded(Protocol):
    """Results ``<sequence>.recorded.json``, rows ``recorded_rollouts`` (``study.recorded.csv``); its setting
    ``max_s``: at most this many recorded seconds after the lift onset (None: to the manipulation's end)."""

    name = "recorded"
    rows_field = "recorded_rollouts"
    row_fields = tracking.TRACK_FIELDS
    csv_suffix = ".recorded"
    success = "tracked"

    def plan(self, rec, coords, mjcf, cfg):
        return tracking.plan_recorded(rec, coords, cfg)

    def judge(self, rec, plan, scene, extent, cfg, trace, poses, metrics):
        """The track figures (the lift verdict does not apply); the per-frame errors join ``poses``."""
        arrays, figures = tracking.track_metrics(rec, plan, poses, cfg, metrics["unstable_frame"])
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

    def same_settings(self, doc, settings):
        return doc.get("recorded_max_s") == (settings or {}).get("max_s")

    def row(self, doc, json_rel):
        return dict({k: doc.get(k) for k in tracking.TRACK_FIELDS}, json=json_rel)

    def counts(self, docs, failed, wall_s):
        """Tracked / lost / unstable and the medians (:func:`replay.protocol.recorded_protocol.summarize`) with the
        contact agreement, ``by_intent`` (rollouts per intent), ``failed_inputs`` and ``wall_s`` (s)."""
        by_intent: dict[str, dict[str, int]] = {}
        for r in docs:
            c = by_intent.setdefault(str(r.get("intent") or "unknown"), {"rollouts": 0, "tracked": 0})
            c["rollouts"] += 1
            c["tracked"] += r.get("outcome") == self.success
        return dict(
            tracking.summarize(docs),
            **agreement_medians(docs),
            by_intent=by_intent,
            failed_inputs=len(failed),
            wall_s=wall_s,
        )
