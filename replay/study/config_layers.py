"""Where a run's settings come from, in one stated order: the command line, then the config file, then the physics
table. :func:`layered_config` is the one function that applies it (``run_study.py``, ``run_sweep.py``; tested in
``tests/test_config_layers.py``)."""

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

    1. the command line: ``fields`` ({config field: value}; a part's fields as ``{part: {field: value}}``),
       ``physics`` (the named physics), ``choices`` ({physics choice: value}: ``--physics-set``, ``--effort``,
       ``--hand-shape``) and the engine flags ``solver`` (``--solver`` mujoco / steel) and ``device`` (``--device``
       cpu / cuda), read against the file's engine (:func:`replay.results.engine_choice.engine_from_flags`);
    2. the config file (``config_file``: a config JSON or a study's; an older file's physics fields read as
       choices), with a named ``preset`` (``--preset``: settings of its own, :mod:`replay.study.presets`) over it;
    3. the physics table (:mod:`replay.results.physics_table`): every choice no layer above sets, read by
       :func:`replay.sim.physics.choice_value` from the named physics (default ``replay``).

    Choices merge key by key (a command-line choice over the file's, the rest kept); a config field no layer sets
    keeps its default.

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
