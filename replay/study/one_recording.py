"""One recording replayed as the study replays it, in one call, nothing written: for scripts and notebooks."""

from __future__ import annotations

from pathlib import Path

from replay.config import ReplayConfig
from replay.data.locate import dataset_dir
from replay.protocol.rollout import RolloutResult, run_rollouts
from replay.sim.engine.variants import Variant
from replay.sim.hand_assets import resolve_hand_variant
from replay.study.prepare import prepare_recording


def replay_recording(
    dataset: str,
    sequence: str,
    config: ReplayConfig | None = None,
    *,
    variants: list[Variant] | None = None,
    data_dir: str | Path | None = None,
    protocol: str = "lift",
) -> list[RolloutResult]:
    """Replay ``sequence`` of ``dataset`` once per variant (default: the contact run and its ablation).

    Args:
        config: default :class:`~replay.config.ReplayConfig`, the dataset's hand variant where unset.
        data_dir: staged data (default ``data/`` or ``$REPLAY_MIRROR``), the manosim hand too.

    Returns:
        One RolloutResult per variant: ``metrics`` (docs/results.md) and ``poses`` (per-frame body poses, world
        m / xyzw).

    Raises:
        DataError: bad or missing input (file and field named).
    """
    cfg = resolve_hand_variant(config if config is not None else ReplayConfig(), dataset)
    rec, coords, mjcf, _start = prepare_recording(
        dataset, sequence, data_dir, manosim_dir=dataset_dir("manosim", data_dir), cfg=cfg, protocol=protocol
    )
    return run_rollouts(
        rec, coords, mjcf, cfg=cfg, variants=variants or [Variant(), Variant(ablation=True)], protocol=protocol
    )
