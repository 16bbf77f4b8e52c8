"""Object contact softness and density (replay.sim.object_contact) on the short cubesmall window:
what the compiled model uses afterwards, read back, and a rollout on the edited model."""

from __future__ import annotations

import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.protocol.rollout import build_replay_scene, run_rollouts
from replay.sim.engine.variants import Variant

pytestmark = pytest.mark.needs_data


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


def test_manosim_contact_and_density_are_in_the_compiled_model(window, capsule_rhand):
    rec, coords = window
    _, base, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT))
    assert "object_contact" not in base.readback  # the default changes nothing
    cfg = ReplayConfig(**SHORT, physics_overrides={"contact_mixing": "hand", "object_density_scale": 0.4,
                                                   "hand_object_friction": 1.5})
    _, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    oc = scene.readback["object_contact"]
    # 1.5 is above the object's own 1.0: the hand's geoms carry it, the object's (and so object-table) stay as built
    assert oc["object_friction"] == [1.0] and oc["friction"]["friction_geoms"] == "hand"
    assert "object-support" not in oc["friction"]["friction_side_effects"]
    assert all(r["friction"][0] == pytest.approx(1.5) for r in scene.readback["contact_pairs"]["pairs"])
    assert scene.object_mass == pytest.approx(0.4 * base.object_mass, rel=1e-6) == oc["object_mass"]
    # the object geoms keep their own values with solmix 0: their partners' are used outright
    assert oc["object_solmix"] == [0.0] and np.allclose(oc["object_solref"][0], [0.02, 1.0])
    # read back per pair: every finger-object pair uses exactly the finger's values; before, MuJoCo mixed them
    fingers = [r for r in scene.readback["contact_pairs"]["pairs"] if r["hand"] != "palm"]
    assert fingers and all(np.allclose(r["solref"], [0.04, 1.0]) and np.allclose(r["solimp"][:3], [0.5, 0.95, 0.001])
                           for r in fingers)
    before = [r for r in base.readback["contact_pairs"]["pairs"] if r["hand"] != "palm"]
    assert not all(np.allclose(r["solref"], [0.04, 1.0]) for r in before)


def test_a_rollout_on_the_edited_model_is_stable(window, capsule_rhand):
    rec, coords = window
    cfg = ReplayConfig(**SHORT, physics_overrides={"contact_mixing": "hand", "object_density_scale": 0.4}).replace(lift={"shake_s": 0.0})
    m = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=[Variant()])[0].metrics
    assert m["stable"] and m["lifted"] and m["object_mass"] == m["readback"]["object_contact"]["object_mass"]


def test_other_engines_refuse_the_edits():
    with pytest.raises(DataError, match="object_density_scale"):
        ReplayConfig(physics_overrides={"object_density_scale": 0.5}, engine="mujoco-warp", device="cuda").validate()
    with pytest.raises(DataError, match="contact_mixing 'hand'"):
        ReplayConfig(physics_overrides={"contact_mixing": "hand"}, engine="mujoco-warp", device="cuda").validate()
    with pytest.raises(DataError, match="object_density_scale"):
        ReplayConfig(physics_overrides={"object_density_scale": 0.0}).validate()
