"""What a study already at ``--out`` holds, for ``--resume``, ``--objects`` and ``--ablation-only`` (the rules:
docs/results.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from replay.config import ReplayConfig
from replay.errors import ReplayError, UsageError
from replay.protocol.protocols.base import ResultKey, is_known, primary_protocol, protocol_named
from replay.results.convert import ResultsFormatError
from replay.results.files import read_rollout
from replay.results.json_record import JsonRecord
from replay.results.records import FORMAT_VERSION, RolloutRecord
from replay.results.study_counts import Counts
from replay.study.job import Job, config_hash
from replay.study.study_records import StudyRecords


@dataclass(frozen=True)
class PriorStudy(JsonRecord):
    """What is read of the study JSON already at ``--out`` (any format version)."""

    format_version: object = None
    dataset: str | None = None
    config_hash: str | None = None
    config: object = None
    sequences: list | None = None
    protocols: list | None = None
    failed: object = None
    counts: dict | None = None
    verdicts: list | None = None
    verdict_rollouts: dict | None = None
    sampling: dict | None = None
    discrimination: list | None = None


def done_rollout(
    rdir: Path, job: Job, chash: str, *, need_ablation: bool, say=None, records: StudyRecords | None = None
) -> RolloutRecord | None:
    """The rollout record of ``job`` if it is of this config, protocol and settings (with its ablation and sampled
    verdict where wanted) and its latest record in ``records`` is no failure; else None (it runs again). An
    unreadable file is said with ``say(line)``."""
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
        return None
    return doc


def _same_sampling(doc: RolloutRecord, job: Job) -> bool:
    """The rollout's sampled verdict has ``job``'s samples, seed, conditions and corruptions."""
    s = doc.sampled
    pl = s.p_lift or {}
    n_ok = all(e.n == job.samples for e in _Drawn.by_key(pl).values())
    return (
        list(pl) == list(job.conditions)
        and n_ok
        and _Drawn.from_dict(s.p_lift_samples).seed == job.seed
        and sorted(s.p_lift_corrupted or {}) == sorted(job.corruptions)
    )


@dataclass(frozen=True)
class _Drawn(JsonRecord):
    """A p_lift entry's sample count ``n``, or the samples' ``seed``."""

    n: int | None = None
    seed: int | None = None


def older_form(prior: PriorStudy | None, config, chash: str) -> str | None:
    """One line where ``prior`` ran this very config in an older results format (another hash for the same config):
    why its rollouts run again; else None."""
    if not prior or prior.config_hash in (None, chash) or not isinstance(prior.config, dict):
        return None
    try:
        if config_hash(ReplayConfig.from_dict(prior.config)) != chash:
            return None
    except ReplayError:
        return None
    return (
        f"resume: the study at --out ran this config in results format {prior.format_version} (config hash "
        f"{prior.config_hash}); this grasp-replay writes its config in format {FORMAT_VERSION} (hash {chash}), so "
        "its rollouts run again (the same physics and protocol: the same results)"
    )


def prior_study(out: Path) -> PriorStudy | None:
    """The study JSON already at ``out``; None: none, unreadable, or an empty object."""
    try:
        doc = json.loads(out.read_text())
    except (OSError, json.JSONDecodeError, ValueError):
        return None
    return PriorStudy.from_dict(doc) if isinstance(doc, dict) and doc else None


def subset_merge(
    out: Path, prior: PriorStudy | None, dataset: str, *, chash: str, seqs: list[str], all_seqs: list[str]
) -> list[str]:
    """The sequences of a ``--objects`` study written where a study already is: the earlier study's plus this subset, in
    dataset order. Raises UsageError: the study there is of another dataset or config."""
    if prior is None or not prior.sequences:
        return seqs
    if prior.dataset != dataset or prior.config_hash != chash:
        raise UsageError(
            "--objects",
            f"{out} holds a study of another dataset or config (hash "
            f"{prior.config_hash}, this one {chash}); a subset would overwrite its "
            "rollouts: give another --out, or run the whole study without --objects",
        )
    keep = set(prior.sequences) | set(seqs)
    return [s for s in all_seqs if s in keep] + [s for s in seqs if s not in all_seqs]


def prior_failures(
    prior: PriorStudy | None, chash: str, seqs, *, records: StudyRecords | None = None
) -> dict[ResultKey, tuple[str, bool]]:
    """``{key: (reason, refused)}`` of the jobs the study at ``--out`` (of this config) could not replay, from its
    summary and ``records`` (newer after a kill); ``refused``: bad input, not a crash; keys parsed among ``seqs``."""
    found = {}
    if prior and prior.config_hash == chash and isinstance(prior.failed, dict):
        refused = set(Counts.from_dict(prior.counts).refused_keys or [])
        found = {str(k): (str(v), k in refused) for k, v in prior.failed.items()}
    if records is not None:
        found.update(records.failures())
    seqs = set(seqs)
    return {ResultKey.parse(k, seqs): v for k, v in found.items()}


def prior_wall(prior: PriorStudy | None, dataset: str, chash: str, *, seqs: list[str], logged_s: float = 0.0) -> float:
    """Wall time, s, of an earlier run of this same study (its summary's or its last record's ``logged_s``,
    the larger), else 0."""
    if not prior or prior.dataset != dataset or prior.config_hash != chash or prior.sequences != seqs:
        return 0.0
    try:
        return max(float(Counts.from_dict(prior.counts).wall_s or 0.0), float(logged_s))
    except (TypeError, ValueError):
        return float(logged_s)


def plan_ablation_only(st) -> tuple[list[str], dict, list, dict]:
    """``--ablation-only`` for the runner's setup ``st``: (the study's sequences, rollouts kept, the subset's ablation
    jobs, failures kept). Raises UsageError: no study at ``st.out`` and no rollout of the asked recordings to attach an
    ablation to."""
    lift = primary_protocol().name
    key = partial(ResultKey, protocol=lift)
    if st.prior is None and not any((st.rdir / f"{key(s).stem}.json").is_file() for s in st.subset):
        raise UsageError(
            "--ablation-only",
            f"no study at {st.out} to rerun the ablation of: run the study first "
            "(the same command without --ablation-only)",
        )
    prior_failed = prior_failures(st.prior, st.chash, st.all_seqs, records=st.records)
    rerun = {key(s) for s in st.subset}  # every other failure is kept: the verdict pairs' too
    carried = {k: v for k, v in prior_failed.items() if k not in rerun}
    seqs = [
        s for s in st.all_seqs if s in st.subset or (st.rdir / f"{key(s).stem}.json").is_file() or key(s) in carried
    ]
    todo = [st.job(s, lift, abl_only=True) for s in seqs if s in st.subset]
    results = {
        key(s): doc
        for s in seqs
        if s not in st.subset
        and (doc := done_rollout(st.rdir, st.job(s, lift), st.chash, need_ablation=False)) is not None
    }
    kept = [s for s in seqs if key(s) in results or s in st.subset or key(s) in carried]
    return kept, results, todo, carried
