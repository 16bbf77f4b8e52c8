"""The refine protocol (``run_study.py --refine``): one recording's smallest correction that lifts
(:mod:`replay.protocol.refine`), written as ``<sequence>.refine.json`` beside the lift job's ``<sequence>.json``.

The record's fields are the refined run's (the chosen correction through the whole lift protocol, shake
included), ``ablation`` that correction's contact ablation, and the ``refine_*`` fields."""

from __future__ import annotations

import numpy as np

from replay.protocol.protocols.base import Protocol, register
from replay.results.records import REFINE_FIELDS


@register
class Refine(Protocol):
    """Results ``<sequence>.refine.json``, rows ``refine_rollouts``; settings: :class:`RefineSettings` as a dict."""

    name = "refine"
    rows_field = "refine_rollouts"
    row_fields = REFINE_FIELDS
    ablation = True
    outcome_field = "refine_outcome"

    def settings(self, given):
        """Every :class:`RefineSettings` value, ``given`` ones over the defaults (a study keeps a refine result
        only when all of them match)."""
        from replay.protocol.refine_settings import RefineSettings

        return RefineSettings(**(given or {})).validate().to_dict()

    def run(self, run_rollouts, rec, coords, mjcf, cfg, settings, ablation):
        """The search and the refined run with its ablation (always: the ablation is the refined grasp's proof)."""
        from replay.protocol.refine import refine_recording  # the worker's: the physics loads with it
        from replay.protocol.refine_settings import RefineSettings

        res = refine_recording(rec, coords, mjcf, cfg, RefineSettings(**(settings or {})))
        return res.refined, res.ablation, res.fields(cfg.ablation_clean_mm)

    def same_settings(self, doc, settings):
        """Every setting asked for is the one the search ran with."""
        kept = ((doc.get("refine_correction") or {}).get("settings") or {}).items()
        return settings is None or kept >= settings.items()

    def row(self, doc, json_rel):
        return dict({k: doc.get(k) for k in REFINE_FIELDS}, json=json_rel)

    def counts(self, docs, failed, wall_s):
        """Lifted after refining, held (lifted and through the shake), neighbourhood at 0.8 or more, its lowest
        rate, seeds in agreement, medians of the correction of those that lifted (mm, deg), clean ablations,
        rollouts and wall time (s) in all."""
        ok = [d for d in docs if d.get("refine_outcome") == self.success]

        def med(k):
            return float(np.median([d[k] for d in ok])) if ok else None

        nb = [d.get("refine_neighbourhood_success") for d in docs]
        return {
            "refined": len(docs),
            "lifted": len(ok),
            "shake_held": sum(bool(d.get("refine_shake_held")) for d in docs),
            "held": sum(bool(d.get("refine_shake_held")) for d in ok),
            "neighbourhood_ok": sum(v is not None and v >= 0.8 for v in nb),
            "neighbourhood_min": min((v for v in nb if v is not None), default=None),
            "seed_agreement": sum(bool(d.get("refine_seed_agreement")) for d in docs),
            "median_wrist_mm": med("refine_wrist_mm"),
            "median_wrist_deg": med("refine_wrist_deg"),
            "median_finger_deg": med("refine_finger_deg"),
            "ablation_clean": sum(bool(d.get("refine_ablation_clean")) for d in docs),
            "ablation_max_disp_mm": max((d["refine_ablation_max_disp_mm"] for d in docs), default=None),
            "rollouts": sum(int(d.get("refine_rollouts") or 0) for d in docs),
            "wall_s": sum(float(d.get("refine_wall_s") or 0.0) for d in docs),
        }
