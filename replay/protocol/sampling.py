"""The one sampling path: many ``(config, Variant)`` samples of one recording in as few batches as MuJoCo allows (a
config differing only in runtime solver options is a world of the study's batch; docs/engine.md)."""

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
    *,
    cfg: ReplayConfig,
    samples: list[tuple[ReplayConfig, Variant]],
    threads: int = 1,
    protocol: str = "lift",
    frame_limit: int | None = None,
    stepping: Stepping | None = None,
) -> list[RolloutResult]:
    """One :class:`RolloutResult` per ``(config, Variant)`` sample, in order, with its config's physics record
    (``(cfg, Variant())``: the study's run; other arguments as ``run_rollouts``). Raises DataError, ValueError (no
    samples)."""
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
            cfg=run_cfg,
            variants=[v for _, v, _ in members],
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
