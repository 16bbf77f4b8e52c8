"""Named, versioned settings for a study (``run_study.py --preset NAME``), each with a source; a preset names
physics table rows, never a value of its own."""

from __future__ import annotations

import dataclasses

from replay.config import ReplayConfig
from replay.errors import DataError

#: name -> version -> {"settings" (ReplayConfig fields), "sources" (per setting)}
PRESET_VERSIONS = {
    "human-replay": {
        "3": {
            "settings": {"physics": "replay"},
            "sources": {
                "physics": "the replay physics: human finger strength, objects weighed as made and pad compression "
                "are its table's rows (finger_effort_limit, grip_force_n, finger_force_share, object_mass_model, "
                "object_print, pad_compression; docs/sources.md)",
            },
        },
    },
}

#: retired versions -> why; a result one made holds its whole config (remake it with ``--config``)
RETIRED = {
    "human-replay@1": "held its own effort (1 N·m), density (0.4) and friction (1.5) beside the physics table",
    "human-replay@2": "held its own tip force (10 N), density (0.4) and friction (1.5) beside the physics table",
}

#: name -> its latest version ``{"version", "settings", "sources"}`` (what ``--preset name`` applies)
PRESETS = {n: {"version": max(vs, key=int), **vs[max(vs, key=int)]} for n, vs in PRESET_VERSIONS.items()}


def preset_names() -> list[str]:
    """Every name ``--preset`` takes: each preset and each ``name@version``, retired ones included."""
    return sorted(PRESETS) + sorted([f"{n}@{v}" for n, vs in PRESET_VERSIONS.items() for v in vs] + list(RETIRED))


def apply_preset(config: ReplayConfig, name: str) -> ReplayConfig:
    """``config`` with preset ``name``'s settings (``name``: the latest version; ``name@version``) and ``preset`` =
    ``"name@version"``, validated. Raises DataError: an unknown or retired preset or version (field ``preset``) or a
    setting out of range."""
    if name in RETIRED:
        raise DataError(
            None,
            "config.preset",
            f"{name} is retired: it {RETIRED[name]}; remake its results with --config <their study.json>",
        )
    base, _, version = name.partition("@")
    versions = PRESET_VERSIONS.get(base, {})
    version = version or (max(versions, key=int) if versions else "")
    if version not in versions:
        raise DataError(None, "config.preset", f"unknown preset {name!r}; choose from {preset_names()}")
    p = versions[version]
    return dataclasses.replace(config, **p["settings"], preset=f"{base}@{version}").validate()
