"""The refine protocol (``run_study.py --refine``, :mod:`replay.protocol.refine`): ``<sequence>.refine.json`` beside the
lift job's, its fields the refined run's, ``ablation`` its contact ablation, and the ``refine_*`` fields."""

from __future__ import annotations

import dataclasses

import numpy as np

from replay.protocol.protocols.base import Protocol, register
from replay.results.protocol_results import RefineResult
from replay.results.records import REFINE_FIELDS


@register
class Refine(Protocol):
    """Results ``<sequence>.refine.json``, rows ``refine_rollouts``; settings: :class:`RefineSettings` as a dict."""

    name = "refine"
    rows_field = "refine_rollouts"
    row_fields = REFINE_FIELDS
    ablation = True
    outcome_field = "refine_outcome"
    result_type = RefineResult

    def settings(self, given):
        """Every :class:`RefineSettings` value, ``given`` ones over the defaults."""
        from replay.protocol.refine_settings import RefineSettings

        return dataclasses.asdict(RefineSettings(**(given or {})).validate())

    def run(self, run_contact, rec, coords, *, mjcf, cfg, settings, ablation):
        """The search and the refined run with its ablation (always: the ablation is the refined grasp's proof)."""
        from replay.protocol.refine import refine_recording  # the worker's: the physics loads with it
        from replay.protocol.refine_settings import RefineSettings

        res = refine_recording(rec, coords, mjcf, cfg=cfg, settings=RefineSettings(**(settings or {})))
        return res.refined, res.ablation, res.fields(cfg.ablation_clean_mm)

    def same_settings(self, rec, settings):
        kept = ((getattr(rec.result, "refine_correction", None) or {}).get("settings") or {}).items()
        return settings is None or kept >= settings.items()

    def row(self, rec, json_rel):
        flat = rec.flat()
        return dict({k: flat.get(k) for k in REFINE_FIELDS}, json=json_rel)

    def counts(self, recs, failed, wall_s):
        """Lifted, held, neighbourhood at 0.8 or more and lowest rate, seeds agreeing, median corrections of the lifted
        (mm, deg), clean ablations, rollouts, wall time s."""
        res = [r.result for r in recs if r.result is not None]
        ok = [x for x in res if x.refine_outcome == self.success]

        def med(k):
            return float(np.median([getattr(x, k) for x in ok])) if ok else None

        nb = [x.refine_neighbourhood_success for x in res]
        return {
            "refined": len(res),
            "lifted": len(ok),
            "shake_held": sum(bool(x.refine_shake_held) for x in res),
            "held": sum(bool(x.refine_shake_held) for x in ok),
            "neighbourhood_ok": sum(v is not None and v >= 0.8 for v in nb),
            "neighbourhood_min": min((v for v in nb if v is not None), default=None),
            "seed_agreement": sum(bool(x.refine_seed_agreement) for x in res),
            "median_wrist_mm": med("refine_wrist_mm"),
            "median_wrist_deg": med("refine_wrist_deg"),
            "median_finger_deg": med("refine_finger_deg"),
            "ablation_clean": sum(bool(x.refine_ablation_clean) for x in res),
            "ablation_max_disp_mm": max((x.refine_ablation_max_disp_mm for x in res), default=None),
            "rollouts": sum(int(x.refine_rollouts or 0) for x in res),
            "wall_s": sum(float(x.refine_wall_s or 0.0) for x in res),
        }
