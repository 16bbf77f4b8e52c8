"""A setting that differs from a batch's config only in solver options (:data:`OPTION_FIELDS`) runs as a world of the
batch's compiled model with those options: MuJoCo reads ``mjOption`` each step. MuJoCo C only."""

from __future__ import annotations

import dataclasses

import mujoco

from replay.results.physics_table import CHOICES
from replay.sim import physics
from replay.sim.engine.variants import Variant
from replay.sim.scene_cache import cacheable

#: choice or config field -> (mjOption field, MuJoCo's value), as newton 1.8.0's ``_convert_to_mjc`` writes it
OPTION_FIELDS = {
    "cone": (
        "cone",
        lambda v: int({"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}[v]),
    ),
    "impratio": ("impratio", float),
    "iterations": ("iterations", int),
    "ls_iterations": ("ls_iterations", int),
    "tolerance": ("tolerance", float),
}


def _plain_fields(cfg) -> dict:
    """``cfg``'s fields less the :data:`OPTION_FIELDS` overrides, those choices in effect as keys of their own."""

    d = cfg.to_dict()
    d["physics_overrides"] = {k: v for k, v in (d.get("physics_overrides") or {}).items() if k not in OPTION_FIELDS}
    d.update({k: physics.choice_value(cfg, k) for k in OPTION_FIELDS if k in CHOICES})
    return d


def setting_variant(base, cfg, variant: Variant | None = None) -> Variant | None:
    """``variant`` (default ``Variant()``) with the options that run a world of ``base``'s batch as ``cfg``; None when
    ``cfg`` differs in anything else."""
    if not (cacheable(base) and cacheable(cfg)):
        return None
    a, b = _plain_fields(base), _plain_fields(cfg)
    differ = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
    if not differ <= set(OPTION_FIELDS):
        return None
    v = variant or Variant()
    opts = dict(v.options)
    for k in sorted(differ):
        name, conv = OPTION_FIELDS[k]
        opts[name] = conv(b[k])
    return dataclasses.replace(v, options=tuple(opts.items()))
