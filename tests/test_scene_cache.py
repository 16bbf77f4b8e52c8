"""One built scene per content and structural config (replay.sim.scene_cache), reset between uses.

* the key: no module of ``replay/sim`` reads a field (or part) of ``PROTOCOL_FIELDS`` (so a setting that
  differs only in those may share a scene); a structural field or another pose is another key;
* reset: a scene handed back after a batch whose worlds edited friction, mass and effort (and after
  its shared compiled model was edited in place, as a later Variant's edit might) equals a fresh
  build field by field (``benchmarks/model_diff.py``, and every MjModel array bit for bit);
* trajectories: a rollout on the reset scene equals one on a fresh build bit for bit. Bit for bit
  is determinism on one CPU: the same libmujoco steps the same model from the same state.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.protocol.rollout import build_replay_scene, run_rollouts
from replay.sim import scene_cache
from replay.sim.engine.variants import Variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the model diff and reference live there
from model_diff import diff_models  # noqa: E402

pytestmark = pytest.mark.needs_data
ROOT = Path(__file__).resolve().parents[1]


def test_no_scene_builder_reads_a_protocol_field():
    """Every field the key leaves out is named nowhere in replay/sim (the scene builders, the engines):
    a field a builder read would make two different scenes share one key."""
    src = "\n".join(p.read_text() for p in (ROOT / "replay" / "sim").rglob("*.py") if p.name != "scene_cache.py")
    read = [f for f in sorted(scene_cache.PROTOCOL_FIELDS) if re.search(rf"(cfg|config)\.{f}\b", src)]
    assert read == []
    assert scene_cache.PROTOCOL_FIELDS <= set(ReplayConfig().to_dict())


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


def _fresh(rec, coords, mjcf, cfg):
    scene_cache.clear()
    return build_replay_scene(rec, coords, mjcf, cfg=cfg)


def test_reset_scene_equals_a_fresh_build(window, capsule_rhand):
    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    _, first, _ = _fresh(rec, coords, capsule_rhand, cfg)
    edits = [Variant(friction=0.4), Variant(object_mass=0.3, effort_limit=0.5), Variant(ablation=True)]
    run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=edits, frame_limit=20)
    m = first.solver.mj_model
    m.geom_friction[:, 0] *= 0.5  # an edit in place of the shared model (no engine does it today)
    m.body_mass[-1] += 0.1
    m.opt.impratio = 3.0
    hits = scene_cache.STATS["hits"]
    _, again, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    assert again.solver is first.solver and scene_cache.STATS["hits"] == hits + 1
    assert again.readback == first.readback and again.readback is not first.readback  # each use's own figures
    _, fresh, _ = _fresh(rec, coords, capsule_rhand, cfg)
    assert fresh.solver is not first.solver
    diffs, unmatched = diff_models(again.solver.mj_model, fresh.solver.mj_model)
    assert diffs == [] and unmatched == []
    names = scene_cache.model_arrays(fresh.solver.mj_model)
    assert {"geom_friction", "body_mass", "geom_solref", "body_gravcomp", "qpos0"} <= set(names)
    differ = [n for n in names if not np.array_equal(getattr(again.solver.mj_model, n),
                                                     getattr(fresh.solver.mj_model, n), equal_nan=True)]
    assert differ == []
    assert again.solver.mj_model.opt.impratio == fresh.solver.mj_model.opt.impratio


def test_rollouts_on_a_reset_scene_equal_a_fresh_builds_bit_for_bit(window, capsule_rhand):
    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    variants = [Variant(), Variant(friction=0.6, object_mass=0.2, wrist_offset=(0.002, 0.0, -0.001))]
    scene_cache.clear()
    fresh = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=variants)
    builds = scene_cache.STATS["builds"]
    reused = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=variants[::-1])[::-1]  # the other order: worlds apart
    assert scene_cache.STATS["builds"] == builds  # no build: the kept scene, reset
    for a, b in zip(fresh, reused):
        assert a.metrics["outcome"] == b.metrics["outcome"] and a.metrics["frames"] == b.metrics["frames"]
        for k in ("body_pos", "body_quat", "contact_force", "wrist_err"):
            assert np.array_equal(a.poses[k], b.poses[k], equal_nan=True), k  # wrist_err: NaN before the approach
    # a protocol field shares the scene; a structural one (the solver's iterations) is another key
    longer = cfg.replace(lift={"lifted_min_rise": cfg.lift.lifted_min_rise + 0.01})  # the verdict, not the plan
    run_rollouts(rec, coords, capsule_rhand, cfg=longer, variants=[Variant()], frame_limit=5)
    assert scene_cache.STATS["builds"] == builds
    run_rollouts(rec, coords, capsule_rhand, cfg=dataclasses.replace(cfg, iterations=cfg.iterations + 1), variants=[Variant()],
                 frame_limit=5)
    assert scene_cache.STATS["builds"] == builds + 1
