"""The one sampling path: many (setting, variant) samples of one recording, as few batches as MuJoCo allows.

:func:`run_samples` takes every sample of a recording (a verdict's samples under each setting, a
sweep's grid, a robustness map's cells) as ``(config, Variant)`` pairs and runs them through
:func:`replay.protocol.rollout.run_rollouts`: a sample whose config differs from the study's only in
what MuJoCo changes at runtime (:func:`replay.sim.runtime_settings.setting_variant`: the solver's
options) is a world of the study config's batch; the others are grouped by config, a batch (and one
built scene, :mod:`replay.sim.scene_cache`) per distinct config. Results come back in the samples'
order, each with the physics record of its own config.

Its callers: the sampled verdict (:mod:`replay.study.sample_job`, each condition's samples and
corruptions), the robustness maps (:mod:`replay.study.sweep`, a recording's grid), the one-factor
attribution (:mod:`replay.study.attribution`, every factor of a hand), and the refine search
(:mod:`replay.protocol.refine`: its batches and neighbourhoods, with the mid-lift early stop and its own
verdict through :class:`replay.protocol.rollout.Stepping`). None keeps a loop over worlds or rollouts
of its own.

Why the engine's batch (:class:`replay.sim.engine.mujoco_c.mjc.MjcBatch`) and not MuJoCo 3.17's
``mujoco.batch.Batch``: measured (``benchmarks/sample_cost.py --compare-batch 32``, docs/engine.md),
``mujoco.batch`` stepping the same 32 worlds on their own models with their recorded inputs written
between steps, a lower bound on a path built on it (no controls computed, no signal read), took more
CPU on one thread and more wall on two than the engine's batch doing the whole protocol: it returns to
Python once per physics step for every world, where the engine runs a world's frames up to the
protocol's next decision in one compiled call. The wrist wrench also needs the body COMs between
``mj_step1`` and ``mj_step2`` (:mod:`replay.sim.engine.mujoco_c.c_loop`), which ``Batch`` gives only
as ``step(stage=mjSTAGE_VEL)`` on a persistent batch: still one return to Python per physics step. The
two agree: ``mujoco.batch`` ends bit for bit where the engine's worlds end.
"""

from __future__ import annotations

import json

from replay.config import ReplayConfig
from replay.protocol.rollout import RolloutResult, Stepping, run_rollouts
from replay.sim import physics
from replay.sim.engine.variants import Variant
from replay.sim.runtime_settings import setting_variant


def run_samples(
    rec,
    coords,
    mjcf,
    cfg: ReplayConfig,
    samples: list[tuple[ReplayConfig, Variant]],
    threads: int = 1,
    protocol: str = "lift",
    frame_limit: int | None = None,
    stepping: Stepping | None = None,
) -> list[RolloutResult]:
    """One :class:`RolloutResult` per ``(config, Variant)`` sample, in order (module doc).

    Args:
        rec, coords, mjcf: as :func:`replay.protocol.rollout.run_rollouts` (coords (T, 67), Newton xyzw).
        cfg: the study's config (the batch the option-only settings join).
        samples: ``(setting's config, its world's Variant)`` pairs; ``(cfg, Variant())`` is the study's run.
        threads, protocol, frame_limit, stepping: as :func:`run_rollouts` (stepping: a search's early
            stop, own verdict and engine options, :class:`replay.protocol.rollout.Stepping`).

    Raises:
        as :func:`run_rollouts`: DataError (bad input), ValueError (no samples).
    """
    if not samples:
        raise ValueError("run_samples needs at least one sample")
    groups: dict[str, tuple[ReplayConfig, list]] = {}
    for i, (c, v) in enumerate(samples):
        world = setting_variant(cfg, c, v)
        key, run_cfg = ("", cfg) if world is not None else (json.dumps(c.to_dict(), sort_keys=True, default=str), c)
        groups.setdefault(key, (run_cfg, []))[1].append((i, world if world is not None else v, c))
    out: list = [None] * len(samples)
    for run_cfg, members in groups.values():
        res = run_rollouts(
            rec,
            coords,
            mjcf,
            run_cfg,
            [v for _, v, _ in members],
            frame_limit=frame_limit,
            threads=threads,
            protocol=protocol,
            stepping=stepping,
        )
        for (i, _, c), r in zip(members, res):
            if c is not run_cfg:  # a world of another config's batch: its own physics record
                r.metrics["physics"] = physics.physics_record(c)
            out[i] = r
    return out
