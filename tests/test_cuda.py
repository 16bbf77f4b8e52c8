"""The CUDA path (``--device cuda``: mujoco-warp through ``SolverMuJoCo``) on a real rollout.

Skipped on machines without a CUDA device (CI, most developers) unless
``REPLAY_REQUIRE_CUDA=1``, where a missing device is a failure: set it when running
these on a GPU machine so a broken CUDA install cannot pass by skipping.

The same short GRAB window as ``test_rollout.py`` (tests/short_window.py) is replayed
with contact, with the contact ablation, and with an injected contact-capacity
overflow, so the CUDA-only code (mujoco-warp contact arrays, the ``overflow``
observable, read-back from ``mjw_model``) is exercised end to end.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from short_window import SHORT, contact_and_ablation, short_window

from replay.config import ReplayConfig
from replay.protocol.rollout import run_rollout

pytestmark = [pytest.mark.needs_data, pytest.mark.cuda]


@pytest.fixture(scope="session")
def cuda():  # session scope: set up before the (session) data fixtures, so a missing GPU is said first
    import warp as wp

    if not wp.is_cuda_available():
        if os.environ.get("REPLAY_REQUIRE_CUDA") == "1":
            pytest.fail("REPLAY_REQUIRE_CUDA=1 but Warp finds no CUDA device")
        pytest.skip("no CUDA device (Warp)")
    return "cuda"


@pytest.fixture(scope="module")
def window(cuda, grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


@pytest.fixture(scope="module")
def rollouts(window, capsule_rhand):
    return contact_and_ablation(window, capsule_rhand, engine="mujoco-warp", device="cuda")


def test_cuda_rollout_lifts_through_contact(rollouts, capsule_rhand):
    res, _, cfg = rollouts
    m = res.metrics
    assert m["stable"] and m["completed"], m["unstable_reason"]
    # the same criteria as the CPU test (test_rollout.py): most (3/4) of the commanded lift is kept
    assert m["rise"] > 0.75 * SHORT["lift"]["lift_height"] and m["lifted"] and m["outcome"] == "lifted", m
    assert m["contacts_force_at_lift"] > 0
    assert m["wrist_err_median_mm"] < 10.0
    # the per-joint force limits (replay.sim.finger_strength) reached mujoco-warp's model and bound the actuator force
    from replay.sim.finger_strength import joint_limits

    own = joint_limits(cfg, capsule_rhand)
    assert m["readback"]["finger_forcerange_per_joint"] == pytest.approx(own, rel=1e-6)
    assert m["finger_actuator_force_max"] <= own.max() * (1 + 1e-5)
    assert np.all(np.isfinite(res.poses["body_pos"]))


def test_cuda_ablation_object_does_not_move(rollouts):
    _, ab, _ = rollouts
    m = ab.metrics
    assert m["stable"] and m["completed"], m["unstable_reason"]
    assert m["max_hand_object_contacts"] == 0 and np.all(ab.poses["contact_count"] == 0)
    assert m["max_object_disp_mm"] < 1.0 and not m["lifted"]


def test_cuda_injected_contact_overflow_is_reported(window, capsule_rhand):
    """mujoco-warp drops contacts past nconmax; the rollout must stop and say so."""
    rec, coords = window
    res = run_rollout(rec, coords, capsule_rhand,
                      cfg=ReplayConfig(**SHORT, engine="mujoco-warp", device="cuda").replace(contact_budget={"capacity": 2}))
    m = res.metrics
    assert m["outcome"] == "unstable" and not m["stable"]
    assert "overflow" in m["unstable_reason"], m["unstable_reason"]


def test_cuda_batch_world_equals_single_world_run(window, capsule_rhand):
    """Many worlds per launch on the GPU (frame graph-captured): world i of a batch against a
    one-world batch of variant i and against MuJoCo C (tolerances of tests/test_warp_batch.py,
    looser: on a GPU, mujoco-warp's contact pool order also depends on thread scheduling)."""
    from replay.sim.engine.variants import Variant
    from replay.sim.engine.mujoco_c.mjc import MjcBatch
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch
    from replay.protocol.measures import measure_world as _measure
    from replay.protocol.rollout import build_replay_scene
    from replay.protocol.step_plan import step_protocol

    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    variants = [Variant(), Variant(friction=0.5), Variant(effort_limit=0.6, object_mass=0.12)]
    b = WarpBatch(scene, variants, device="cuda:0")
    assert b._use_graph
    traces = step_protocol(plan, b, cfg)
    trm = step_protocol(plan, MjcBatch(scene, variants), cfg)  # MuJoCo C, same scene
    for i, v in enumerate(variants):
        assert traces[i].contacts_at_lift == trm[i].contacts_at_lift
        s = WarpBatch(scene, [v], device="cuda:0")
        tr = step_protocol(plan, s, cfg)[0]
        mb = _measure(rec, plan, scene, cfg=cfg, tr=traces[i], world=b.worlds[i])
        ms = _measure(rec, plan, scene, cfg=cfg, tr=tr, world=s.worlds[0])
        assert mb["outcome"] == ms["outcome"] == "lifted", (i, mb["unstable_reason"], ms["unstable_reason"])
        assert mb["rise"] == pytest.approx(ms["rise"], abs=1e-3)
        n = min(tr.done, traces[i].done)
        assert np.max(np.abs(tr.body_pos[:n] - traces[i].body_pos[:n])) < 2e-3
