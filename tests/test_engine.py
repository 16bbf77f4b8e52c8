"""The direct engine (replay.sim.engine.mujoco_c.mjc) on a real GRAB window from the mirror.

* equivalence: the direct engine gives the reference engine's answers (every step
  through SolverMuJoCo.step) on the short window, with and without contact;
* exactness: the engine adds nothing to MuJoCo but ``ctrl`` and ``xfrc_applied``:
  replaying what it wrote through MuJoCo's own C loop reproduces its state bit for bit;
* batches: world i of a batch equals a batch of one holding variant i;
* the wrist law compiled by numba equals the reference controller's wrench;
* variants reach the compiled model, and the ablation's collision masks filter
  hand-object pairs only.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.sim.engine import wrist
from replay.sim.engine.variants import Variant
from replay.sim.engine.mujoco_c.mjc import MjcBatch
from replay.sim.engine.mujoco_c.model_edits import _collides, ablate_hand_object
from replay.protocol.rollout import build_replay_scene, run_rollouts
from replay.protocol.step_plan import step_protocol, wrist_target_rows

pytestmark = pytest.mark.needs_data


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


@pytest.fixture(scope="module")
def scene_and_plan(window, capsule_rhand):
    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    return cfg, plan, scene


def test_direct_engine_gives_the_reference_engines_answers(window, capsule_rhand):
    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    variants = [Variant(), Variant(ablation=True)]
    fast = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=variants)
    ref = run_rollouts(rec, coords, capsule_rhand, cfg=dataclasses.replace(cfg, engine="newton"), variants=variants)
    for f, r in zip(fast, ref):
        a, b = f.metrics, r.metrics
        assert a["engine"] == "direct" and b["engine"] == "newton"
        for key in ("outcome", "stable", "lifted", "shake_held", "frames", "contacts_force_at_lift"):
            assert a[key] == b[key], key
        # The two differ only by float rounding: the reference passes coordinates through
        # Newton's float32 state every step (the direct engine keeps MuJoCo's float64).
        # Measured on this window: wrist 3 um apart at most, rise 0.001 mm, object 0.03 mm;
        # on the 30 GRAB lifts rise differs by at most 0.85 mm (README).
        assert abs(a["rise"] - b["rise"]) < 1e-4
        n = min(len(f.poses["body_pos"]), len(r.poses["body_pos"]))
        assert n == a["frames"]
        wr = np.linalg.norm(f.poses["body_pos"][:n, 0] - r.poses["body_pos"][:n, 0], axis=-1)
        obj = np.linalg.norm(f.poses["body_pos"][:n, -1] - r.poses["body_pos"][:n, -1], axis=-1)
        assert wr.max() < 2e-5 and obj.max() < 5e-4, (wr.max(), obj.max())
        assert abs(a["wrist_err_median_mm"] - b["wrist_err_median_mm"]) < 0.01
        assert a["finger_actuator_force_max"] == pytest.approx(b["finger_actuator_force_max"], abs=1e-4)
    assert fast[0].metrics["lifted"] and fast[1].metrics["max_hand_object_contacts"] == 0


def test_engine_is_raw_mujoco_with_its_controls(scene_and_plan):
    """Replaying the engine's ctrl/xfrc_applied through mujoco.rollout reaches its state exactly."""
    cfg, plan, scene = scene_and_plan
    # the Python loop, whose mj_step2 calls (mj_step's second half) can be watched (the compiled default steps the same
    # trajectory: tests/test_engine_contract.py). Bit for bit below is determinism on one machine: the same libmujoco
    # steps the same logged ctrl and xfrc_applied, no arithmetic of ours in between
    batch = MjcBatch(scene, [Variant()], c_loop=False)
    w = batch.worlds[0]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.zeros(mujoco.mj_stateSize(w.m, spec))
    mujoco.mj_getState(w.m, w.d, s0, spec)
    log, real = [], mujoco.mj_step2

    def spy(m, d, *a, **k):
        log.append(np.concatenate([d.ctrl, d.xfrc_applied.reshape(-1)]))
        return real(m, d, *a, **k)

    mujoco.mj_step2 = spy
    try:
        tr = step_protocol(plan, batch, cfg, frame_limit=40)[0]
    finally:
        mujoco.mj_step2 = real
    assert len(log) == tr.done * cfg.substeps == 40 * cfg.substeps
    xfrc = np.asarray(log)[:, w.m.nu:].reshape(len(log), -1, 6)
    # only the wrist's root body is pushed, and it is pushed every step
    pushed = np.flatnonzero(np.abs(xfrc).sum(axis=(0, 2)))
    assert list(pushed) == [batch.layout.root]
    cspec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_XFRC_APPLIED
    from mujoco import rollout as mj_rollout

    state, _ = mj_rollout.rollout(w.m, mujoco.MjData(w.m), s0[None], np.asarray(log)[None], control_spec=cspec,
                                  initial_warmstart=np.zeros((1, w.m.nv)))
    d = mujoco.MjData(w.m)
    mujoco.mj_setState(w.m, d, state[0, -1], spec)
    assert np.array_equal(d.qpos, w.d.qpos) and np.array_equal(d.qvel, w.d.qvel)


def test_world_of_a_batch_equals_a_batch_of_one(scene_and_plan):
    """A world of four steps what a batch of one world steps, bit for bit: determinism on one machine
    (the same code path and inputs; only the batch's size and threads differ)."""
    cfg, plan, scene = scene_and_plan
    variants = [Variant(), Variant(friction=0.3), Variant(ablation=True),
                Variant(effort_limit=0.2, wrist_offset=(0.004, -0.003, 0.0), wrist_rotvec=(0.0, 0.0, 0.05))]
    batch = MjcBatch(scene, variants, threads=2)
    many = step_protocol(plan, batch, cfg, frame_limit=60)
    batch.close()
    for i, v in enumerate(variants):
        one = step_protocol(plan, MjcBatch(scene, [v]), cfg, frame_limit=60)[0]
        assert np.array_equal(many[i].body_pos, one.body_pos), v
        assert np.array_equal(many[i].ccount, one.ccount), v
    # and the variants did differ: the worlds are not copies of one another
    assert not np.array_equal(many[0].body_pos, many[3].body_pos)
    assert many[2].ccount.max() == 0 < many[0].ccount.max()


def test_numba_wrist_law_equals_the_reference_controller(scene_and_plan):
    """The compiled wrench equals replay.sim.control.HandController's (Newton state, scipy
    rotations) at real states of the rollout, to float32 (Newton's state) precision."""
    from replay.sim.control import HandController

    cfg, plan, scene = scene_and_plan
    batch = MjcBatch(scene, [Variant()])
    rows = wrist_target_rows(plan)[None]
    fingers = plan.coords[:, 7:].reshape(-1, 1, 15, 4)
    lay = batch.layout
    state = scene.model.state()
    ctl = HandController(scene, scene.model.control())
    d, m = batch.worlds[0].d, batch.worlds[0].m
    checked = 0
    for k in range(50):
        batch.step_frame(fingers[k], rows[:, max(k - 1, 0)], rows[:, k])
        if k % 10:
            continue
        mujoco.mj_kinematics(m, d)
        tgt = rows[0, k]
        out = np.zeros(6)
        wrist.wrench(d.qpos, d.qvel, d.xipos, lay.hand_qadr, lay.hand_vadr, lay.root, lay.hand_bodies,
                     batch.body_mass, batch.par, tgt, out)
        batch.sync_state(0, state)
        ref = ctl.wrench(state, tgt[:3], tgt[[4, 5, 6, 3]], vel=tgt[7:10], omega=tgt[10:13], acc=tgt[13:16])
        # force ~3 N (weight) + PD; float32 coordinates in the reference: 1e-3 N, 1e-4 N·m
        assert np.allclose(out[:3], ref[:3], atol=2e-3), (k, out, ref)
        assert np.allclose(out[3:], ref[3:], atol=2e-4), (k, out, ref)
        checked += 1
    assert checked == 5


def test_variants_reach_the_compiled_model(scene_and_plan):
    cfg, plan, scene = scene_and_plan
    v = Variant(friction=0.35, effort_limit=0.15, object_mass=0.05)
    batch = MjcBatch(scene, [Variant(), v])
    base, w = batch.worlds[0], batch.worlds[1]
    lay = batch.layout
    og = np.flatnonzero(lay.object_geoms)
    assert w.m is not base.m  # its own copy; the scene's model is untouched
    f32 = lambda x: float(np.float32(x))  # noqa: E731 (as Newton stores model parameters)
    assert np.all(w.m.geom_friction[og, 0] == f32(0.35)) and np.all(base.m.geom_friction[og, 0] != f32(0.35))
    assert np.all(w.m.geom_friction[lay.hand_geoms, 0] == f32(0.35))  # the pair's coefficient is the max
    assert np.all(w.m.actuator_forcerange[lay.finger_act] == [-f32(0.15), f32(0.15)])
    assert w.m.body_mass[lay.object_body] == f32(0.05)
    ratio = w.m.body_inertia[lay.object_body] / base.m.body_inertia[lay.object_body]
    assert np.allclose(ratio, 0.05 / base.m.body_mass[lay.object_body])
    # 0.35 is below the object's own 1.0, so both sides carry it; the support keeps max(0.35, 1.0) with the
    # object; the palm (priority 1) takes its own 0.35 against the table: that one pair changes too, and is said
    assert w.readback == {"contact_friction": f32(0.35), "finger_forcerange": f32(0.15), "object_mass": f32(0.05),
                          "finger_forcerange_per_joint": [f32(0.15)] * 15, "friction_geoms": "hand+object",
                          "friction_side_effects": w.readback["friction_side_effects"]}
    assert "object-support" not in w.readback["friction_side_effects"]
    step_protocol(plan, batch, cfg, frame_limit=60)
    # the effort variant is what MuJoCo clamps to
    assert w.act_max <= f32(0.15) < base.act_max
    with pytest.raises(ValueError, match="friction"):
        Variant(friction=-1.0)


def test_ablation_masks_filter_hand_object_pairs_only(scene_and_plan):
    _, _, scene = scene_and_plan
    lay = MjcBatch(scene, [Variant()]).layout
    m = mujoco.MjModel.__copy__(scene.solver.mj_model)
    before = _collides(m.geom_contype.astype(np.int64), m.geom_conaffinity.astype(np.int64))
    bit = ablate_hand_object(m, lay)
    after = _collides(m.geom_contype.astype(np.int64), m.geom_conaffinity.astype(np.int64))
    h, o = lay.hand_geoms, lay.object_geoms
    assert bit > 0
    assert before[np.ix_(h, o)].any() and not after[np.ix_(h, o)].any()
    support = ~h & ~o & (np.asarray(m.geom_bodyid) == 0)
    assert before[np.ix_(support, o)].any() and np.array_equal(before[np.ix_(support, o)], after[np.ix_(support, o)])
    assert np.array_equal(before[np.ix_(h, ~o)], after[np.ix_(h, ~o)])
