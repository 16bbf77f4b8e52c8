"""Named, versioned settings for a study: ``run_study.py --preset NAME``.

A preset is a set of :class:`~replay.config.ReplayConfig` values with a version and a source
for each; the config it makes records ``preset = "name@version"`` (written into every result
like any other setting), so a result says which preset, and which version of it, made it.
"""

from __future__ import annotations

import dataclasses

from replay.config import ReplayConfig
from replay.errors import DataError

_DENSITY = (
    "GRAB's objects are 3D prints (ContactDB, Brahmbhatt et al., CVPR 2019): PLA 1240 kg/m^3 solid, "
    "~0.3-0.5 of it at partial infill"
)
_SKIN_MU = (
    "fingertip skin on smooth polymers mu ~0.5-1.5, higher when moist (Derler & Gerhardt, Tribol. Lett. 45, 2012)"
)
_GRIP_N = "fingertip forces 1-10 N in precision lifts (Westling & Johansson, Exp. Brain Res. 53, 1984)"

#: name -> version -> {"settings" (ReplayConfig fields), "sources" (per setting)}; every version is kept so
#: that an older result can be made again (``--preset name@version``)
PRESET_VERSIONS = {
    "human-replay": {
        "1": {
            "settings": {"effort_limit": 1.0, "object_density_scale": 0.4, "hand_object_friction": 1.5},
            "sources": {
                "effort_limit": f"human grip: {_GRIP_N} over a ~10 cm knuckle-to-pad lever: up to ~1 N·m "
                "per finger (one value at every joint)",
                "object_density_scale": _DENSITY,
                "hand_object_friction": _SKIN_MU,
            },
        },
        "2": {
            "settings": {
                "effort_profile": "human",
                "effort_tip_force": 10.0,
                "object_density_scale": 0.4,
                "hand_object_friction": 1.5,
            },
            "sources": {
                "effort_profile": "per joint: the fingertip force times the joint's lever to its pad, "
                "measured on the manosim model (replay.kinematics.joint_levers)",
                "effort_tip_force": f"human grip: {_GRIP_N}: 10 N at the pad, the top of that range",
                "object_density_scale": _DENSITY,
                "hand_object_friction": _SKIN_MU,
            },
        },
    },
}

#: name -> its latest version ``{"version", "settings", "sources"}`` (what ``--preset name`` applies)
PRESETS = {n: {"version": max(vs, key=int), **vs[max(vs, key=int)]} for n, vs in PRESET_VERSIONS.items()}


def preset_names() -> list[str]:
    """Every name ``--preset`` takes: each preset (its latest version) and each ``name@version``."""
    return sorted(PRESETS) + sorted(f"{n}@{v}" for n, vs in PRESET_VERSIONS.items() for v in vs)


def apply_preset(config: ReplayConfig, name: str) -> ReplayConfig:
    """``config`` with the settings of preset ``name`` (``"name"``: its latest version, :data:`PRESETS`;
    ``"name@version"``: that version, :data:`PRESET_VERSIONS`) and ``preset`` = ``"name@version"``, validated.

    Raises:
        DataError: an unknown preset or version (field ``preset``) or a setting out of range.
    """
    base, _, version = name.partition("@")
    versions = PRESET_VERSIONS.get(base, {})
    version = version or (max(versions, key=int) if versions else "")
    if version not in versions:
        raise DataError(None, "config.preset", f"unknown preset {name!r}; choose from {preset_names()}")
    p = versions[version]
    return dataclasses.replace(config, **p["settings"], preset=f"{base}@{version}").validate()
