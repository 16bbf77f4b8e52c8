"""A setting that differs only in solver options is a world of the batch's compiled model
(replay.sim.runtime_settings), its trajectory the setting's own rollout's bit for bit.

Bit for bit is determinism on one CPU: the setting's own scene compiles the same model but for
``opt`` (Newton writes these config fields there alone), and the world sets the same ``opt``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.errors import EngineError
from replay.protocol.rollout import run_rollouts
from replay.sim import physics
from replay.sim.engine.variants import Variant
from replay.sim.runtime_settings import setting_variant

pytestmark = pytest.mark.needs_data


def test_only_option_settings_become_worlds():
    cfg = ReplayConfig(**SHORT)
    flip = physics.apply_physics(cfg, None, {"cone": "pyramidal", "impratio": 1.0})
    v = setting_variant(cfg, flip, Variant(friction=0.7))
    assert dict(v.options) == {"cone": 0.0, "impratio": 1.0} and v.friction == pytest.approx(0.7)
    assert v.to_dict()["options"] == {"cone": 0.0, "impratio": 1.0} and "options" not in Variant().to_dict()
    assert setting_variant(cfg, dataclasses.replace(cfg, physics_overrides={"hand_shape": "myhand"})) is None  # a hand shape: a scene
    assert setting_variant(cfg, cfg.replace(lift={"lift_height": 0.1})) is None  # another plan
    assert setting_variant(cfg, dataclasses.replace(flip, engine="mujoco-warp", device="cuda")) is None  # mujoco-warp: one opt per batch
    with pytest.raises(ValueError, match="options"):
        Variant(options=(("impratio", float("nan")),))


def test_an_option_world_equals_the_settings_own_rollout_bit_for_bit(grab_dir, capsule_rhand):
    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT)
    flip = physics.apply_physics(cfg, None, {"cone": "pyramidal", "impratio": 1.0})
    own = run_rollouts(rec, coords, capsule_rhand, cfg=flip, variants=[Variant()])[0]
    base, world = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=[Variant(), setting_variant(cfg, flip)])
    assert own.metrics["frames"] == world.metrics["frames"] and own.metrics["outcome"] == world.metrics["outcome"]
    for k in ("body_pos", "body_quat", "contact_force", "wrist_err"):
        assert np.array_equal(own.poses[k], world.poses[k], equal_nan=True), k
    # the cone matters on this window: the default world is not the same trajectory
    assert not np.array_equal(base.poses["body_pos"], world.poses["body_pos"])
    assert world.metrics["variant_readback"]["options"] == {"cone": 0.0, "impratio": 1.0}
    with pytest.raises(EngineError, match="scalar mjOption"):
        run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=[Variant(options=(("gravity", 1.0),))], frame_limit=2)


def test_run_samples_gives_each_settings_own_rollouts(grab_dir, capsule_rhand):
    """The one sampling path: an option-only setting joins the study's batch, another plan runs apart;
    each sample's trajectory is its own rollout's, bit for bit, in the samples' order."""
    from replay.protocol.sampling import run_samples

    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT)
    flip = physics.apply_physics(cfg, None, {"cone": "pyramidal", "impratio": 1.0})
    higher = cfg.replace(lift={"lift_height": cfg.lift.lift_height + 0.02})
    samples = [(flip, Variant(friction=0.8)), (cfg, Variant()), (higher, Variant()), (flip, Variant())]
    got = run_samples(rec, coords, capsule_rhand, cfg=cfg, samples=samples, frame_limit=40)
    for (c, v), r in zip(samples, got):
        own = run_rollouts(rec, coords, capsule_rhand, cfg=c, variants=[v], frame_limit=40)[0]
        assert np.array_equal(own.poses["body_pos"], r.poses["body_pos"])
        assert r.metrics["physics"] == own.metrics["physics"]
    assert got[0].metrics["batch_worlds"] == 3 and got[2].metrics["batch_worlds"] == 1
