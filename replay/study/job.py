"""One study job: a recording replayed under one protocol in a worker (process, Ray task or
the study's own process), its results written atomically (:mod:`replay.results`).

The study's process builds :class:`Job` s and reads their results; only the worker imports
the physics (Newton, MuJoCo, Warp), inside :func:`run_job`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.fileio import storage_fault
from replay.protocol.plan import ABLATION_PROTOCOLS
from replay.results.files import read_rollout, write_poses, write_rollout
from replay.results.records import FORMAT_VERSION, ResultsFormatError, RolloutRecord
from replay.study.console import quiet_libraries
from replay.study.inputs import input_hashes
from replay.study.prepare import prepare_recording
from replay.study.refine_job import REFINE, run_refine
from replay.study.sample_job import run_samples
from replay.study.verdict_conditions import SAMPLE_PROTOCOLS
from replay.study.worker_imports import import_physics

#: frames of an error's traceback kept in the study's records, the innermost (where it was raised)
TRACE_FRAMES = 12


def config_hash(cfg: ReplayConfig) -> str:
    """SHA-256 (16 hex) of the config's JSON: identifies results that can be resumed. Under the physics
    ``calibrated`` its chosen values (``docs/results/calibration.json``'s ``choice``) are hashed with it:
    a new calibration is a new config."""
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


def result_stem(sequence: str, protocol: str = "lift") -> str:
    """Results file stem of a (sequence, protocol): lift keeps ``<sequence>`` (``/`` -> ``__``);
    another protocol adds ``.<protocol>`` so it never overwrites the lift results."""
    base = sequence.replace("/", "__")
    return base if protocol == "lift" else f"{base}.{protocol}"


def result_key(sequence: str, protocol: str = "lift") -> str:
    """Key of a (sequence, protocol) in the study's results and ``failed``: ``<sequence>`` or
    ``<sequence> [<protocol>]``."""
    return sequence if protocol == "lift" else f"{sequence} [{protocol}]"


def key_sequence(key: str, sequences) -> str:
    """The sequence of a result key (:func:`result_key`'s inverse) among ``sequences``: the key itself, or
    the longest of them it starts with followed by `` [<protocol>]``; the key where none fits."""
    if key in sequences:
        return key
    if key.endswith("]"):  # each " [" from the right: the longest sequence first (a name may hold " [" itself)
        at = key.rfind(" [")
        while at > 0:
            if key[:at] in sequences:
                return key[:at]
            at = key.rfind(" [", 0, at)
    return key


def failed_recordings(failed: dict, sequences) -> dict:
    """``failed`` (result key -> one line) per recording: each recording's first failure, in ``failed``'s
    order. A recording refused as bad input is refused under every protocol and (protocol, physics) pair
    it runs; counted once (newcomer check: ``make study``'s three verdicts counted 2 refusals as 6)."""
    out: dict[str, str] = {}
    sequences = set(sequences)
    for k, line in failed.items():
        out.setdefault(key_sequence(k, sequences), line)
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
    protocol: str = "lift"  # replay.protocol.plan.PROTOCOLS
    recorded_max_s: float | None = None  # recorded protocol: at most this long after the lift onset
    refine: dict | None = None  # protocol "refine": replay.protocol.refine.RefineSettings as a dict
    samples: int = (
        0  # the sampled verdict: samples per condition (replay.study.sample_job; lift and hug-oracle); 0: none
    )
    seed: int = 0  # the samples' seed (replay.study.sampler)
    conditions: tuple = ()  # condition names (replay.study.verdict_conditions)
    corruptions: tuple = ()  # corruption names (replay.study.corruptions)
    verdict: str | None = None  # an extra verdict pair '<protocol>@<physics>' (replay.study.verdicts); its config

    @property
    def stem(self) -> str:
        """File stem of its results: ``<sequence>`` (lift), ``<sequence>.recorded``, an extra verdict's
        ``<sequence>.hug-oracle@authored``."""
        return result_stem(self.sequence, self.verdict or self.protocol)

    @property
    def key(self) -> str:
        """Its key in the study's results and ``failed``."""
        return result_key(self.sequence, self.verdict or self.protocol)


def run_job_safe(job: Job) -> tuple[str, object]:
    """Worker entry (pool, Ray or in process): ``("ok", doc)``, ``("refused", one line)`` for
    input the checks refuse or cannot read (a :class:`DataError`: the file and field named, led
    by its cause code where a check named one, :attr:`DataError.line`),
    ``("storage", one line)`` when a write failed for want of storage
    (:func:`replay.fileio.storage_fault`: the study stops), or ``("error", message)`` for a bug in
    one rollout: its one line, then the innermost :data:`TRACE_FRAMES` frames of its traceback (a code
    error while stepping is one too: only a physical failure is ``unstable``).

    Every failure becomes a message here, so one bad recording or one bug never costs the others.
    """
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
    """Worker: load, fit the hand, run contact + ablation rollouts, write results.

    Returns the rollout JSON dict (also written to ``<rollouts_dir>/<sequence>.json``).
    Bad input raises :class:`DataError` (the study records it and goes on).
    """
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    if job.quiet:
        quiet_libraries()
    with warnings.catch_warnings(record=True) as caught:
        if job.quiet:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", category=DeprecationWarning)
        doc = _run_job(job)
    # said once per study by the parent (replay.study.console), not once per worker and rollout
    doc["run_warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    if doc["run_warnings"]:  # kept with the rollout: the console says each only once, shortened
        doc = write_rollout(Path(job.rollouts_dir) / f"{job.stem}.json", RolloutRecord.from_dict(doc))
    return doc


def _run_job(job: Job) -> dict:
    # imported here, in the worker: the study's own process never pays Newton's import
    import_physics()  # once per process, the collector paused (replay.study.worker_imports)
    from replay.protocol.rollout import run_rollouts
    from replay.sim.engine.variants import Variant

    cfg = ReplayConfig.from_dict(job.config)
    t0 = time.perf_counter()
    rec, coords, mjcf, start = prepare_recording(
        job.dataset, job.sequence, job.data_dir, job.manosim_dir, cfg, job.protocol, job.recorded_max_s
    )
    mjcf = str(mjcf)
    t_ik = time.perf_counter() - t0

    rdir = Path(job.rollouts_dir)
    out_dir = Path(job.out_dir)
    stem = job.stem
    if job.ablation_only:
        return _rerun_ablation(job, rec, coords, mjcf, cfg, rdir, out_dir, stem, t0)
    obj = rec.target_object.asset
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
        "recorded_max_s": job.recorded_max_s,
    }
    if job.protocol == REFINE:
        doc = run_refine(job, rec, coords, mjcf, cfg, t0, base)
        doc["inputs"] = input_hashes([rec.source, obj.visual_mesh, *obj.collision_meshes, Path(mjcf)], job.data_dir)
        return write_rollout(rdir / f"{stem}.json", RolloutRecord.from_dict(doc))
    ablation = job.ablation and job.protocol in ABLATION_PROTOCOLS  # the ablation is a lift check
    variants = [Variant()] + ([Variant(ablation=True)] if ablation else [])
    # contact run and ablation share one scene and one batch (two worlds)
    results = run_rollouts(rec, coords, mjcf, cfg, variants, protocol=job.protocol)
    res = results[0]
    poses_path = rdir / f"{stem}.npz"
    write_poses(poses_path, res.poses)
    doc = {
        "format_version": FORMAT_VERSION,
        **base,  # input_flags: replay.checks.recording_checks (repaired or corrected input); intent: recording_intent
        **res.metrics,
        "poses": os.path.relpath(poses_path, out_dir),
    }
    if ablation:
        _attach_ablation(doc, results[1], cfg, rdir, out_dir, stem)
    else:
        doc["ablation"] = None
    if job.samples and job.protocol in SAMPLE_PROTOCOLS:  # P(lift) per condition (and corruption), batched
        doc.update(run_samples(job, (rec, coords, mjcf), cfg))
    paths = [rec.source, obj.visual_mesh, *obj.collision_meshes, Path(mjcf)]
    doc["inputs"] = input_hashes(paths, job.data_dir)
    doc["wall_s_total"] = time.perf_counter() - t0
    return write_rollout(rdir / f"{stem}.json", RolloutRecord.from_dict(doc))


def _attach_ablation(doc: dict, ab, cfg: ReplayConfig, rdir: Path, out_dir: Path, stem: str) -> None:
    """Write the ablation's poses and put its metrics and verdicts into the rollout ``doc``."""
    ab_path = rdir / f"{stem}.ablation.npz"
    write_poses(ab_path, ab.poses)
    doc["ablation"] = {**ab.metrics, "poses": os.path.relpath(ab_path, out_dir)}
    no_contact = bool(ab.metrics["stable"] and ab.metrics["max_hand_object_contacts"] == 0)
    # clean: the object did not move (< 1 mm, any collision vertex); no_rise: it did
    # not come up (a round object may roll on the table by itself, which is not lifting)
    doc["ablation_clean"] = no_contact and ab.metrics["max_object_disp_mm"] < cfg.ablation_clean_mm
    doc["ablation_no_rise"] = no_contact and ab.metrics["max_object_rise_mm"] < cfg.ablation_clean_mm


def _rerun_ablation(job: Job, rec, coords, mjcf, cfg, rdir: Path, out_dir: Path, stem: str, t0: float) -> dict:
    """``--ablation-only``: run only the ablation world and replace it in the existing rollout JSON.

    Raises:
        DataError: no rollout JSON of this config to attach it to (run the study first).
    """
    from replay.protocol.rollout import run_rollouts
    from replay.sim.engine.variants import Variant  # in the worker only, as in _run_job

    path = rdir / f"{stem}.json"
    try:
        doc = read_rollout(path).to_dict()
    except ResultsFormatError as e:
        raise DataError(
            path,
            e.field,
            "no rollout (of this format) to attach the ablation to: run the study without --ablation-only first",
        ) from None
    if doc.get("config_hash") != config_hash(cfg):
        raise DataError(
            path,
            "config_hash",
            f"{doc.get('config_hash')} is not this study's config "
            f"({config_hash(cfg)}): rerun the whole recording instead",
        )
    ab = run_rollouts(rec, coords, mjcf, cfg, [Variant(ablation=True)])[0]
    _attach_ablation(doc, ab, cfg, rdir, out_dir, stem)
    doc["ablation_rerun_s"] = time.perf_counter() - t0
    return write_rollout(path, RolloutRecord.from_dict(doc))
