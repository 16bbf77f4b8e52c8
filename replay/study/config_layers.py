"""Where a run's settings come from: the command line, then the config file, then the physics table."""

from __future__ import annotations

from pathlib import Path

from replay.config import ReplayConfig
from replay.results.engine_choice import engine_from_flags
from replay.sim import physics as physics_rules
from replay.study.presets import apply_preset


def layered_config(
    *,
    config_file: str | Path | None = None,
    preset: str | None = None,
    physics: str | None = None,
    choices: dict | None = None,
    fields: dict | None = None,
    solver: str | None = None,
    device: str | None = None,
) -> ReplayConfig:
    """The config of a run, each value from the first layer that states it:

    1. the command line: ``fields`` ({config field: value}; a part's as ``{part: {field: value}}``), ``physics``,
       ``choices`` ({physics choice: value}) and the engine flags ``solver``, ``device`` (read against the file's);
    2. ``config_file`` (a config JSON or a study's), with ``preset`` over it;
    3. the physics table: every choice no layer above sets, from the named physics (default ``replay``).

    Choices merge key by key; a config field no layer sets keeps its default.

    Raises:
        ReplayError: an unreadable file, an unknown preset, physics or choice, a value out of range (names it).
    """
    cfg = ReplayConfig.load(config_file) if config_file else ReplayConfig()
    if preset:
        cfg = apply_preset(cfg, preset)
    if physics is not None or choices:
        cfg = physics_rules.apply_physics(cfg, physics, dict(choices or {}))
    fields = dict(fields or {})
    if solver is not None or device is not None:
        fields["engine"], fields["device"] = engine_from_flags(cfg.engine, cfg.device, solver=solver, cli_device=device)
    if fields:
        cfg = cfg.replace(**fields)
    return cfg.validate()
