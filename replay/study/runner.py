"""Many rollouts: one process (or Ray task) per recording and protocol, atomic per-rollout
results, resume, subsets merged, summary.

Layout of a study written to ``out/study.json`` (records, writer and reader:
:mod:`replay.results`; every field with unit and frame: ``docs/results.md``)::

    out/study.json                       summary (rewritten atomically after every rollout)
    out/study.csv                        its rows, one per recording
    out/study_rollouts/<sequence>.json   one per recording: contact run + ``ablation``
    out/study_rollouts/<sequence>.npz    per-frame poses of the contact run
    out/study_rollouts/<sequence>.ablation.npz
    out/study_rollouts/<sequence>.recorded.json / .npz   --protocol recorded (replay.protocol.tracking)

``--resume`` skips a recording whose rollout JSON exists with this format version, the same
``config_hash`` and protocol, and input files that still hash as they did when it ran
(:func:`replay.study.inputs.inputs_changed`); ``--objects`` where a study of the same config is
merges into it. The job itself (what a worker runs) is :mod:`replay.study.job`.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from replay.protocol import tracking
from replay.config import ReplayConfig, resolve_hand_variant
from replay.study.console import StudyConsole
from replay.data import list_sequences
from replay.data.locate import dataset_dir
from replay.protocol.diagnosis import CLASSES as DIAGNOSIS_CLASSES
from replay.errors import DataError, OutputError, UsageError
from replay.sim.hand_assets import hand_mjcf_path
from replay.study.inputs import inputs_changed
from replay.study.pool import run_jobs
from replay.protocol.plan import PROTOCOLS
from replay.study.prepare import sequence_object
from replay.results import (
    ResultsFormatError,
    RolloutRecord,
    StudyRecord,
    read_rollout,
    study_row,
    write_study,
)
from replay.study.job import Job, run_job_safe, config_hash, result_key, result_stem
from replay.study.refine_job import REFINE, refine_part, refine_settings


def package_versions() -> dict:
    """Versions of the packages a result depends on."""
    out = {"python": platform.python_version()}
    for p in ("newton", "mujoco", "mujoco-warp", "warp-lang", "numpy", "scipy", "trimesh"):
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = None
    return out


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
                      for c in DIAGNOSIS_CLASSES},
        "failed_inputs": len(failed),
        "median_contacts_force_at_lift": float(np.median(fl)) if fl else None,
        "median_wrist_err_mm": float(np.median(we)) if we else None,
        "wall_s": wall_s,
        "mean_rollout_pair_s": float(np.mean(rt)) if rt else None,
        "median_rtf": float(np.median(rtf)) if rtf else None,
    }


def tracking_row(doc: dict, rdir: Path, out_dir: Path) -> dict:
    """The study JSON's row of one recorded-protocol rollout (:data:`replay.protocol.tracking.TRACK_FIELDS`
    and its JSON path)."""
    row = {k: doc.get(k) for k in tracking.TRACK_FIELDS}
    row["json"] = os.path.relpath(rdir / f"{result_stem(doc['sequence'], 'recorded')}.json", out_dir)
    return row


def _done_rollout(rdir: Path, job: Job, chash: str, need_ablation: bool) -> dict | None:
    """The rollout JSON of ``job`` if it is of this format, config and protocol (and has its
    ablation when one is wanted), else None (it runs again)."""
    try:
        doc = read_rollout(rdir / f"{job.stem}.json").to_dict()
    except ResultsFormatError:
        return None
    kept = ((doc.get("refine_correction") or {}).get("settings") or {}).items()  # --refine: the search's settings
    same = (doc.get("config_hash") == chash and (doc.get("protocol") or "lift") == job.protocol
            and doc.get("recorded_max_s") == job.recorded_max_s and (job.refine is None or kept >= job.refine.items()))
    if not same or (need_ablation and doc.get("ablation") is None):
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


def _study_record(dataset, config, chash, ablation, manosim_dir, seqs, protocols, results, failed, wall_s, rdir,
                  out_dir) -> StudyRecord:
    ordered = [results[s] for s in seqs if s in results]
    tracked = [results[k] for s in seqs if (k := result_key(s, "recorded")) in results]
    rows = [study_row(RolloutRecord.from_dict(r, nested=True), os.path.relpath(rdir / f"{result_stem(r['sequence'])}.json",
                                                                                out_dir))
            for r in ordered]
    counts = summarize(ordered, failed, wall_s)
    if "recorded" in protocols:
        counts["recorded"] = tracking.summarize(tracked)
    refined = refine_part(results, seqs, rdir, out_dir, counts, result_key, result_stem) if REFINE in protocols else []
    return StudyRecord(
        dataset=dataset,
        hand={"model": config.hand, "shape": config.hand_variant, "manosim_dir": str(manosim_dir),
              "mjcf": "per rollout (`hand_mjcf`: the hand side of its recording)"},
        config=config.to_dict(), config_hash=chash, ablation=ablation, versions=package_versions(),
        sequences=list(seqs), counts=counts, failed=dict(failed), rollouts=rows,
        inputs={k: v for r in ordered + tracked for k, v in (r.get("inputs") or {}).items()},
        protocols=list(protocols), recorded_rollouts=[tracking_row(r, rdir, out_dir) for r in tracked],
        refine_rollouts=refined,
    )


def _plan_jobs(rdir: Path, all_seqs: list[str], seqs: list[str], subset: set[str], chash: str, job, ablation: bool,
               ablation_only: bool, resume: bool, keep_others: bool, protocols: list[str], data_dir,
               say, run_protocols: list[str] | None = None,
               subset_only: frozenset = frozenset()) -> tuple[list[str], dict, list]:
    """(the study's sequences, rollouts kept from disk ``{key: doc}``, jobs to run).

    ``--ablation-only``: the study keeps every recording with a rollout of this config and
    reruns the ablation of ``subset``. Otherwise a (sequence, protocol) is kept from disk when
    resuming, unless its rollout is gone, of another config or protocol, or an input file it
    read has changed since (:func:`replay.study.inputs.inputs_changed`; ``say`` tells which). In a
    merged ``--objects`` subset (``keep_others``) the other sequences are kept (run again only
    when their rollout is gone or stale), and a protocol of the study not in ``run_protocols``
    runs nowhere: its rollouts are kept as they are on disk; a protocol new to the study
    (``subset_only``) runs for the subset only.
    """
    run_protocols = protocols if run_protocols is None else run_protocols
    results: dict[str, dict] = {}
    todo = []
    if ablation_only:
        seqs = [s for s in all_seqs if s in subset or (rdir / f"{result_stem(s)}.json").is_file()]
        for s in seqs:
            if s in subset:
                todo.append(job(s, "lift", True))
            elif (doc := _done_rollout(rdir, job(s, "lift"), chash, False)) is not None:
                results[s] = doc
        return [s for s in seqs if s in results or s in subset], results, todo
    for proto in protocols:
        for s in seqs:
            j = job(s, proto)
            if keep_others and proto not in run_protocols:  # the merged study's other protocol: kept as it is
                if (doc := _done_rollout(rdir, j, chash, ablation and proto == "lift")) is not None:
                    results[j.key] = doc
                continue
            if keep_others and s not in subset and proto in subset_only:
                continue
            keep = resume or (keep_others and s not in subset)
            if keep and (doc := _done_rollout(rdir, j, chash, ablation and proto == "lift")) is not None:
                why = inputs_changed(doc, data_dir)
                if why is None:
                    results[j.key] = doc
                    continue
                say(f"resume: rerunning {j.key}: {why} since its rollout")
            todo.append(j)
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
    """Run the jobs: in this process (``workers <= 0``), the process pool (:mod:`replay.study.pool`)
    or Ray tasks (:mod:`replay.study.ray_pool`)."""
    if executor == "ray":  # imported only when asked for: Ray takes seconds to import
        from replay.study.ray_pool import run_jobs_ray

        run_jobs_ray(todo, run_job_safe, done, address=address)
    elif workers <= 0:  # in this process: no crash isolation (debugging, benchmarks)
        for job in todo:
            done(job, *run_job_safe(job))
    else:  # replay.study.pool: a worker that dies costs its own recording only
        run_jobs(todo, run_job_safe, workers, done)


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
    protocols: tuple[str, ...] | list[str] = ("lift",),
    recorded_max_s: float | None = None,
    refine: dict | None = None,
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
            :func:`replay.study.pool.run_jobs`); 0 = run in this process (no crash isolation).
        ablation: also run the contact ablation.
        resume: skip sequences whose rollout JSON exists with the same config hash and
            unchanged input files (:func:`replay.study.inputs.inputs_changed`); rerun the others.
        data_dir: staged data folder (``fetch_data.py --dest``); falls back to the mirror.
        ablation_only: rerun only the contact ablation of the selected recordings into their
            existing rollout JSONs; the study keeps every other recording it holds.
        executor: ``pool`` (default, :mod:`replay.study.pool`) or ``ray`` (:mod:`replay.study.ray_pool`).
        address: Ray cluster address (``ray``; default: start a local Ray).
        verbose: let Warp/Newton print their own messages and warnings.
        protocols: ``lift`` (default) and/or ``recorded`` (:mod:`replay.protocol.tracking`), each
            recording replayed under each; recorded results are ``<sequence>.recorded.json``
            / ``.npz`` (never overwriting the lift results), listed in the study's
            ``recorded_rollouts`` and ``counts["recorded"]``; their failures are keyed
            ``<sequence> [recorded]`` in ``failed``. The ablation runs with ``lift`` only.
        recorded_max_s: recorded protocol: replay at most this many recorded seconds after
            the lift onset (default: to the end of the manipulation).
        refine: also a refine job per recording, RefineSettings as a dict ({}: defaults; replay.study.refine_job).

    Returns:
        The study dict. On Ctrl-C (KeyboardInterrupt) the study JSON holds every rollout
        finished so far and the exception propagates.

    Raises:
        DataError: unknown dataset, no sequences, unknown object names.
        UsageError: ``objects`` given where a study of another config is; an unknown
            protocol; ``--ablation-only`` with ``--no-ablation`` or a protocol other than lift.
    """
    protocols = list(dict.fromkeys(protocols))
    bad = [p for p in protocols if p not in PROTOCOLS]
    if bad or not protocols:
        raise UsageError("--protocol", f"unknown protocol(s) {bad}; choose from {', '.join(PROTOCOLS)}")
    if ablation_only and protocols != ["lift"]:
        raise UsageError("--ablation-only", "reruns the lift protocol's ablation; drop --protocol recorded")
    refine, protocols = (refine_settings(refine), protocols + [REFINE]) if refine is not None else (None, protocols)
    config = resolve_hand_variant(config.validate(), dataset)
    if config.device == "cuda":
        import warp as wp  # only for --device cuda: the study's process otherwise never loads Warp

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

    def job(s: str, proto: str, abl_only: bool = False) -> Job:
        return Job(dataset, s, None if data_dir is None else str(data_dir), cfg_dict, str(manosim_dir),
                   str(out_dir), str(rdir), ablation, quiet=not verbose, ablation_only=abl_only, protocol=proto,
                   recorded_max_s=recorded_max_s if proto == "recorded" else None,
                   refine=refine if proto == REFINE else None)

    if ablation_only and not ablation:
        raise UsageError("--ablation-only", "cannot be combined with --no-ablation")
    keep_others = bool(objects) and not ablation_only
    run_protocols, new_protocols = protocols, frozenset()
    if keep_others and prior is not None and prior.get("config_hash") == chash:  # the merged study keeps its own
        had = list(prior.get("protocols") or ["lift"])
        protocols = list(dict.fromkeys([*had, *protocols]))
        new_protocols = frozenset(run_protocols) - set(had)
    con = StudyConsole(dataset, total=0, done=0, enabled=progress, verbose=verbose)
    seqs, results, todo = _plan_jobs(rdir, all_seqs, seqs, subset, chash, job, ablation, ablation_only, resume,
                                     keep_others, protocols, data_dir, con.say, run_protocols, new_protocols)
    n_jobs = len(results) + len(todo)
    con.start(total=n_jobs, done=n_jobs - len(todo))
    failed: dict[str, str] = {}
    t0 = time.perf_counter()
    prior_wall = _prior_wall(prior, dataset, chash, seqs) if resume else 0.0

    def write() -> dict:
        rec = _study_record(dataset, config, chash, ablation, manosim_dir, seqs, protocols, results, failed,
                            prior_wall + time.perf_counter() - t0, rdir, out_dir)
        rec.counts["wall_s_this_run"] = time.perf_counter() - t0
        rec.counts["resumed"] = n_jobs - len(todo)
        return write_study(out, rec)

    study = write()
    con.intro(ablation_only=ablation_only, todo=len(todo), total=n_jobs, rdir=rdir, chash=chash)

    def done(j: Job, status: str, value) -> None:
        nonlocal study
        if status == "ok":
            results[j.key] = value
        else:
            failed[j.key] = value
        con.result(j.key, status, value)
        study = write()

    try:
        _execute(todo, done, workers, executor, address)
    except KeyboardInterrupt:
        study = write()
        con.interrupted(out, len(results), n_jobs)
        raise
    finally:
        con.close()
    return study
