"""Many rollouts: one process (or Ray task) per recording, atomic per-rollout results, resume, summary.

Layout of a study written to ``out/study.json`` (records, writer and reader:
:mod:`replay.results`; every field with unit and frame: ``docs/results.md``)::

    out/study.json                       summary (rewritten atomically after every rollout)
    out/study.csv                        its rows, one per recording
    out/study_rollouts/<sequence>.json   one per recording: contact run + ``ablation``
    out/study_rollouts/<sequence>.npz    per-frame poses of the contact run
    out/study_rollouts/<sequence>.ablation.npz

``--resume`` skips a sequence whose rollout JSON exists with this format version and the
same ``config_hash``; ``--objects`` where a study of the same config is merges into it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.config import ReplayConfig
from replay.console import StudyConsole, quiet_libraries
from replay.fileio import sha256_file
from replay.errors import DataError, OutputError, UsageError
from replay.results import (FORMAT_VERSION, ResultsFormatError, RolloutRecord, StudyRecord, read_rollout, study_row,
                            write_poses, write_rollout, write_study)
from replay.results import dumps  # noqa: F401  (kept importable from here: benchmarks/engine.py)

#: Recording frames kept around the approach window before kinematics (IK) is run.
CROP_MARGIN_FRAMES = 2


def config_hash(cfg: ReplayConfig) -> str:
    """SHA-256 (16 hex) of the config's JSON: identifies results that can be resumed."""
    return hashlib.sha256(json.dumps(cfg.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


def package_versions() -> dict:
    """Versions of the packages a result depends on."""
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for p in ("newton", "mujoco", "mujoco-warp", "warp-lang", "numpy", "scipy", "trimesh"):
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = None
    return out


def sequence_object(dataset: str, sequence: str) -> str | None:
    """The object a sequence name says it holds (GRAB ``mug_lift`` -> ``mug``), or None
    where names carry none (TACO ``20231104_010`` is a date and a take; HUG-Bench
    ``test/small_2`` a scene): ``--objects`` then takes sequence names only."""
    if dataset == "grab":
        return sequence.split("/")[-1].rsplit("_", 1)[0]
    return None


def select_sequences(dataset: str, sequences: list[str], names: str, first_only: bool = False) -> list[str]:
    """The sequences a comma-separated ``--objects`` value names (by sequence or object,
    :func:`sequence_object`), in the order named; ``first_only``: one per name.

    Raises:
        UsageError: a name matches no sequence.
    """
    picked = []
    for n in [x.strip() for x in names.split(",") if x.strip()]:
        hit = [s for s in sequences if s == n or sequence_object(dataset, s) == n]
        if not hit:
            raise UsageError("--objects", f"no {dataset} sequence for {n!r}")
        picked += hit[:1] if first_only else hit
    return picked


def crop_recording(rec, start: int, stop: int):
    """A copy of ``rec`` holding frames ``[start, stop)`` (grasp frame re-indexed)."""
    import copy

    from replay.data.types import ObjectTrack

    sl = slice(start, stop)
    out = copy.copy(rec)
    out.time = rec.time[sl] - rec.time[start] + rec.time[0]
    out.valid = rec.valid[sl]
    for name in ("wrist_pos", "wrist_quat", "finger_quat", "landmarks"):
        v = getattr(rec, name)
        setattr(out, name, None if v is None else v[sl])
    out.objects = [ObjectTrack(o.asset, o.pos[sl], o.quat[sl], o.tracked) for o in rec.objects]
    if rec.mano is not None:  # per-frame MANO arrays (TACO, HUG-Bench); betas may be per sequence
        T = rec.num_frames
        out.mano = dataclasses.replace(rec.mano, **{
            f.name: getattr(rec.mano, f.name)[sl]
            for f in dataclasses.fields(rec.mano)
            if isinstance(getattr(rec.mano, f.name), np.ndarray) and getattr(rec.mano, f.name).shape[:1] == (T,)
        })
    out.grasp_frame = int(rec.grasp_frame - start)
    out.meta = dict(rec.meta, cropped_from=[int(start), int(stop)])
    for k in ("grab_wrist_loc", "grab_wrist_quat_xyzw"):
        if isinstance(rec.meta.get(k), np.ndarray) and len(rec.meta[k]) == rec.num_frames:
            out.meta[k] = rec.meta[k][sl]
    return out


def hand_trajectory(rec, mjcf: Path):
    """(recording, coords (T, 67)) with the hand filled in (landmark IK where needed).

    Uses :func:`replay.kinematics.complete_hand` and :func:`replay.kinematics.hand_coords`.
    The IK always runs on the capsule MJCF of the same hand (``capsule_hand.xml`` beside
    ``mjcf``): manosim's mesh hand has the same bodies and joints, only its collision
    geometry differs, and the kinematics defines fingertips on the capsules.
    """
    from replay import kinematics

    if rec.wrist_pos is None or rec.finger_quat is None:
        ik_mjcf = Path(mjcf).with_name("capsule_hand.xml")
        rec = kinematics.complete_hand(rec, ik_mjcf if ik_mjcf.is_file() else mjcf)
    return rec, np.asarray(kinematics.hand_coords(rec), dtype=np.float64)


def prepare_recording(dataset: str, sequence: str, data_dir, manosim_dir, cfg: ReplayConfig):
    """Load a recording, crop it to the replayed window and fill in the hand.

    Returns:
        ``(recording, coords (T, 67) Newton joint_q order xyzw, hand MJCF path, crop start frame)``.

    Raises:
        DataError: bad or missing input.
    """
    from replay.data import load_recording
    from replay.hand_assets import hand_mjcf_path

    rec = load_recording(dataset, sequence, data_dir)
    # only the replayed window needs the hand: crop before IK (minutes -> seconds)
    g = rec.grasp_frame
    start = 0 if cfg.approach_window_s is None else int(
        np.searchsorted(rec.time, rec.time[g] - cfg.approach_window_s))
    start = max(0, start - CROP_MARGIN_FRAMES)
    rec = crop_recording(rec, start, min(rec.num_frames, g + 1 + CROP_MARGIN_FRAMES))
    mjcf = hand_mjcf_path(manosim_dir, cfg, rec.hand_side)
    rec, coords = hand_trajectory(rec, Path(mjcf))
    return rec, coords, mjcf, start


@dataclass
class Job:
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


def _input_hashes(paths: list[Path], data_dir: str | None) -> dict:
    """``{path: sha256}`` from ``<data_dir>/MANIFEST.json`` when it lists the file, else hashed."""
    manifest = {}
    root = None
    if data_dir is not None:
        mpath = Path(data_dir) / "MANIFEST.json"
        if mpath.is_file():
            try:
                manifest = json.loads(mpath.read_text()).get("files", {})
                root = Path(data_dir).resolve()
            except (OSError, json.JSONDecodeError) as e:
                raise DataError(mpath, None, f"cannot read manifest: {e}") from e
    out = {}
    for p in paths:
        p = Path(p).resolve()
        key = None
        if root is not None:
            try:
                key = str(p.relative_to(root))
            except ValueError:
                key = None
        if key is not None and key in manifest and "sha256" in manifest[key]:
            out[key] = {"sha256": manifest[key]["sha256"], "from": "manifest"}
        else:
            out[str(p)] = {"sha256": sha256_file(p), "from": "hashed"}
    return out


def _run_job_safe(job: Job) -> tuple[str, object]:
    """Process-pool entry: ``("ok", doc)`` or ``("error", message)``.

    Exceptions are turned into strings here because :class:`DataError` (custom
    ``__init__``) cannot be unpickled in the parent, which breaks the whole pool.
    """
    try:
        return "ok", run_job(job)
    except DataError as e:
        return "error", str(e)
    except Exception as e:  # a bug in one rollout must not lose the others
        import traceback

        return "error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}"


def run_job(job: Job) -> dict:
    """Worker: load, fit the hand, run contact + ablation rollouts, write results.

    Returns the rollout JSON dict (also written to ``<rollouts_dir>/<sequence>.json``).
    Bad input raises :class:`DataError` (the study records it and goes on).
    """
    import warnings

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    if job.quiet:
        quiet_libraries()
    with warnings.catch_warnings(record=True) as caught:
        if job.quiet:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", category=DeprecationWarning)
        doc = _run_job(job)
    # said once per study by the parent (replay.console), not once per worker and rollout
    doc["run_warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return doc


def _run_job(job: Job) -> dict:
    from replay.engine import Variant
    from replay.rollout import run_rollouts

    cfg = ReplayConfig.from_dict(job.config)
    t0 = time.perf_counter()
    rec, coords, mjcf, start = prepare_recording(job.dataset, job.sequence, job.data_dir, job.manosim_dir, cfg)
    mjcf = str(mjcf)
    t_ik = time.perf_counter() - t0

    rdir = Path(job.rollouts_dir)
    out_dir = Path(job.out_dir)
    stem = job.sequence.replace("/", "__")
    if job.ablation_only:
        return _rerun_ablation(job, rec, coords, mjcf, cfg, rdir, out_dir, stem, t0)
    variants = [Variant()] + ([Variant(ablation=True)] if job.ablation else [])
    # contact run and ablation share one scene and one batch (two worlds)
    results = run_rollouts(rec, coords, mjcf, cfg, variants)
    res = results[0]
    poses_path = rdir / f"{stem}.npz"
    write_poses(poses_path, res.poses)
    obj = rec.target_object.asset
    doc = {
        "format_version": FORMAT_VERSION,
        "object": obj.name,
        "sequence": job.sequence,
        "dataset": job.dataset,
        "hand_mjcf": str(mjcf),
        "object_visual_mesh": str(obj.visual_mesh),
        "support_height": float(rec.support_height),
        "config_hash": config_hash(cfg),
        "kinematics_s": t_ik,
        "crop": [int(start), int(start + rec.num_frames)],
        "input_flags": rec.meta.get("input_flags", {}),  # replay.input_checks: repaired or corrected input
        **res.metrics,
        "poses": os.path.relpath(poses_path, out_dir),
    }
    if job.ablation:
        _attach_ablation(doc, results[1], cfg, rdir, out_dir, stem)
    else:
        doc["ablation"] = None
    paths = [rec.source, obj.visual_mesh, *obj.collision_meshes, Path(mjcf)]
    doc["inputs"] = _input_hashes(paths, job.data_dir)
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
    from replay.engine import Variant
    from replay.rollout import run_rollouts

    path = rdir / f"{stem}.json"
    try:
        doc = read_rollout(path).to_dict()
    except ResultsFormatError as e:
        raise DataError(path, e.field, "no rollout (of this format) to attach the ablation to: run the study "
                                       "without --ablation-only first") from None
    if doc.get("config_hash") != config_hash(cfg):
        raise DataError(path, "config_hash", f"{doc.get('config_hash')} is not this study's config "
                                             f"({config_hash(cfg)}): rerun the whole recording instead")
    ab = run_rollouts(rec, coords, mjcf, cfg, [Variant(ablation=True)])[0]
    _attach_ablation(doc, ab, cfg, rdir, out_dir, stem)
    doc["ablation_rerun_s"] = time.perf_counter() - t0
    return write_rollout(path, RolloutRecord.from_dict(doc))


def diagnosis_classes() -> tuple[str, ...]:
    from replay.diagnosis import CLASSES

    return CLASSES


def summarize(rollouts: list[dict], failed: dict, wall_s: float) -> dict:
    """Study-level counts and timing."""
    n = len(rollouts)
    ab = [r for r in rollouts if r.get("ablation")]
    rt = [r["wall_s_total"] for r in rollouts if r.get("wall_s_total")]
    rtf = [r["rtf"] for r in rollouts if r.get("rtf")]
    fl = [r["contacts_force_at_lift"] for r in rollouts if r.get("contacts_force_at_lift") is not None]
    we = [r["wrist_err_median_mm"] for r in rollouts if r.get("wrist_err_median_mm") is not None]
    return {
        "rollouts": n,
        "stable": sum(bool(r["stable"]) for r in rollouts),
        "lifted": sum(bool(r["lifted"]) for r in rollouts),
        "shake_held": sum(bool(r.get("shake_held")) for r in rollouts),
        "dropped": sum(r["outcome"] == "dropped" for r in rollouts),
        "unstable": sum(r["outcome"] == "unstable" for r in rollouts),
        "ablation_run": len(ab),
        "ablation_clean": sum(bool(r.get("ablation_clean")) for r in ab),
        "ablation_no_rise": sum(bool(r.get("ablation_no_rise")) for r in ab),
        "ablation_lifted": sum(bool(r["ablation"]["lifted"]) for r in ab),
        "ablation_max_disp_mm": max((r["ablation"]["max_object_disp_mm"] for r in ab), default=None),
        "diagnosis": {c: sum(1 for r in rollouts if (r.get("diagnosis") or {}).get("class") == c)
                      for c in diagnosis_classes()},
        "failed_inputs": len(failed),
        "median_contacts_force_at_lift": float(np.median(fl)) if fl else None,
        "median_wrist_err_mm": float(np.median(we)) if we else None,
        "wall_s": wall_s,
        "mean_rollout_pair_s": float(np.mean(rt)) if rt else None,
        "median_rtf": float(np.median(rtf)) if rtf else None,
    }


def _stem(seq: str) -> str:
    return seq.replace("/", "__")


def _done_rollout(rdir: Path, seq: str, chash: str, need_ablation: bool) -> dict | None:
    """The rollout JSON of ``seq`` if it is of this format and config (and has its ablation
    when one is wanted), else None (it runs again)."""
    try:
        doc = read_rollout(rdir / f"{_stem(seq)}.json").to_dict()
    except ResultsFormatError:
        return None
    if doc.get("config_hash") != chash or (need_ablation and doc.get("ablation") is None):
        return None
    return doc


def _prior_study(out: Path) -> dict | None:
    """The study JSON already at ``out`` (any format version: only its identity is read), or None."""
    try:
        doc = json.loads(out.read_text())
    except (OSError, json.JSONDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _subset_merge(out: Path, prior: dict | None, dataset: str, chash: str, seqs: list[str],
                  all_seqs: list[str]) -> list[str]:
    """The sequences of a ``--objects`` study written where a study already is: the earlier
    study's recordings plus this subset, in dataset order (a subset never clobbers a study).

    Raises:
        UsageError: the study there is of another dataset or config (its rollouts would be
            overwritten by other settings' results): give another ``--out``.
    """
    if prior is None or not prior.get("sequences"):
        return seqs
    if prior.get("dataset") != dataset or prior.get("config_hash") != chash:
        raise UsageError("--objects", f"{out} holds a study of another dataset or config (hash "
                                      f"{prior.get('config_hash')}, this one {chash}); a subset would overwrite its "
                                      "rollouts: give another --out, or run the whole study without --objects")
    keep = set(prior["sequences"]) | set(seqs)
    return [s for s in all_seqs if s in keep] + [s for s in seqs if s not in all_seqs]


def _resolve_sequences(dataset: str, all_seqs: list[str], sequences, objects) -> list[str]:
    seqs = list(sequences) if sequences else list(all_seqs)
    if objects:
        want = set(objects)
        seqs = [s for s in seqs if sequence_object(dataset, s) in want or s in want]
        missing = want - {sequence_object(dataset, s) for s in seqs} - set(seqs)
        if missing:
            have = sorted({o for s in all_seqs if (o := sequence_object(dataset, s)) is not None})
            named = f"an object ({', '.join(have)}) or a sequence" if have else "a sequence"
            raise UsageError("--objects", f"no {dataset} sequence for {sorted(missing)}; give {named} "
                             f"({', '.join(all_seqs)})")
    if not seqs:
        raise DataError(None, "sequences", f"no {dataset} sequences to run")
    return seqs


def _study_record(dataset, config, chash, ablation, manosim_dir, seqs, results, failed, wall_s, rdir,
                  out_dir) -> StudyRecord:
    ordered = [results[s] for s in seqs if s in results]
    rows = [study_row(RolloutRecord.from_dict(r, nested=True), os.path.relpath(rdir / f"{_stem(r['sequence'])}.json",
                                                                                out_dir))
            for r in ordered]
    return StudyRecord(
        dataset=dataset,
        hand={"model": config.hand, "shape": config.hand_variant, "manosim_dir": str(manosim_dir),
              "mjcf": "per rollout (`hand_mjcf`: the hand side of its recording)"},
        config=config.to_dict(), config_hash=chash, ablation=ablation, versions=package_versions(),
        sequences=list(seqs), counts=summarize(ordered, failed, wall_s), failed=dict(failed), rollouts=rows,
        inputs={k: v for r in ordered for k, v in (r.get("inputs") or {}).items()},
    )


def _plan_jobs(rdir: Path, all_seqs: list[str], seqs: list[str], subset: set[str], chash: str, job, ablation: bool,
               ablation_only: bool, resume: bool, keep_others: bool) -> tuple[list[str], dict, list]:
    """(the study's sequences, rollouts kept from disk ``{seq: doc}``, jobs to run).

    ``--ablation-only``: the study keeps every recording with a rollout of this config and
    reruns the ablation of ``subset``. Otherwise a sequence is kept from disk when resuming,
    or (``keep_others``, a merged ``--objects`` subset) when it is outside the subset; a kept
    one whose rollout is gone or of another config runs again.
    """
    results: dict[str, dict] = {}
    todo = []
    if ablation_only:
        seqs = [s for s in all_seqs if s in subset or (rdir / f"{_stem(s)}.json").is_file()]
        for s in seqs:
            if s in subset:
                todo.append(job(s, True))
            elif (doc := _done_rollout(rdir, s, chash, False)) is not None:
                results[s] = doc
        return [s for s in seqs if s in results or s in subset], results, todo
    for s in seqs:
        keep = resume or (keep_others and s not in subset)
        if keep and (doc := _done_rollout(rdir, s, chash, ablation)) is not None:
            results[s] = doc
        else:
            todo.append(job(s))
    return seqs, results, todo


def _prior_wall(prior: dict | None, dataset: str, chash: str, seqs: list[str]) -> float:
    """Wall time, s, of an interrupted run of this same study (carried over on resume), else 0."""
    if not prior or prior.get("dataset") != dataset or prior.get("config_hash") != chash \
            or prior.get("sequences") != seqs:
        return 0.0
    try:
        return float((prior.get("counts") or {}).get("wall_s") or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _execute(todo: list, done, workers: int, executor: str, address: str | None) -> None:
    """Run the jobs: in this process (``workers <= 0``), the process pool (:mod:`replay.jobs`)
    or Ray tasks (:mod:`replay.jobs_ray`)."""
    if executor == "ray":
        from replay.jobs_ray import run_jobs_ray

        run_jobs_ray(todo, _run_job_safe, done, address=address)
    elif workers <= 0:  # in this process: no crash isolation (debugging, benchmarks)
        for job in todo:
            done(job, *_run_job_safe(job))
    else:  # replay.jobs: a worker that dies costs its own recording only
        from replay.jobs import run_jobs

        run_jobs(todo, _run_job_safe, workers, done)


def run_study(
    dataset: str,
    out: str | Path,
    config: ReplayConfig,
    sequences: list[str] | None = None,
    objects: list[str] | None = None,
    workers: int = 1,
    ablation: bool = True,
    resume: bool = False,
    data_dir: str | Path | None = None,
    progress: bool = True,
    ablation_only: bool = False,
    executor: str = "pool",
    address: str | None = None,
    verbose: bool = False,
) -> dict:
    """Run the study and write ``out``, ``<out stem>.csv`` and ``<out stem>_rollouts/``
    (:mod:`replay.results`).

    Args:
        dataset: ``grab``, ``taco`` or ``hug-bench``.
        out: the study JSON path.
        config: settings (written into the study JSON).
        sequences: names to run (default: every sequence of the dataset).
        objects: keep only these sequences, named by sequence or by object
            (:func:`sequence_object`; GRAB only). Where a study of the same config is
            already at ``out``, the subset is merged into it (its other recordings kept).
        workers: worker processes (spawned; a worker that dies costs its recording only,
            :func:`replay.jobs.run_jobs`); 0 = run in this process (no crash isolation).
        ablation: also run the contact ablation.
        resume: skip sequences whose rollout JSON exists with the same config hash.
        data_dir: staged data folder (``fetch_data.py --dest``); falls back to the mirror.
        ablation_only: rerun only the contact ablation of the selected recordings into their
            existing rollout JSONs; the study keeps every other recording it holds.
        executor: ``pool`` (default, :mod:`replay.jobs`) or ``ray`` (:mod:`replay.jobs_ray`).
        address: Ray cluster address (``ray``; default: start a local Ray).
        verbose: let Warp/Newton print their own messages and warnings.

    Returns:
        The study dict. On Ctrl-C (KeyboardInterrupt) the study JSON holds every rollout
        finished so far and the exception propagates.

    Raises:
        DataError: unknown dataset, no sequences, unknown object names.
        UsageError: ``objects`` given where a study of another config is.
    """
    from replay.config import resolve_hand_variant
    from replay.data import list_sequences
    from replay.data.locate import dataset_dir
    from replay.hand_assets import hand_mjcf_path

    config = resolve_hand_variant(config.validate(), dataset)
    if config.device == "cuda":
        import warp as wp

        if not wp.is_cuda_available():
            raise UsageError("--device", "cuda requested but Warp finds no CUDA device; use --device cpu")
    out = Path(out)
    all_seqs = list_sequences(dataset, data_dir)
    seqs = _resolve_sequences(dataset, all_seqs, sequences, objects)
    chash = config_hash(config)
    prior = _prior_study(out)
    subset = set(seqs)
    if objects and not ablation_only:
        seqs = _subset_merge(out, prior, dataset, chash, seqs, all_seqs)
    out_dir = out.parent.resolve()
    rdir = out_dir / f"{out.stem}_rollouts"
    try:
        rdir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"--out {out}: cannot create the folder {e.filename or rdir} for the results "
                          f"({e.strerror or e}; is a parent a file, or not writable?)") from None
    manosim_dir = dataset_dir("manosim", data_dir)
    hand_mjcf_path(manosim_dir, config)  # fail fast if the hand is missing; each rollout names the MJCF of its side
    cfg_dict = config.to_dict()
    cfg_dict.pop("dt", None)

    def job(s: str, abl_only: bool = False) -> Job:
        return Job(dataset, s, None if data_dir is None else str(data_dir), cfg_dict, str(manosim_dir),
                   str(out_dir), str(rdir), ablation, quiet=not verbose, ablation_only=abl_only)

    if ablation_only and not ablation:
        raise UsageError("--ablation-only", "cannot be combined with --no-ablation")
    keep_others = bool(objects) and not ablation_only
    seqs, results, todo = _plan_jobs(rdir, all_seqs, seqs, subset, chash, job, ablation, ablation_only, resume,
                                     keep_others)
    failed: dict[str, str] = {}
    t0 = time.perf_counter()
    prior_wall = _prior_wall(prior, dataset, chash, seqs) if resume else 0.0

    def write() -> dict:
        rec = _study_record(dataset, config, chash, ablation, manosim_dir, seqs, results, failed,
                            prior_wall + time.perf_counter() - t0, rdir, out_dir)
        rec.counts["wall_s_this_run"] = time.perf_counter() - t0
        rec.counts["resumed"] = len(seqs) - len(todo)
        return write_study(out, rec)

    con = StudyConsole(dataset, total=len(seqs), done=len(seqs) - len(todo), enabled=progress, verbose=verbose)
    study = write()
    con.intro(ablation_only=ablation_only, todo=len(todo), total=len(seqs), rdir=rdir, chash=chash)

    def done(j: Job, status: str, value) -> None:
        nonlocal study
        if status == "ok":
            results[j.sequence] = value
        else:
            failed[j.sequence] = value
        con.result(j.sequence, status, value)
        study = write()

    try:
        _execute(todo, done, workers, executor, address)
    except KeyboardInterrupt:
        study = write()
        con.interrupted(out, len(results), len(seqs))
        raise
    finally:
        con.close()
    return study
