"""Named, versioned settings for a study: ``run_study.py --preset NAME``.

A preset is a set of :class:`~replay.config.ReplayConfig` values with a version and a source
for each; the config it makes records ``preset = "name@version"`` (written into every result
like any other setting), so a result says which preset, and which version of it, made it.
"""

from __future__ import annotations

import dataclasses

from replay.config import ReplayConfig
from replay.errors import DataError

#: name -> {"version", "settings" (ReplayConfig fields), "sources" (per setting)}
PRESETS = {
    "human-replay": {
        "version": "1",
        "settings": {"effort_limit": 1.0, "object_density_scale": 0.4, "hand_object_friction": 1.5},
        "sources": {
            "effort_limit": "human grip: fingertip forces 1-10 N in precision lifts (Westling & Johansson, Exp. Brain "
                            "Res. 53, 1984) over a ~10 cm knuckle-to-pad lever: up to ~1 N·m per finger",
            "object_density_scale": "GRAB's objects are 3D prints (ContactDB, Brahmbhatt et al., CVPR 2019): PLA "
                                    "1240 kg/m^3 solid, ~0.3-0.5 of it at partial infill",
            "hand_object_friction": "fingertip skin on smooth polymers mu ~0.5-1.5, higher when moist (Derler & "
                                    "Gerhardt, Tribol. Lett. 45, 2012)",
        },
    },
}


def apply_preset(config: ReplayConfig, name: str) -> ReplayConfig:
    """``config`` with the settings of preset ``name`` (:data:`PRESETS`) and ``preset`` =
    ``"name@version"``, validated.

    Raises:
        DataError: an unknown preset (field ``preset``) or a setting out of range.
    """
    if name not in PRESETS:
        raise DataError(None, "config.preset", f"unknown preset {name!r}; choose from {sorted(PRESETS)}")
    p = PRESETS[name]
    return dataclasses.replace(config, **p["settings"], preset=f"{name}@{p['version']}").validate()
