"""The sampled verdict's rollouts of one recording, in the study's worker: per condition one batch (samples and world
corruptions), and per scene corruption a batch of its own scene."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from replay.config import ReplayConfig
from replay.protocol.p_lift_stats import p_lift_record
from replay.protocol.protocols.base import protocol_named
from replay.sim import physics
from replay.study.calibration import variables_for
from replay.study.corruptions import SceneCorruption, WorldCorruption, corruption_named
from replay.study.prepare import prepare_recording
from replay.study.sampler import directions, draw_samples, driver_keys, sample_variant
from replay.study.uncertainty import data_sigmas, object_ranges
from replay.study.verdict_conditions import condition_config


def run_samples(job, prepared: tuple, cfg: ReplayConfig) -> dict:
    """``{p_lift, p_lift_corrupted, p_lift_samples}`` of ``job``'s recording (docs/results.md); ``prepared``:
    ``(recording, coords (T, 67), hand MJCF)`` of the study's own hand; ``cfg``: hand shape resolved. Raises DataError:
    a condition's config or recording cannot be replayed."""
    rec0 = prepared[0]
    sig = data_sigmas(rec0)
    run_cfg = protocol_named(job.protocol).config(cfg)
    ranges = object_ranges(rec0, run_cfg)
    variables = variables_for(run_cfg)
    samples = draw_samples(job.seed, job.sequence, job.samples, sigmas=sig, variables=variables, ranges=ranges)
    keys = driver_keys(samples, variables)
    dirs = directions(job.seed, job.sequence, job.samples)
    corr = [corruption_named(c) for c in job.corruptions]
    var_corr = [c for c in corr if isinstance(c, WorldCorruption)]
    scene_corr = [c for c in corr if isinstance(c, SceneCorruption)]
    p_lift, corrupted, lifted_all, diag_all, walls = {}, {c: {} for c in job.corruptions}, {}, {}, {}
    tmp = Path(tempfile.mkdtemp(prefix="replay_scaled_"))
    try:
        for cond in job.conditions:
            t0 = time.perf_counter()
            c = condition_config(cfg, cond, job.protocol)
            rec, coords, mjcf = _prepared_for(job, prepared, cfg, c)
            got = _run(rec, coords, mjcf, c, job.protocol, samples, dirs, var_corr, variables)
            n = len(samples)
            for sc in scene_corr:
                rs = sc.apply(rec, tmp / f"{cond}_{sc.name}")
                got += _run(rs, coords, mjcf, c, job.protocol, samples, dirs, [], variables)
            names = [None] + [x.name for x in var_corr + scene_corr]
            for i, name in enumerate(names):
                part = [lifted for lifted, _ in got[i * n : (i + 1) * n]]
                rec_ = p_lift_record(part, keys)
                if name is None:
                    p_lift[cond] = rec_
                else:
                    corrupted[name][cond] = rec_
                lifted_all[f"{cond}/{name or 'real'}"] = [int(x) for x in part]
                diag_all[f"{cond}/{name or 'real'}"] = [d for _, d in got[i * n : (i + 1) * n]]
            walls[cond] = time.perf_counter() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "p_lift": p_lift,
        "p_lift_corrupted": corrupted or None,
        "p_lift_samples": {
            "seed": job.seed,
            "sigmas": sig,
            "object_mass": ranges["object_mass"],
            "samples": samples,
            "lifted": lifted_all,
            "diagnoses": diag_all,
            "wall_s": walls,
        },
    }


def _prepared_for(job, prepared: tuple, cfg: ReplayConfig, c: ReplayConfig) -> tuple:
    """``(recording, coords, mjcf)`` for condition config ``c``: the study's own where the hand is the same."""
    if (c.hand, physics.choice_value(c, "hand_shape")) == (cfg.hand, physics.choice_value(cfg, "hand_shape")):
        return prepared
    rec, coords, mjcf, _ = prepare_recording(
        job.dataset,
        job.sequence,
        job.data_dir,
        manosim_dir=job.manosim_dir,
        cfg=c,
        protocol=job.protocol,
        settings=job.settings,
    )
    return rec, coords, mjcf


def _run(
    rec, coords, mjcf, cfg: ReplayConfig, protocol: str, samples: list, dirs, corr: list, variables: tuple
) -> list[tuple[bool, str | None]]:
    """``(lifted, diagnosis class or None)`` of one batch: every sample, then every sample under each of ``corr``."""
    from replay.protocol.sampling import run_samples  # Newton's import: in the worker only

    real = [sample_variant(s, variables) for s in samples]
    variants = list(real)
    for wc in corr:
        variants += [wc.apply(v, d) for v, d in zip(real, dirs)]
    res = run_samples(rec, coords, str(mjcf), cfg=cfg, samples=[(cfg, v) for v in variants], protocol=protocol)
    return [(bool(r.metrics["lifted"]), (r.metrics.get("diagnosis") or {}).get("class")) for r in res]
