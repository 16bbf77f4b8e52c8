"""The object's side of the hand-object contact, and its density, written into the compiled model.

The physics choice ``contact_mixing`` (:func:`replay.sim.physics.choice_value`; the readback's ``mode``):

* ``"mujoco"`` (mode ``"compiled"``, both named physics): nothing changes. MuJoCo mixes a pair of
  equal priority by ``solmix`` (:mod:`importer_patches.contact_params`): the manosim finger capsules' soft
  solref/solimp against the object's hulls (MuJoCo's defaults, Newton writes no values of
  its own); the palm (``priority="1"``) keeps its own values.
* ``"hand"`` (mode ``"manosim"``; the hug-oracle's ``oracle_contact manosim``): the object's geoms get
  ``solmix`` 0, so in every equal-priority pair the other geom's solref/solimp are used outright (MuJoCo's rule:
  a geom with solmix below mjMINVAL has weight 0): every finger-object pair uses exactly the finger capsules' values
  (manosim's soft contact, which the HUG replays use: manosim README), and object-support
  pairs the support's, which is what they used before wherever the object and the support
  carry the same values (Newton's defaults; checked pair by pair in the tests). The object's
  own solref/solimp are left as built. (Copying the finger values into the object's geoms,
  as before, also softened object-support contact: two changes for one knob.)

The physics choice ``hand_object_friction`` (None: as built): the sliding friction of every hand-object
contact (float32-rounded), set as a :class:`replay.sim.engine.variants.Variant` ``friction`` sets it for one
world: on the hand's geoms alone where that reaches every hand-object pair, so object-support
contacts keep what was built (:func:`replay.sim.engine.pair_audit.set_hand_object_friction`; the
pair classes it could not spare are read back into ``readback["object_contact"]["friction"]``).

The physics choice ``object_density_scale``: the object's mass and inertia times this (its mass
distribution kept), then ``mj_setConst`` (derived constants of the edited model:
without it the solver uses the old body weights and 25 of the 30 GRAB lifts go unstable,
measured).

What the pairs use afterwards is read back from the compiled model
(:func:`replay.sim.contact_table.hand_object_table`) into ``readback["contact_pairs"]``,
and ``readback["object_contact"]`` lists the object geoms' values and mass. Only the direct
MuJoCo C engine steps ``scene.solver.mj_model``; :func:`replay.sim.physics.refuse_unsupported`
refuses these choices on the other engines.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np

from replay.sim import physics
from replay.sim.contact_table import hand_object_table
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.mujoco_c.model_edits import apply_variant
from replay.sim.engine.variants import Variant
from replay.sim.object_visual import VISUAL_LABEL


def apply_object_contact(scene):
    """``scene`` with the config's object contact softness and density scale in its compiled
    model (module doc); the scene itself where both are at their defaults.

    Returns:
        A :class:`replay.sim.scene.Scene` with ``object_mass`` (kg) as edited and
        ``readback["object_contact"]`` = ``{"mode", "density_scale", "object_solref",
        "object_solimp", "object_solmix", "object_mass", "object_friction", "friction"}``,
        ``readback["contact_pairs"]`` read again.
    """
    cfg = scene.config
    margin = _asset_margin(scene)
    mode = "manosim" if physics.choice_value(cfg, "contact_mixing") == "hand" else "compiled"
    density = float(physics.choice_value(cfg, "object_density_scale"))
    friction = physics.choice_value(cfg, "hand_object_friction")
    if mode == "compiled" and density == 1.0 and friction is None and margin is None:
        return scene
    m = scene.solver.mj_model
    lay = MjLayout.from_scene(scene)
    og = np.flatnonzero(lay.object_geoms)
    if margin is not None:  # Newton zeroes geom margins whenever MULTICCD meets a mesh (newton #2106); the
        # collision parts' margin: a visual geom as written (replay.sim.object_visual) keeps MuJoCo's default 0
        m.geom_margin[[g for g in og if not m.geom(g).name.startswith(VISUAL_LABEL)]] = margin
    if mode == "manosim":
        m.geom_solmix[og] = 0.0  # the partner's solref/solimp, outright (module doc)
    b = lay.object_body
    # friction (hand-object pairs, pair_audit) and mass (inertia with it, mj_setConst, read back): the
    # engine's own variant edit, so a preset and a sweep world change the model the same way
    rows = {"hand_object_friction": friction, "object_density_scale": density if density != 1.0 else None}
    edit = apply_variant(m, lay, Variant.of_rows(rows, {"object_mass": float(m.body_mass[b])}))
    mujoco.mj_setConst(m, mujoco.MjData(m))
    rb = dict(scene.readback or {})
    mass = float(m.body_mass[b])
    rb["object_contact"] = {
        "mode": mode,
        "density_scale": density,
        "object_solref": np.unique(m.geom_solref[og], axis=0).tolist(),
        "object_solimp": np.unique(m.geom_solimp[og], axis=0).tolist(),
        "object_mass": mass,
        "object_solmix": np.unique(m.geom_solmix[og]).tolist(),
        "object_friction": np.unique(m.geom_friction[og, 0]).tolist(),
        "object_margin": np.unique(m.geom_margin[og]).tolist(),
        "friction": {k: edit[k] for k in ("contact_friction", "friction_geoms", "friction_side_effects") if k in edit},
    }
    scene = dataclasses.replace(scene, object_mass=mass)
    rb["contact_pairs"] = hand_object_table(scene)
    return dataclasses.replace(scene, readback=rb)


def _asset_margin(scene) -> float | None:
    """The object's geom margin (m) as its asset writes it when the physics choice ``object_margin``
    is ``asset`` and the asset sets one (> 0); None: leave the compiled margin (0) as it is."""
    if physics.choice_value(scene.config, "object_margin") != "asset":
        return None
    asset = (scene.build_inputs or {}).get("asset")
    margin = float(getattr(asset, "margin", 0.0) or 0.0)
    return margin if margin > 0.0 else None
