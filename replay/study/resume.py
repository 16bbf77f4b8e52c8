"""What a study already at ``--out`` holds, for ``--resume`` and ``--objects``: its rollouts
(kept when of this config, protocol and inputs), the recordings it could not replay, the time
an interrupted run spent, and a subset merged into it (:mod:`replay.study.runner` plans with them)."""

from __future__ import annotations

import json
from pathlib import Path

from replay.errors import UsageError
from replay.protocol.protocols.base import ResultKey, is_known, primary_protocol, protocol_named
from replay.results.convert import ResultsFormatError
from replay.results.files import read_rollout
from replay.results.records import RolloutRecord
from replay.study.job import Job
from replay.study.study_records import StudyRecords


def done_rollout(
    rdir: Path, job: Job, chash: str, need_ablation: bool, say=None, records: StudyRecords | None = None
) -> RolloutRecord | None:
    """The rollout record of ``job`` if it is of this config and protocol (and has its
    ablation when one is wanted, and its sampled verdict of these settings when ``job.samples``),
    else None (it runs again). A file that is there but cannot be read (truncated by a full disk or
    a crash, not JSON, another format) is said with ``say`` (``say(line)``) before it runs again. None
    too where the study's latest record of the job (``records``, :mod:`replay.study.study_records`) is a
    failure: a later run failed where an older rollout survives. A rollout with no record (its worker
    finished after the driver's last record, or a study older than records) is kept as any other."""
    if records is not None and records.failed_last(job.key):
        return None
    path = rdir / f"{job.stem}.json"
    try:
        doc = read_rollout(path)
    except ResultsFormatError as e:
        if say is not None and path.exists():
            say(f"resume: rerunning {job.key}: its rollout {path} cannot be read ({e.message})")
        return None
    proto, ran = protocol_named(job.protocol), doc.protocol or primary_protocol().name
    same = (
        doc.config_hash == chash
        and is_known(ran)
        and protocol_named(ran) is proto
        and proto.same_settings(doc, job.settings)
    )
    if not same or (need_ablation and doc.ablation is None):
        return None
    if job.samples and proto.sampled and not _same_sampling(doc, job):
        return None  # --samples: a rollout without it (or of other samples, conditions, corruptions) runs again
    return doc


def _same_sampling(doc: RolloutRecord, job: Job) -> bool:
    """The rollout's sampled verdict is the one ``job`` asks for (samples, seed, conditions, corruptions)."""
    s = doc.sampled
    pl, smp = s.p_lift or {}, s.p_lift_samples or {}
    n_ok = all(d.get("n") == job.samples for d in pl.values())
    return (
        list(pl) == list(job.conditions)
        and n_ok
        and smp.get("seed") == job.seed
        and sorted(s.p_lift_corrupted or {}) == sorted(job.corruptions)
    )


def prior_study(out: Path) -> dict | None:
    """The study JSON already at ``out`` (any format version: only its identity is read), or None."""
    try:
        doc = json.loads(out.read_text())
    except (OSError, json.JSONDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def subset_merge(
    out: Path, prior: dict | None, dataset: str, chash: str, seqs: list[str], all_seqs: list[str]
) -> list[str]:
    """The sequences of a ``--objects`` study written where a study already is: the earlier
    study's recordings plus this subset, in dataset order (a subset never clobbers a study).

    Raises:
        UsageError: the study there is of another dataset or config (its rollouts would be
            overwritten by other settings' results): give another ``--out``.
    """
    if prior is None or not prior.get("sequences"):
        return seqs
    if prior.get("dataset") != dataset or prior.get("config_hash") != chash:
        raise UsageError(
            "--objects",
            f"{out} holds a study of another dataset or config (hash "
            f"{prior.get('config_hash')}, this one {chash}); a subset would overwrite its "
            "rollouts: give another --out, or run the whole study without --objects",
        )
    keep = set(prior["sequences"]) | set(seqs)
    return [s for s in all_seqs if s in keep] + [s for s in seqs if s not in all_seqs]


def prior_failures(
    prior: dict | None, chash: str, seqs, records: StudyRecords | None = None
) -> dict[ResultKey, tuple[str, bool]]:
    """``{key: (reason, refused)}`` of the recordings the study at ``--out`` (of this config)
    could not replay, from its summary and its ``records`` (newer after a kill); ``refused``: bad
    input it named (not a crash); keys read back among the sequences ``seqs`` (:meth:`ResultKey.parse`)."""
    found = {}
    if prior and prior.get("config_hash") == chash and isinstance(prior.get("failed"), dict):
        refused = set((prior.get("counts") or {}).get("refused_keys") or [])
        found = {str(k): (str(v), k in refused) for k, v in prior["failed"].items()}
    if records is not None:
        found.update(records.failures(chash))
    seqs = set(seqs)
    return {ResultKey.parse(k, seqs): v for k, v in found.items()}


def prior_wall(prior: dict | None, dataset: str, chash: str, seqs: list[str], logged_s: float = 0.0) -> float:
    """Wall time, s, of an interrupted run of this same study (carried over on resume), else 0:
    its summary's, or ``logged_s`` (its last record's, :mod:`replay.study.study_records`: newer
    than a summary after a kill) where that is more."""
    if (
        not prior
        or prior.get("dataset") != dataset
        or prior.get("config_hash") != chash
        or prior.get("sequences") != seqs
    ):
        return 0.0
    try:
        return max(float((prior.get("counts") or {}).get("wall_s") or 0.0), float(logged_s))
    except (TypeError, ValueError):
        return float(logged_s)


def plan_ablation_only(st) -> tuple[list[str], dict, list, dict]:
    """``--ablation-only`` for the study setup ``st`` (:mod:`replay.study.runner`'s ``_Setup``): (the study's sequences, rollouts kept, the subset's ablation jobs, the study's
    failures kept as it has them: a refused recording stays refused, with its reason).

    Raises:
        UsageError: no study at ``st.out`` and no rollout of the asked recordings to attach an ablation to.
    """
    lift = primary_protocol().name
    if st.prior is None and not any((st.rdir / f"{ResultKey(s, lift).stem}.json").is_file() for s in st.subset):
        raise UsageError(
            "--ablation-only",
            f"no study at {st.out} to rerun the ablation of: run the study first "
            "(the same command without --ablation-only)",
        )
    results: dict[ResultKey, dict] = {}
    todo = []
    prior_failed = prior_failures(st.prior, st.chash, st.all_seqs, st.records)
    rerun = {st.job(s, lift).key for s in st.subset}  # every other failure is kept: the verdict pairs' too
    carried = {k: v for k, v in prior_failed.items() if k not in rerun}
    seqs = [
        s
        for s in st.all_seqs
        if s in st.subset or (st.rdir / f"{ResultKey(s, lift).stem}.json").is_file() or st.job(s, lift).key in carried
    ]
    for s in seqs:
        j = st.job(s, lift, s in st.subset)
        if s in st.subset:
            todo.append(j)
        elif (doc := done_rollout(st.rdir, j, st.chash, False)) is not None:
            results[j.key] = doc
    kept = [s for s in seqs if ResultKey(s, lift) in results or s in st.subset or st.job(s, lift).key in carried]
    return kept, results, todo, carried
