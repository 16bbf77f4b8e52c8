"""Many rollouts: one process per rollout pair, atomic per-rollout results, resume, summary.

Layout of a study written to ``out/study.json``::

    out/study.json                       summary (rewritten atomically after every rollout)
    out/study_rollouts/<sequence>.json   one per recording: contact run + ``ablation``
    out/study_rollouts/<sequence>.npz    per-frame poses of the contact run
    out/study_rollouts/<sequence>.ablation.npz
    out/study_rollouts/<sequence>.recorded.json / .npz   --protocol recorded (replay.tracking)

Saved-poses contract (the renderer reads it; keep it exact): the rollout JSON's
``"poses"`` (and ``"ablation"]["poses"]``) is a path relative to the study JSON's
folder of an ``.npz`` with ``time`` (F,) s at the control rate (30 fps),
``body_names`` (B,) str (``mano_body_0..15`` then ``object``), ``body_pos`` (F,B,3)
world m, ``body_quat`` (F,B,4) world xyzw, ``contact_count`` (F,) int hand-object
contacts, ``phase`` (F,) int (0 settle, 1 approach, 2 lift, 3 hold, 4 shake),
``contact_force`` (F,) N the hand-object normal forces' sum, ``friction_budget_kg`` (F,)
their ``sum(mu_i N_i) / g``.

A rollout JSON also carries ``object``, ``sequence``, ``dataset``, ``hand_mjcf``,
``object_visual_mesh``, ``support_height``, ``input_flags`` (repaired or corrected
input, :mod:`replay.input_checks`), ``outcome`` (lifted / dropped / unstable), every
metric of :func:`replay.rollout.run_rollout` and a ``config_hash``:
``--resume`` skips a sequence whose JSON exists with the same config hash and whose
input files (``inputs``: SHA-256 of every file the rollout read, hashed at run time and
compared with ``MANIFEST.json``) still hash the same.
"""

from __future__ import annotations

import dataclasses

import hashlib
import io
import json
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay import tracking
from replay.config import ReplayConfig
from replay.fileio import atomic_write_bytes, atomic_write_text
from replay.errors import DataError, OutputError, UsageError
from replay.inputs import input_hashes, inputs_changed

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


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def dumps(obj) -> str:
    """JSON text (NaN written as null)."""
    def clean(x):
        if isinstance(x, float) and not np.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(json.loads(json.dumps(obj, default=_json_default))), indent=1)


def save_poses(path: Path, poses: dict) -> None:
    """Write the poses ``.npz`` atomically (contract in the module doc)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **poses)
    atomic_write_bytes(path, buf.getvalue())


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


def prepare_recording(dataset: str, sequence: str, data_dir, manosim_dir, cfg: ReplayConfig,
                      protocol: str = "lift", recorded_max_s: float | None = None):
    """Load a recording, crop it to the replayed window and fill in the hand.

    The window starts ``approach_window_s`` before the lift onset and ends at the onset
    (``protocol="lift"``) or at the end of the manipulation
    (:func:`replay.tracking.manipulation_end`; ``"recorded"``), at most
    ``recorded_max_s`` recorded seconds after the onset when given.

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
    stop = g + 1
    if protocol == "recorded":
        from replay.tracking import manipulation_end

        stop = manipulation_end(rec) + 1
        if recorded_max_s is not None:
            stop = min(stop, int(np.searchsorted(rec.time, rec.time[g] + recorded_max_s)) + 1)
    rec = crop_recording(rec, start, min(rec.num_frames, stop + CROP_MARGIN_FRAMES))
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
    protocol: str = "lift"  # replay.rollout.PROTOCOLS
    recorded_max_s: float | None = None  # recorded protocol: at most this long after the lift onset

    @property
    def stem(self) -> str:
        """File stem of its results: ``<sequence>`` (lift), ``<sequence>.recorded``."""
        return result_stem(self.sequence, self.protocol)

    @property
    def key(self) -> str:
        """Its key in the study's results and ``failed``."""
        return result_key(self.sequence, self.protocol)


def result_stem(sequence: str, protocol: str = "lift") -> str:
    """Results file stem of a (sequence, protocol): lift keeps ``<sequence>`` (``/`` -> ``__``);
    another protocol adds ``.<protocol>`` so it never overwrites the lift results."""
    base = sequence.replace("/", "__")
    return base if protocol == "lift" else f"{base}.{protocol}"


def result_key(sequence: str, protocol: str = "lift") -> str:
    """Key of a (sequence, protocol) in the study's ``failed``: ``<sequence>`` or ``<sequence> [<protocol>]``."""
    return sequence if protocol == "lift" else f"{sequence} [{protocol}]"


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

    from replay.engine import Variant
    from replay.rollout import run_rollouts

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    if job.quiet:
        import warp as wp

        wp.config.quiet = True
    cfg = ReplayConfig.from_dict(job.config)
    t0 = time.perf_counter()
    rec, coords, mjcf, start = prepare_recording(job.dataset, job.sequence, job.data_dir, job.manosim_dir, cfg,
                                                 job.protocol, job.recorded_max_s)
    mjcf = str(mjcf)
    t_ik = time.perf_counter() - t0

    rdir = Path(job.rollouts_dir)
    out_dir = Path(job.out_dir)
    stem = job.stem
    if job.ablation_only:
        return _rerun_ablation(job, rec, coords, mjcf, cfg, rdir, out_dir, stem, t0)
    ablation = job.ablation and job.protocol == "lift"  # the ablation is a lift check
    variants = [Variant()] + ([Variant(ablation=True)] if ablation else [])
    # contact run and ablation share one scene and one batch (two worlds)
    results = run_rollouts(rec, coords, mjcf, cfg, variants, protocol=job.protocol)
    res = results[0]
    poses_path = rdir / f"{stem}.npz"
    save_poses(poses_path, res.poses)
    obj = rec.target_object.asset
    doc = {
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
        "intent": rec.meta.get("intent"),  # replay.input_checks.recording_intent
        "protocol": job.protocol,
        "recorded_max_s": job.recorded_max_s,
        **res.metrics,
        "poses": os.path.relpath(poses_path, out_dir),
    }
    if ablation:
        _attach_ablation(doc, results[1], cfg, rdir, out_dir, stem)
    else:
        doc["ablation"] = None
    paths = [rec.source, obj.visual_mesh, *obj.collision_meshes, Path(mjcf)]
    doc["inputs"] = input_hashes(paths, job.data_dir)
    doc["wall_s_total"] = time.perf_counter() - t0
    atomic_write_text(rdir / f"{stem}.json", dumps(doc))
    return json.loads(dumps(doc))


def _attach_ablation(doc: dict, ab, cfg: ReplayConfig, rdir: Path, out_dir: Path, stem: str) -> None:
    """Write the ablation's poses and put its metrics and verdicts into the rollout ``doc``."""
    ab_path = rdir / f"{stem}.ablation.npz"
    save_poses(ab_path, ab.poses)
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
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        raise DataError(path, None, "no rollout to attach the ablation to: run the study without "
                                    "--ablation-only first") from None
    if doc.get("config_hash") != config_hash(cfg):
        raise DataError(path, "config_hash", f"{doc.get('config_hash')} is not this study's config "
                                             f"({config_hash(cfg)}): rerun the whole recording instead")
    ab = run_rollouts(rec, coords, mjcf, cfg, [Variant(ablation=True)])[0]
    _attach_ablation(doc, ab, cfg, rdir, out_dir, stem)
    doc["ablation_rerun_s"] = time.perf_counter() - t0
    atomic_write_text(path, dumps(doc))
    return json.loads(dumps(doc))


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


def tracking_row(doc: dict, rdir: Path, out_dir: Path) -> dict:
    """The study JSON's row of one recorded-protocol rollout (:data:`TRACK_FIELDS` and its JSON path)."""
    row = {k: doc.get(k) for k in tracking.TRACK_FIELDS}
    row["json"] = os.path.relpath(rdir / f"{result_stem(doc['sequence'], 'recorded')}.json", out_dir)
    return row


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
    protocols: tuple[str, ...] | list[str] = ("lift",),
    recorded_max_s: float | None = None,
) -> dict:
    """Run the study and write ``out`` (and ``<out stem>_rollouts/``).

    Args:
        dataset: ``grab``, ``taco`` or ``hug-bench``.
        out: the study JSON path.
        config: settings (written into the study JSON).
        sequences: names to run (default: every sequence of the dataset).
        objects: keep only these sequences, named by sequence or by object
            (:func:`sequence_object`; GRAB only).
        workers: worker processes (spawned; a worker that dies costs its recording only,
            :func:`replay.jobs.run_jobs`); 0 = run in this process (no crash isolation).
        ablation: also run the contact ablation.
        resume: skip sequences whose rollout JSON exists with the same config hash and
            unchanged input files (:func:`inputs_changed`); rerun the others.
        data_dir: staged data folder (``fetch_data.py --dest``); falls back to the mirror.
        ablation_only: rerun only the contact ablation of the selected recordings into their
            existing rollout JSONs; the study keeps every other recording it holds.
        protocols: ``lift`` (default) and/or ``recorded`` (:mod:`replay.tracking`), each
            recording replayed under each; recorded results are ``<sequence>.recorded.json``
            / ``.npz`` (never overwriting the lift results), listed in the study's
            ``recorded_rollouts`` and ``counts["recorded"]``; their failures are keyed
            ``<sequence> [recorded]`` in ``failed``. The ablation runs with ``lift`` only.
        recorded_max_s: recorded protocol: replay at most this many recorded seconds after
            the lift onset (default: to the end of the manipulation).

    Returns:
        The study dict.

    Raises:
        DataError: unknown dataset, no sequences, unknown object names.
    """
    from tqdm import tqdm

    from replay.data import list_sequences
    from replay.data.locate import dataset_dir
    from replay.config import resolve_hand_variant
    from replay.hand_assets import hand_mjcf_path

    config = resolve_hand_variant(config.validate(), dataset)
    if config.device == "cuda":
        import warp as wp

        if not wp.is_cuda_available():
            raise UsageError("--device", "cuda requested but Warp finds no CUDA device; use --device cpu")
    out = Path(out)
    all_seqs = list_sequences(dataset, data_dir)
    seqs = list(sequences) if sequences else all_seqs
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
    out_dir = out.parent.resolve()
    rdir = out_dir / f"{out.stem}_rollouts"
    try:
        rdir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"--out {out}: cannot create the folder {e.filename or rdir} for the results "
                          f"({e.strerror or e}; is a parent a file, or not writable?)") from None
    manosim_dir = dataset_dir("manosim", data_dir)
    hand_mjcf_path(manosim_dir, config)  # fail fast if the hand is missing; each rollout names the MJCF of its side
    chash = config_hash(config)
    cfg_dict = config.to_dict()
    cfg_dict.pop("dt", None)

    results: dict[str, dict] = {}
    failed: dict[str, str] = {}
    todo = []
    if ablation_only:
        if not ablation:
            raise UsageError("--ablation-only", "cannot be combined with --no-ablation")
        rerun = set(seqs)
        # the study keeps what it holds: every recording with a rollout of this config
        seqs = [s for s in all_seqs if s in rerun or (rdir / f"{s.replace('/', '__')}.json").is_file()]
        for s in seqs:
            p = rdir / f"{s.replace('/', '__')}.json"
            if s in rerun:
                todo.append(Job(dataset, s, None if data_dir is None else str(data_dir), cfg_dict, str(manosim_dir),
                                str(out_dir), str(rdir), True, quiet=not progress, ablation_only=True))
                continue
            try:
                doc = json.loads(p.read_text())
            except (OSError, json.JSONDecodeError):
                continue
            if doc.get("config_hash") == chash:
                results[s] = doc
        seqs = [s for s in seqs if s in results or s in rerun]
    protocols = list(dict.fromkeys(protocols))
    from replay.rollout import PROTOCOLS

    bad = [p for p in protocols if p not in PROTOCOLS]
    if bad or not protocols:
        raise UsageError("--protocol", f"unknown protocol(s) {bad}; choose from {', '.join(PROTOCOLS)}")
    if ablation_only and protocols != ["lift"]:
        raise UsageError("--ablation-only", "reruns the lift protocol's ablation; drop --protocol recorded")
    for s, proto in ([] if ablation_only else [(s, p) for p in protocols for s in seqs]):
        job = Job(dataset, s, None if data_dir is None else str(data_dir), cfg_dict, str(manosim_dir),
                  str(out_dir), str(rdir), ablation, quiet=not progress, protocol=proto,
                  recorded_max_s=recorded_max_s if proto == "recorded" else None)
        p = rdir / f"{job.stem}.json"
        if resume and p.is_file():
            try:
                doc = json.loads(p.read_text())
                same = (doc.get("config_hash") == chash and doc.get("protocol", "lift") == proto
                        and doc.get("recorded_max_s") == job.recorded_max_s)
                if same and (doc.get("ablation") is not None or not ablation or proto != "lift"):
                    why = inputs_changed(doc, data_dir)
                    if why is None:
                        results[job.key] = doc
                        continue
                    if progress:
                        tqdm.write(f"resume: rerunning {job.key}: {why} since its rollout")
            except (OSError, json.JSONDecodeError):
                pass
        todo.append(job)

    t0 = time.perf_counter()
    prior_wall = 0.0
    if resume and out.is_file():
        try:
            prior = json.loads(out.read_text())
            # carry the wall time over only from an interrupted run of this same study
            if (prior.get("dataset") == dataset and prior.get("config_hash") == chash
                    and prior.get("sequences") == seqs):
                prior_wall = float(prior.get("counts", {}).get("wall_s") or 0.0)
        except (OSError, json.JSONDecodeError, ValueError):
            prior_wall = 0.0

    def write():
        ordered = [results[s] for s in seqs if s in results]
        tracked = [results[k] for s in seqs if (k := result_key(s, "recorded")) in results]
        study = {
            "dataset": dataset,
            "hand": {"model": config.hand, "shape": config.hand_variant, "manosim_dir": str(manosim_dir),
                     "mjcf": "per rollout (`hand_mjcf`: the hand side of its recording)"},
            "config": config.to_dict(),
            "config_hash": chash,
            "ablation": ablation,
            "versions": package_versions(),
            "sequences": seqs,
            "protocols": protocols,
            "counts": summarize(ordered, failed, prior_wall + time.perf_counter() - t0)
            | ({"recorded": tracking.summarize(tracked)} if "recorded" in protocols else {}),
            "failed": failed,
            "rollouts": [
                {k: r.get(k) for k in ("sequence", "object", "outcome", "stable", "lifted", "rise", "final_height",
                                       "contacts_force_at_lift", "wrist_err_median_mm", "wrist_err_max_mm",
                                       "max_object_step_mm", "slip_mm", "slip_deg", "shake_held", "shake_slip_mm",
                                       "ablation_clean", "ablation_no_rise", "wall_s_total",
                                       "rtf", "friction_budget_peak_kg", "creep_mm_s", "object_mass",
                                       "input_flags")}
                | {"diagnosis": (r.get("diagnosis") or {}).get("class"),
                   "diagnosis_figure": (r.get("diagnosis") or {}).get("figure")}
                | {"json": os.path.relpath(rdir / f"{r['sequence'].replace('/', '__')}.json", out_dir),
                   "ablation_max_disp_mm": (r.get("ablation") or {}).get("max_object_disp_mm"),
                   "ablation_lifted": (r.get("ablation") or {}).get("lifted")}
                for r in ordered
            ],
            "recorded_rollouts": [tracking_row(r, rdir, out_dir) for r in tracked],
            "inputs": {k: v for r in ordered + tracked for k, v in (r.get("inputs") or {}).items()},
        }
        atomic_write_text(out, dumps(study))
        return study

    said: set[str] = set()

    def say_import_warnings(doc: dict) -> None:
        # the hand's import warnings (recorded in every rollout JSON), once per study
        for w in doc.get("import_warnings") or []:
            if w not in said:
                said.add(w)
                tqdm.write(f"note (hand import, every rollout): {w}")

    study = write()
    if progress and ablation_only:
        tqdm.write(f"ablation only: rerunning the contact ablation of {len(todo)} recording(s); the study keeps "
                   f"the other {len(seqs) - len(todo)} as they are")
    elif progress and len(todo) < len(seqs):
        tqdm.write(f"resume: {len(seqs) - len(todo)} of {len(seqs)} rollouts already in {rdir} with this config "
                   f"(hash {chash[:12]}); running {len(todo)}")
    bar = tqdm(total=len(seqs), initial=len(seqs) - len(todo), desc=f"study {dataset}", disable=not progress)
    def done(job: Job, status: str, value) -> None:
        nonlocal study
        if status == "ok":
            results[job.key] = value
            say_import_warnings(value)
        else:
            failed[job.key] = value
        bar.update(1)
        study = write()

    if workers <= 0:  # in this process: no crash isolation (debugging, benchmarks)
        for job in todo:
            done(job, *_run_job_safe(job))
    else:  # replay.jobs: a worker that dies costs its own recording only
        from replay.jobs import run_jobs

        run_jobs(todo, _run_job_safe, workers, done)
    bar.close()
    return study
