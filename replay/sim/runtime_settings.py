"""A setting that differs from a batch's config only in what MuJoCo changes at runtime, as a world.

MuJoCo reads every ``mjOption`` field at each step (its docs, "mjModel changes": no recompile), so a
setting whose config differs from the batch's only in solver options (:data:`OPTION_FIELDS`: the cone,
impratio, the solver's iterations and tolerance) need not build and compile a scene of its own: it is a
world of the batch's compiled model with those options set (:attr:`Variant.options
<replay.sim.engine.variants.Variant>`, :func:`replay.sim.engine.mujoco_c.model_edits.set_options`).
:func:`setting_variant` says whether a setting is such a world and gives its variant; anything else
(a hand shape, contact parameters the builder writes, the wrist law, a plan shift) returns None: a
scene of its own, as before. MuJoCo C only (``engine="mujoco-c"``): mujoco-warp holds
one ``opt`` per batch.

The world's trajectory equals the setting's own rollout bit for bit on one CPU
(``tests/test_runtime_settings.py``): Newton writes these config fields into ``opt`` alone.
"""

from __future__ import annotations

import dataclasses

import mujoco

from replay.results.physics_table import CHOICES
from replay.sim import physics
from replay.sim.engine.variants import Variant
from replay.sim.scene_cache import cacheable

#: physics choice (cone, impratio: :func:`replay.sim.physics.choice_value`) or config field -> (mjOption field,
#: the value as MuJoCo's): what Newton's SolverMuJoCo writes
#: into ``mj_model.opt`` for it (newton 1.8.0 solver_mujoco.py ``_convert_to_mjc``)
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
    """``cfg``'s fields with the physics overrides of :data:`OPTION_FIELDS` taken out and the choices
    among them in effect (:func:`replay.sim.physics.choice_value`) as keys of their own."""

    d = cfg.to_dict()
    d["physics_overrides"] = {k: v for k, v in (d.get("physics_overrides") or {}).items() if k not in OPTION_FIELDS}
    d.update({k: physics.choice_value(cfg, k) for k in OPTION_FIELDS if k in CHOICES})
    return d


def setting_variant(base, cfg, variant: Variant | None = None) -> Variant | None:
    """``variant`` (default ``Variant()``) with the options that make a world of ``base``'s batch run as
    ``cfg`` would, or None when ``cfg`` differs from ``base`` in anything else (its own scene).

    Args:
        base: the batch's :class:`replay.config.ReplayConfig`. cfg: the setting's config.
        variant: the world's other differences (friction, mass, ...); its own ``options`` are kept
            unless the setting sets the same field.
    """
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
