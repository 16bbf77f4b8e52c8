"""A study: one job per recording and protocol (:mod:`replay.study.job`), run in a process pool or on Ray,
resumed and merged; its folder's layout and ``--resume``'s rule: docs/results.md."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from replay.config import ReplayConfig
from replay.data import list_sequences
from replay.data.inputs import inputs_changed, pin_mismatch_lines
from replay.data.locate import data_relative, data_roots, dataset_dir, staged_data_dir
from replay.errors import OutputError, UsageError, did_you_mean
from replay.fileio import stop_on_storage_fault, write_or_stop
from replay.protocol.protocols.base import ResultKey, is_known, primary_protocol, protocol_named, protocol_names
from replay.protocol.protocols.recorded import Recorded
from replay.protocol.protocols.refine import Refine
from replay.results.files import write_study
from replay.results.records import RolloutRecord
from replay.results.study_settings import Sampling
from replay.sim.hand_assets import check_hand_assets, resolve_hand_variant
from replay.study import verdicts as vd
from replay.study.batch import run_batch
from replay.study.console import StudyConsole, quiet_libraries
from replay.study.cross_checks import add_cross_checks, study_judge
from replay.study.executor import Executor
from replay.study.executor import executor as study_executor
from replay.study.job import Job, config_hash, failed_recordings, job_config, run_job_safe
from replay.study.prepare import resolve_sequences
from replay.study.progress import sample_worlds
from replay.study.resume import (
    PriorStudy,
    done_rollout,
    older_form,
    plan_ablation_only,
    prior_failures,
    prior_study,
    prior_wall,
    subset_merge,
)
from replay.study.sampling_setup import (
    SamplingSetup,
    check_sampling,
    job_sampling,
    sampling_record,
    study_discrimination,
)
from replay.study.study_records import StudyRecords, summary_due
from replay.study.summary import Rollouts, study_csvs, study_record
from replay.study.verdicts import lead_protocol


def _plan_jobs(st: _Setup, protocols: list[str], say, run_protocols: list[str], new_protocols: frozenset):
    """(the study's sequences, rollouts kept from disk ``{key: doc}``, jobs to run, failures kept from the study
    at ``st.out`` ``{key: (reason, refused)}``); keys :class:`ResultKey`. What ``--resume``, an ``--objects``
    merge and ``--ablation-only`` keep and run: docs/results.md; ``say`` tells why a rollout reruns."""
    if st.ablation_only:
        return plan_ablation_only(st)
    if (st.resume or st.merge) and (why := older_form(st.prior, st.config, st.chash)) is not None:
        say(why)
    results: dict[ResultKey, RolloutRecord] = {}
    todo, carried = [], {}
    prior_failed = prior_failures(st.prior, st.chash, st.seqs, records=st.records) if st.merge else {}
    for proto, verdict in [(p, None) for p in protocols] + [(v.protocol, v) for v in vd.extras(st.verdicts)]:
        # an extra verdict pair runs (and is kept) as its own protocol, under its own config
        unit, chash = (proto, st.chash) if verdict is None else (verdict.name, st.verdict_cfgs[verdict.name][1])
        need_ablation = st.ablation and protocol_named(proto).ablation
        on_disk = partial(done_rollout, st.rdir, chash=chash, need_ablation=need_ablation, records=st.records)
        for s in st.seqs:
            j = st.job(s, proto, verdict=verdict)
            other = st.merge and s not in st.subset  # the merged study's own sequence, not the subset's
            if st.merge and unit not in run_protocols:  # the merged study's other protocol: kept as it is
                if (doc := on_disk(j)) is not None:
                    results[j.key] = doc
                continue
            if other and unit in new_protocols:
                continue
            keep = other or (st.resume and not (st.merged and s in st.subset))
            doc = on_disk(j, say=say) if keep else None
            if doc is not None:
                if (why := inputs_changed(doc.inputs, st.data_dir)) is None:
                    results[j.key] = doc
                    continue
                say(f"resume: rerunning {j.key}: {why} since its rollout")
            elif other and j.key in prior_failed:  # kept as the study has it
                carried[j.key] = prior_failed[j.key]
                continue
            todo.append(j)
    return st.seqs, results, todo, carried


def run_study(
    dataset: str,
    out: str | Path,
    config: ReplayConfig,
    *,
    sequences: list[str] | None = None,
    objects: list[str] | None = None,
    workers: int = 1,
    ablation: bool = True,
    resume: bool = False,
    data_dir: str | Path | None = None,
    progress: bool = True,
    ablation_only: bool = False,
    executor: Executor = Executor.POOL,
    address: str | None = None,
    verbose: bool = False,
    protocols: tuple[str, ...] | list[str] = ("lift",),
    recorded_max_s: float | None = None,
    refine: dict | None = None,
    samples: int = 0,
    seed: int = 0,
    conditions: str | None = None,
    corruptions: str | bool | None = None,
    verdicts: str | list[str] | None = None,
) -> dict:
    """Run the study and write ``out``, ``<out stem>.csv`` and ``<out stem>_rollouts/``; returns the study dict
    (on Ctrl-C the study JSON holds every finished rollout and KeyboardInterrupt propagates).

    Args:
        dataset: ``grab``, ``taco`` or ``hug-bench``.
        out: the study JSON path.
        config: settings (written into the study JSON).
        sequences: names to run (default: every sequence of the dataset).
        objects: keep only these sequences, by sequence or object (GRAB only); merged into a study of the same
            config already at ``out``.
        workers: worker processes (:func:`replay.study.pool.run_jobs`); 0 = in this process.
        ablation: also run the contact ablation.
        resume: skip sequences whose rollout JSON has the same config hash and unchanged inputs.
        data_dir: staged data folder (``fetch_data.py --dest``); falls back to the mirror.
        ablation_only: rerun only the contact ablation of the selected recordings.
        executor: where the jobs run (:class:`replay.study.executor.Executor`; ``workers`` 0: in this process);
            address: Ray cluster address (default: a local Ray).
        verbose: let Warp/Newton print their own messages.
        protocols: the registered protocols each recording is replayed under.
        recorded_max_s: recorded protocol: at most this many recorded seconds after the lift onset (default: all).
        refine: also a refine job per recording, its RefineSettings as a dict.
        samples, seed, conditions, corruptions: the sampled verdict; ``verdicts``: the (protocol, physics) pairs.

    Raises:
        DataError: unknown dataset, no sequences, unknown object names.
        UsageError: ``objects`` given where a study of another config is; an unknown protocol;
            ``--ablation-only`` with ``--no-ablation`` or not lift; a condition the engine cannot run; a bad pair.
    """
    protocols = _check_protocols(protocols, ablation_only)
    settings = {Recorded.name: {"max_s": recorded_max_s}}
    if refine is not None:
        settings[Refine.name], protocols = protocol_named(Refine.name).settings(refine), protocols + [Refine.name]
    config = _check_config(config, dataset, verbose)
    sampling = check_sampling(
        config, protocols, samples=samples, seed=seed, conditions=conditions, corruptions=corruptions
    )  # before any folder is made
    vd.parse_verdicts(verdicts, protocols, config.physics)  # a bad pair refused before any folder is made too
    st = _setup(
        dataset,
        Path(out),
        config,
        sequences=sequences,
        objects=objects,
        data_dir=data_dir,
        ablation=ablation,
        ablation_only=ablation_only,
        resume=resume,
        verbose=verbose,
        settings=settings,
        sampling=sampling,
    )
    st.verdicts, st.verdict_cfgs = vd.study_verdicts(
        None if ablation_only else verdicts,
        protocols,
        config,
        prior=st.prior if st.merge else None,
        chash=st.chash,
        dataset=dataset,
    )
    if ablation_only and not ablation:
        raise UsageError("--ablation-only", "cannot be combined with --no-ablation")
    return _StudyRun(st, protocols, progress).execute(workers, executor, address)


def _check_protocols(protocols, ablation_only: bool) -> list[str]:
    """The protocols, each once, in order. Raises UsageError: an unknown one; ``--ablation-only`` with a non-lift."""
    protocols = list(dict.fromkeys(protocols))
    bad = [p for p in protocols if not is_known(p)]
    if bad or not protocols:
        names = protocol_names()
        hints = "".join(did_you_mean(b, names) for b in bad)
        raise UsageError("--protocol", f"unknown protocol(s) {bad}; {hints}choose from {', '.join(names)}")
    if ablation_only and not all(protocol_named(p).primary for p in protocols):
        raise UsageError("--ablation-only", "reruns the lift protocol's ablation; drop --protocol")
    return protocols


def _check_config(config: ReplayConfig, dataset: str, verbose: bool = False) -> ReplayConfig:
    """The config validated, with the dataset's hand shape where it names none. Raises ConfigError: a value out of
    range; UsageError: ``--device cuda`` where Warp finds no CUDA device."""
    config = resolve_hand_variant(config.validate(), dataset)
    if config.device == "cuda":
        import warp as wp  # only for --device cuda: the study's process otherwise never loads Warp

        if not verbose:
            quiet_libraries()
        if not wp.is_cuda_available():
            raise UsageError("--device", "cuda requested but Warp finds no CUDA device; use --device cpu")
    return config


@dataclass
class _Setup:
    """What every job of one study shares: its sequences, config, where results go."""

    dataset: str
    out: Path
    config: ReplayConfig
    chash: str
    all_seqs: list[str]
    seqs: list[str]  # the study's (a merged --objects subset: the earlier study's too)
    subset: set[str]  # the sequences asked for
    prior: PriorStudy | None  # the study JSON already at out
    out_dir: Path
    rdir: Path
    manosim_dir: Path
    data_dir: str | Path | None
    ablation: bool
    ablation_only: bool
    resume: bool
    merge: bool  # an --objects subset merged into the study at out
    verbose: bool
    settings: dict  # {protocol: its own settings} (recorded max_s, refine's)
    cfg_dict: dict
    sampling: SamplingSetup | None  # the sampled verdict (replay.study.sampling_setup.check_sampling)
    records: StudyRecords | None = None  # the study's append-only records (replay.study.study_records)
    verdicts: list | None = None  # the VerdictPairs (replay.study.verdicts), None: not asked
    verdict_cfgs: dict = field(default_factory=dict)  # {extra pair: (config dict, config hash)}

    @property
    def data_roots(self) -> list[Path]:
        """The data folders a refusal's paths are said relative to."""
        return data_roots(self.data_dir)

    @property
    def merged(self) -> bool:
        """A subset merged into a larger study (one holding other sequences too)."""
        return self.merge and bool(set(self.seqs) - self.subset)

    def job(self, s: str, proto: str, abl_only: bool = False, verdict=None) -> Job:
        """The :class:`Job` of ``s`` under ``proto`` (``verdict``: an extra VerdictPair, under its own config)."""
        cfg = self.cfg_dict if verdict is None else self.verdict_cfgs[verdict.name][0]
        return Job(
            self.dataset,
            s,
            None if self.data_dir is None else str(self.data_dir),
            cfg,
            str(self.manosim_dir),
            str(self.out_dir),
            str(self.rdir),
            self.ablation,
            quiet=not self.verbose,
            ablation_only=abl_only,
            protocol=proto,
            settings=self.settings.get(proto),
            **(job_sampling(self.sampling, proto) if verdict is None else {}),
            physics=None if verdict is None else verdict.physics,
        )


def _setup(
    dataset: str, out: Path, config: ReplayConfig, *, sequences, objects, data_dir, ablation_only: bool, **flags
) -> _Setup:
    """The study's sequences, results folder (created) and hand folder; ``flags``: the rest of :class:`_Setup`.

    Raises:
        DataError: unknown dataset, no sequences, the hand MJCF missing.
        UsageError: unknown object names; a subset where a study of another config is.
        OutputError: the results folder cannot be created.
    """
    data_dir = staged_data_dir(data_dir)  # inputs recorded alike with --data data or without (newcomer check)
    all_seqs = list_sequences(dataset, data_dir)
    seqs = resolve_sequences(dataset, all_seqs, sequences, objects=objects)
    chash = config_hash(config)
    prior = prior_study(out)
    subset = set(seqs)
    merge = bool(objects) and not ablation_only
    if merge:
        seqs = subset_merge(out, prior, dataset, chash=chash, seqs=seqs, all_seqs=all_seqs)
    out_dir = out.parent.resolve()
    rdir = out_dir / f"{out.stem}_rollouts"
    try:
        rdir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(
            f"--out {out}: cannot create the folder {e.filename or rdir} for the results "
            f"({e.strerror or e}; is a parent a file, or not writable?)"
        ) from None
    manosim_dir = dataset_dir("manosim", data_dir)
    check_hand_assets(manosim_dir, config)  # fail fast if the hand is missing; each rollout names the MJCF of its side
    return _Setup(
        dataset=dataset,
        out=out,
        config=config,
        chash=chash,
        all_seqs=all_seqs,
        seqs=seqs,
        subset=subset,
        prior=prior,
        out_dir=out_dir,
        rdir=rdir,
        manosim_dir=manosim_dir,
        data_dir=data_dir,
        ablation_only=ablation_only,
        merge=merge,
        cfg_dict=job_config(config),
        **flags,
    )


class _StudyRun:
    """One run of a study: its planned jobs, their results and records, the study JSON, the console."""

    def __init__(self, st: _Setup, protocols: list[str], progress: bool):
        self.st, self.ablation_only = st, st.ablation_only
        run_protocols = protocols + [v.name for v in vd.extras(st.verdicts)]  # an extra pair plans as a protocol
        new_protocols, prior = frozenset(), st.prior
        if st.merge and prior is not None and prior.config_hash == st.chash:  # the merged study keeps its own
            had = list(prior.protocols or [primary_protocol().name])
            protocols = list(dict.fromkeys([*had, *protocols]))
            kept = vd.extras(vd.VerdictPair.read(prior.verdicts))
            new_protocols = frozenset(run_protocols) - set(had) - {v.name for v in kept}
        self.protocols = protocols
        fresh = not (st.resume or st.merge or st.ablation_only)
        st.records = StudyRecords(st.out, fresh, chash=st.chash, rdir=st.rdir)
        self.con = StudyConsole(st.dataset, total=0, done=0, enabled=progress, verbose=st.verbose)
        self.seqs, self.results, self.todo, carried = _plan_jobs(
            st, protocols, self.con.say, run_protocols, new_protocols
        )
        self.failed: dict[ResultKey, str] = {k: why for k, (why, _) in carried.items()}
        self.refused: set[ResultKey] = {k for k, (_, refused) in carried.items() if refused}
        self.said: set[str] = set()  # pin-mismatch warnings already said
        self.n_kept = len(self.results) + len(carried)
        self.n_jobs = self.n_kept + len(self.todo)
        order = {s: i for i, s in enumerate(self.seqs)}  # a recording's jobs together: recordings finish steadily
        self.todo.sort(key=lambda j: order.get(j.sequence, len(order)))
        running = {j.sequence for j in self.todo}
        self.con.start(
            [(j.sequence, sample_worlds(j)) for j in self.todo],
            done=len(set(self.seqs) - running) if not st.ablation_only else 0,
            lead=lead_protocol(protocols).name,
        )
        self.t0 = time.perf_counter()
        # an interrupted run's time carries over, and so does the study's under --ablation-only (the rerun
        # adds to it); a subset merged into a larger study starts its own
        self.prior_wall = (
            prior_wall(prior, st.dataset, st.chash, seqs=self.seqs, logged_s=st.records.wall_s())
            if (st.resume or st.ablation_only) and not st.merged
            else 0.0
        )
        self.carried = carried
        self.n_new, self.t_summary = 0, self.t0

    def write(self) -> dict:
        """Write the study JSON and CSV of the results so far; returns the study dict."""
        st = self.st
        this_run = time.perf_counter() - self.t0  # one instant for both figures (study_record takes time)
        ro = Rollouts(self.seqs, self.results, self.failed, self.prior_wall + this_run, st.rdir, st.out_dir)
        rec = study_record(
            st.dataset,
            st.config,
            st.chash,
            ablation=st.ablation,
            manosim_dir=st.manosim_dir,
            protocols=self.protocols,
            ro=ro,
        )
        if st.sampling:  # the sampled verdict's settings and the study's discrimination table
            rec.sampling = sampling_record(st.sampling, st.config)
            rec.discrimination = study_discrimination(self.results, self.seqs)
        elif self.ablation_only and st.prior:  # the rerun leaves every contact run as it was: so its sampled verdict
            rec.sampling, rec.discrimination = st.prior.sampling, st.prior.discrimination
        vd.record_verdicts(rec, st.verdicts, ro, prior=st.prior if self.ablation_only else None)
        add_cross_checks(rec)  # after the pairs: each row's verdict beside every other judgement of it
        rec.judge = study_judge(st.config, Sampling.from_dict(rec.sampling).condition_names())
        rec.counts["wall_s_this_run"] = this_run
        if self.ablation_only:  # what this run did: the console and the report say it (not "resumed")
            rec.counts["ablation_only_keys"] = [j.key.text for j in self.todo]
        else:
            rec.counts["resumed_wall_s"] = self.prior_wall
        rec.counts["resumed"] = self.n_kept
        rec.counts["refused"] = len({k.sequence for k in self.refused & set(self.failed)})  # recordings, not jobs
        rec.counts["refused_keys"] = [k.text for k in self.failed if k in self.refused]
        return write_study(st.out, rec, study_csvs(rec))

    def done(self, j: Job, status: str, value) -> None:
        """A job ended: keep, record and say it; remake the summary when due. Raises StorageError: out of storage."""
        if status == "storage":
            stop_on_storage_fault(value, self.write)
        if status == "ok":  # the rollout JSON as written (format 6)
            value = self.results[j.key] = RolloutRecord.from_dict(value, nested=True)
        else:
            value = data_relative(value, self.st.data_roots) if status == "refused" else value
            self.failed[j.key] = value
            if status == "refused":
                self.refused.add(j.key)
        st = self.st
        wall = self.prior_wall + time.perf_counter() - self.t0
        write_or_stop(lambda: st.records.append(j.key, status, value, wall_s=wall))
        self.con.result(j.key, status, value, worlds=sample_worlds(j))
        for line in pin_mismatch_lines(value.inputs or {}) if isinstance(value, RolloutRecord) else ():
            if line not in self.said:  # said once per file, however many protocols read it
                self.said.add(line)
                self.con.say(f"warning: {line}")
        self.n_new += 1
        if summary_due(self.n_new, time.perf_counter() - self.t_summary, self.n_jobs):
            self.summarize()

    def summarize(self) -> None:
        """Remake the summary (study JSON and CSV) now."""
        self.study = write_or_stop(self.write)
        self.n_new, self.t_summary = 0, time.perf_counter()

    def execute(self, workers: int, executor: Executor, address: str | None) -> dict:
        """Run the planned jobs through :func:`replay.study.batch.run_batch` (:func:`replay.study.executor.executor`);
        returns the study dict.

        Raises:
            KeyboardInterrupt: Ctrl-C, after the study JSON was written with every finished rollout.
        """
        st = self.st
        write_or_stop(lambda: st.records.seed(self.results, self.carried, wall_s=self.prior_wall))
        self.summarize()
        self.con.intro(
            ablation_only=self.ablation_only,
            todo=len(self.todo),
            total=self.n_jobs,
            rdir=self.st.rdir,
            chash=self.st.chash,
            failed=len(self.carried),
            recordings=len(self.seqs),
            failed_recordings=len(failed_recordings(self.carried)),
        )
        try:  # the one batch runner, with the study's executor; self.done says and writes each result
            run_batch(
                self.todo,
                run_job_safe,
                executor=study_executor(Executor(executor), workers, address=address, say=self.con.say),
                on_result=self.done,
                label="study",
                name=lambda j: j.key.text,
            )
            self.summarize()
        except KeyboardInterrupt:
            self.study = self.write()
            self.con.interrupted(self.st.out, len(self.results), self.n_jobs)
            raise
        finally:
            self.con.close()
        return self.study
