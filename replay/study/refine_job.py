"""The refine job of a study (``run_study.py --refine``): one recording's smallest lifting
correction (:mod:`replay.protocol.refine`), written as ``<sequence>.refine.json`` beside the
lift job's ``<sequence>.json``.

The record's fields are the refined run's (the chosen correction through the whole lift
protocol, shake included), ``ablation`` that correction's contact ablation, and the
``refine_*`` fields (:class:`replay.results.records.RolloutRecord`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from replay.protocol.refine_settings import RefineSettings
from replay.results.files import write_poses
from replay.results.records import FORMAT_VERSION

#: the job's protocol name: results ``<sequence>.refine.json``, key ``<sequence> [refine]``
REFINE = "refine"


def refine_settings(given: dict) -> dict:
    """Every :class:`RefineSettings` value, ``given`` ones over the defaults (a study keeps a refine
    result only when all of them match, :mod:`replay.study.runner`).

    Raises:
        UsageError: a value out of range.
    """
    return RefineSettings(**given).validate().to_dict()


def run_refine(job, rec, coords, mjcf: str, cfg, t0: float, doc_base: dict) -> dict:
    """Search and run one recording's refined grasp, write its poses; returns the rollout JSON
    dict (the caller adds the input hashes and writes it).

    Args:
        job: the :class:`replay.study.job.Job` (``refine``: :class:`RefineSettings` as a dict).
        rec, coords, mjcf, cfg: the prepared recording (lift window) and settings.
        t0: the job's start (perf_counter s). doc_base: identity fields of the job's JSON.
    """
    from replay.protocol.refine import refine_recording  # in the worker only

    settings = RefineSettings(**(job.refine or {}))
    res = refine_recording(rec, coords, mjcf, cfg, settings)
    rdir, out_dir = Path(job.rollouts_dir), Path(job.out_dir)
    poses_path = rdir / f"{job.stem}.npz"
    ab_path = rdir / f"{job.stem}.ablation.npz"
    write_poses(poses_path, res.refined.poses)
    write_poses(ab_path, res.ablation.poses)
    ab = res.ablation.metrics
    doc = {
        "format_version": FORMAT_VERSION,
        **doc_base,
        **res.refined.metrics,
        "poses": os.path.relpath(poses_path, out_dir),
        "ablation": {**ab, "poses": os.path.relpath(ab_path, out_dir)},
        **res.fields(cfg.ablation_clean_mm),
    }
    doc["ablation_clean"] = doc["refine_ablation_clean"]
    doc["ablation_no_rise"] = bool(
        ab["stable"] and ab["max_hand_object_contacts"] == 0 and ab["max_object_rise_mm"] < cfg.ablation_clean_mm
    )
    doc["wall_s_total"] = time.perf_counter() - t0
    return doc


def refine_summary(docs: list[dict]) -> dict:
    """Study counts of the refine jobs: lifted after refining, held (lifted and through the shake),
    neighbourhood at 0.8 or more, its lowest rate, seeds in agreement, medians of the correction of
    those that lifted (mm, deg), clean ablations, rollouts and wall time (s) in all."""
    import numpy as np

    ok = [d for d in docs if d.get("refine_outcome") == "lifted"]

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


def refine_row(doc: dict, json_rel: str) -> dict:
    """The study JSON's ``refine_rollouts`` row of one refine job (:data:`replay.results.records.REFINE_FIELDS`)."""
    from replay.results.records import REFINE_FIELDS

    row = {k: doc.get(k) for k in REFINE_FIELDS}
    row["json"] = json_rel
    return row


def refine_part(results: dict, seqs: list[str], rdir: Path, out_dir: Path, counts: dict, key, stem) -> list[dict]:
    """The study's ``refine_rollouts`` rows of the refine jobs in ``results`` in study order; sets
    ``counts["refine"]`` (:func:`refine_summary`). ``key``, ``stem``: the study's
    ``result_key`` / ``result_stem`` (:mod:`replay.study.job`) of ``(sequence, protocol)``."""
    docs = [results[key(s, REFINE)] for s in seqs if key(s, REFINE) in results]
    counts["refine"] = refine_summary(docs)
    return [refine_row(d, os.path.relpath(rdir / f"{stem(d['sequence'], REFINE)}.json", out_dir)) for d in docs]
