"""One study job: a recording replayed under one protocol in a worker (process, Ray task or the study's own
process), its results written atomically. Only a worker imports the physics (Newton, MuJoCo, Warp)."""

from __future__ import annotations

import hashlib
import json
import os
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

from replay import console
from replay.config import ReplayConfig
from replay.data.inputs import input_hashes
from replay.errors import DataError
from replay.fileio import storage_fault
from replay.protocol.protocols.base import ResultKey, protocol_named
from replay.results.convert import ResultsFormatError
from replay.results.files import read_rollout, write_poses, write_rollout
from replay.results.records import RolloutRecord
from replay.study.console import quiet_libraries
from replay.study.prepare import prepare_recording
from replay.study.sample_job import run_samples
from replay.study.worker_imports import import_physics

#: frames of an error's traceback kept in the study's records, the innermost (where it was raised)
TRACE_FRAMES = 12


def config_hash(cfg: ReplayConfig) -> str:
    """SHA-256 (16 hex) of the config's JSON, with ``replay/results/calibration.json``'s ``choice`` under the
    physics ``calibrated``."""
    doc = cfg.to_dict()
    if cfg.physics == "calibrated":
        from replay.sim.calibration_file import read_calibration

        doc["calibration"] = read_calibration()["choice"]
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def job_config(cfg: ReplayConfig) -> dict:
    """What a :class:`Job` is given of a config: its dict without the derived ``dt``."""
    d = cfg.to_dict()
    d.pop("dt", None)
    return d


def failed_recordings(failed: dict[ResultKey, str]) -> dict[str, str]:
    """``failed`` per recording: each recording's first failure, in ``failed``'s order."""
    out: dict[str, str] = {}
    for k, line in failed.items():
        out.setdefault(k.sequence, line)
    return out


@dataclass
class Job:
    """One recording of a study under one protocol: what a worker needs (picklable, paths as str)."""

    dataset: str
    sequence: str
    data_dir: str | None
    config: dict
    manosim_dir: str  # the hand MJCF is chosen per recording (hand side)
    out_dir: str  # the study JSON's folder
    rollouts_dir: str
    ablation: bool
    quiet: bool = False
    ablation_only: bool = False  # rerun the ablation into the recording's existing JSON
    protocol: str = "lift"  # a registered protocol's name (replay.protocol.protocols)
    settings: dict | None = None  # the protocol's own settings (recorded: max_s; refine: RefineSettings)
    samples: int = 0  # the sampled verdict: samples per condition (replay.study.sample_job); 0: none
    seed: int = 0  # the samples' seed (replay.study.sampler)
    conditions: tuple = ()  # condition names (replay.study.verdict_conditions)
    corruptions: tuple = ()  # corruption names (replay.study.corruptions)
    physics: str | None = None  # an extra verdict pair's physics (replay.study.verdicts; its config); None: own

    @property
    def key(self) -> ResultKey:
        """Its key in the study's results and ``failed``."""
        return ResultKey(self.sequence, self.protocol, self.physics)

    @property
    def stem(self) -> str:
        """File stem of its results."""
        return self.key.stem


def run_job_safe(job: Job) -> tuple[str, object]:
    """Worker entry: ``("ok", doc)``, ``("refused", DataError.line)`` for bad input, ``("storage", one line)``
    for want of storage (the study stops), or ``("error", message)``: a bug's line and the innermost
    :data:`TRACE_FRAMES` frames of its traceback; every Exception becomes a message."""
    try:
        return "ok", run_job(job)
    except DataError as e:  # the line leads with its cause code (replay.checks.causes)
        return "refused", e.line
    except OSError as e:  # a full disk (or read-only, quota): the study stops, naming the file
        fault = storage_fault(e)
        if fault is None:
            return "error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-TRACE_FRAMES)}"
        return "storage", str(fault)
    except Exception as e:  # a bug in one rollout must not lose the others
        return "error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-TRACE_FRAMES)}"


def run_job(job: Job) -> dict:
    """Worker: load, fit the hand, run the rollouts; the rollout JSON dict, written to ``<rollouts_dir>/<stem>.json``.
    Raises DataError: bad input."""
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    import_physics()  # once per process (the executors import before the first job; a Ray task here)
    if job.quiet:
        quiet_libraries()
    with console.kept_warnings(always=job.quiet) as caught:
        doc = _run_job(job)
    # said once per study by the parent (replay.study.console), not once per worker and rollout
    said = sorted(set(caught))
    doc["run_warnings"] = said
    if said:
        doc = write_rollout(Path(job.rollouts_dir) / f"{job.stem}.json", RolloutRecord.from_dict(doc))
    return doc


def _run_job(job: Job) -> dict:
    # imported here: the study's own process never pays Newton's import
    from replay.protocol.rollout import run_contact

    cfg = ReplayConfig.from_dict(job.config)
    t0 = time.perf_counter()
    rec, coords, mjcf, start = prepare_recording(
        job.dataset,
        job.sequence,
        job.data_dir,
        manosim_dir=job.manosim_dir,
        cfg=cfg,
        protocol=job.protocol,
        settings=job.settings,
    )
    proto = protocol_named(job.protocol)
    mjcf = str(mjcf)
    t_ik = time.perf_counter() - t0

    rdir = Path(job.rollouts_dir)
    out_dir = Path(job.out_dir)
    stem = job.stem
    if job.ablation_only:
        return _rerun_ablation(job, rec, coords, mjcf, cfg, rdir, out_dir, stem, t0)
    obj = rec.target_object.asset
    # hashed before the rollout runs
    inputs = input_hashes([rec.source, obj.visual_mesh, *obj.collision_meshes, Path(mjcf)], job.data_dir)
    base = {
        "object": obj.name,
        "sequence": job.sequence,
        "dataset": job.dataset,
        "hand_mjcf": str(mjcf),
        "object_visual_mesh": str(obj.visual_mesh),
        "support_height": float(rec.support_height),
        "config_hash": config_hash(cfg),
        "kinematics_s": t_ik,
        "crop": [int(start), int(start + rec.num_frames)],
        "input_flags": rec.meta.get("input_flags", {}),
        "intent": rec.meta.get("intent"),
        "object_time_offset_s": float(rec.meta.get("object_time_offset_s") or 0.0),
        "protocol": job.protocol,
        **proto.record_fields(job.settings),
    }
    ablation = job.ablation and proto.ablation
    res, ab, extra = proto.run(run_contact, rec, coords, mjcf=mjcf, cfg=cfg, settings=job.settings, ablation=ablation)
    poses_path = rdir / f"{stem}.npz"
    write_poses(poses_path, res.poses)
    flat = {
        **base,  # input_flags: replay.checks.recording_checks (repaired or corrected input); intent: recording_intent
        **res.metrics,
        "poses": os.path.relpath(poses_path, out_dir),
        **extra,
        **(_ablation_fields(*_ablation(ab, cfg, rdir, out_dir, stem)) if ab is not None else {"ablation": None}),
    }
    if job.samples and proto.sampled:  # P(lift) per condition (and corruption), batched
        flat.update(run_samples(job, (rec, coords, mjcf), cfg))
    flat["inputs"] = inputs
    flat["wall_s_total"] = time.perf_counter() - t0
    return write_rollout(rdir / f"{stem}.json", RolloutRecord.from_metrics(flat))


def _ablation(ab, cfg: ReplayConfig, rdir: Path, out_dir: Path, stem: str) -> tuple[dict, bool, bool]:
    """Write the ablation's poses; (its flat metrics with the poses' path, clean, no rise)."""
    ab_path = rdir / f"{stem}.ablation.npz"
    write_poses(ab_path, ab.poses)
    r = RolloutRecord.from_metrics(ab.metrics)
    no_contact = bool(r.stable and r.grasp.max_hand_object_contacts == 0)
    # clean: the object did not move (< 1 mm, any collision vertex); no_rise: it did
    # not come up (a round object may roll on the table by itself, which is not lifting)
    return (
        {**ab.metrics, "poses": os.path.relpath(ab_path, out_dir)},
        no_contact and r.grasp.max_object_disp_mm < cfg.ablation_clean_mm,
        no_contact and r.grasp.max_object_rise_mm < cfg.ablation_clean_mm,
    )


def _ablation_fields(metrics: dict, clean: bool, no_rise: bool) -> dict:
    """The ablation's fields of the rollout record: ``ablation`` (its flat metrics), ``ablation_clean``,
    ``ablation_no_rise``."""
    return {"ablation": metrics, "ablation_clean": clean, "ablation_no_rise": no_rise}


def _rerun_ablation(job: Job, rec, coords, mjcf, cfg, rdir: Path, out_dir: Path, stem: str, t0: float) -> dict:
    """``--ablation-only``: run the ablation world alone into the existing rollout JSON. Raises DataError: no rollout
    JSON of this config to attach it to (run the study first)."""
    from replay.protocol.rollout import run_rollouts
    from replay.sim.engine.variants import Variant  # in the worker only, as in _run_job

    path = rdir / f"{stem}.json"
    try:
        kept = read_rollout(path)
    except ResultsFormatError as e:
        raise DataError(
            path,
            e.field,
            "no rollout (of this format) to attach the ablation to: run the study without --ablation-only first",
        ) from None
    if kept.config_hash != config_hash(cfg):
        raise DataError(
            path,
            "config_hash",
            f"{kept.config_hash} is not this study's config ({config_hash(cfg)}): rerun the whole recording instead",
        )
    ab = run_rollouts(rec, coords, mjcf, cfg=cfg, variants=[Variant(ablation=True)], protocol=job.protocol)[0]
    metrics, kept.ablation_clean, kept.ablation_no_rise = _ablation(ab, cfg, rdir, out_dir, stem)
    kept.ablation = RolloutRecord.from_metrics(metrics)
    kept.ablation.format_version = None
    kept.timing.ablation_rerun_s = time.perf_counter() - t0
    return write_rollout(path, kept)
