"""The object's side of the hand-object contact (``contact_mixing``: ``hand`` gives the object's geoms ``solmix`` 0,
docs/fidelity.md), its friction and density, written into the compiled model (MuJoCo C only)."""

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
    """``scene`` with the physics' object contact and density in its compiled model (itself where both are defaults);
    ``object_mass`` kg as edited, ``readback["object_contact"]`` and ``readback["contact_pairs"]`` read again."""
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
    # friction and mass through the engine's own variant edit: a preset and a sweep world change the model alike
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
    """The object's geom margin, m, under ``object_margin`` ``asset`` (> 0); None: leave the compiled 0."""
    if physics.choice_value(scene.config, "object_margin") != "asset":
        return None
    asset = (scene.build_inputs or {}).get("asset")
    margin = float(getattr(asset, "margin", 0.0) or 0.0)
    return margin if margin > 0.0 else None
