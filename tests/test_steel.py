"""The SolverSteel engine (config.engine="steel"; replay.sim.engine.steel.steel) on a short real window.

What is checked: the frame SolverSteel uses for ball-joint velocities and torques (the finger drive
relies on it) and that it ignores ball-joint drive targets; the finger drive kernel against the MuJoCo
C engine's law; the contact force signs (the object's weight on the support); a contact rollout and its
contact ablation (no hand-object contact, object left in place); a row budget too small for the scene
is a hard failure (``unstable`` with the reason), never a warning only; the config's rules.

The first SolverSteel use on a machine compiles Warp kernels for about three minutes on a CPU (cached
under ~/.cache/warp afterwards); with the cache warm this file runs in about a minute.
"""

from __future__ import annotations

import dataclasses

import newton
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from short_window import SHORT, contact_and_ablation, short_window

from replay.config import GRAVITY, ReplayConfig
from replay.errors import DataError
from replay.protocol.lift_plan import plan_rollout
from replay.protocol.rollout import run_rollout
from replay.sim.engine import finger_drive as mj_drive
from replay.sim.engine.variants import Variant
from replay.sim.engine.steel import steel_signals
from replay.sim.engine.steel.steel import SteelBatch
from replay.sim.engine.steel.steel_drive import SteelFingerDrive
from replay.sim.finger_strength import joint_limits
from replay.sim.scene_spec import SceneSpec
from replay.sim.engine.steel.steel_scene import build_steel_model, build_steel_scene
from replay.data.support import support_extent
from replay.kinematics.hand_layout import finger_quats

STEEL = dict(SHORT, engine="steel", finger_drive="quat")


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


def _scene_inputs(window, cfg):
    rec, coords = window
    plan = plan_rollout(rec, coords, cfg)
    obj = rec.target_object
    f0 = plan.start_frame
    return plan, (obj.asset, obj.pos[f0], obj.quat[f0], rec.support_height, plan.coords[0]), support_extent(rec)


@pytest.fixture(scope="module")
def bare_model(window, capsule_rhand):
    """(model, info) of the short window's world without gravity."""
    cfg = ReplayConfig(**STEEL)
    _, args, ext = _scene_inputs(window, cfg)
    model, info = build_steel_model(SceneSpec(capsule_rhand, *args, support_extent=ext), cfg)
    model.gravity.assign(np.zeros((1, 3), np.float32))
    return model, info


def _step(model, solver, setup, steps=1):
    s0, s1, ctl = model.state(), model.state(), model.control()
    setup(s0, ctl)
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    for _ in range(steps):
        solver.step(s0, s1, ctl, None, 1 / 240)
        s0, s1 = s1, s0
    return s0


def test_ball_joint_velocity_and_torque_live_in_the_parent_anchor_frame(bare_model):
    model, _ = bare_model
    solver = newton.solvers.SolverSteel(model)
    J = 3  # a finger ball joint
    qs, qds = int(model.joint_q_start.numpy()[J]), int(model.joint_qd_start.numpy()[J])
    par, ch = int(model.joint_parent.numpy()[J]), int(model.joint_child.numpy()[J])
    xp = model.joint_X_p.numpy()[J]
    w = np.array([0.3, -0.5, 0.8])

    def spin(s, c):
        qd = s.joint_qd.numpy()
        qd[qds:qds + 3] = w
        s.joint_qd.assign(qd)

    s = _step(model, solver, spin)
    bq, bqd = s.body_q.numpy(), s.body_qd.numpy()
    r_pa = Rotation.from_quat(bq[par, 3:7]) * Rotation.from_quat(xp[3:7])
    rel = r_pa.inv().apply(bqd[ch, 3:6] - bqd[par, 3:6])
    np.testing.assert_allclose(rel, s.joint_qd.numpy()[qds:qds + 3], atol=1e-5)
    # a world torque +T on the child and -T on the parent moves the joint as joint_f = R_pa^T T
    T = np.array([0.002, 0.001, -0.003])
    s_ref = model.state()
    newton.eval_fk(model, s_ref.joint_q, s_ref.joint_qd, s_ref)
    r0 = Rotation.from_quat(s_ref.body_q.numpy()[par, 3:7]) * Rotation.from_quat(xp[3:7])

    def body_torque(s, c):
        bf = np.zeros((model.body_count, 6), np.float32)
        bf[ch, 3:], bf[par, 3:] = T, -T
        s.body_f.assign(bf)

    def joint_torque(s, c):
        jf = np.zeros(model.joint_dof_count, np.float32)
        jf[qds:qds + 3] = r0.inv().apply(T)
        c.joint_f.assign(jf)

    a, b = _step(model, solver, body_torque).joint_qd.numpy(), _step(model, solver, joint_torque).joint_qd.numpy()
    assert np.abs(a).max() > 1e-3
    np.testing.assert_allclose(a, b, atol=1e-6 * np.abs(a).max() + 1e-9)

    def far_target(s, c):  # SolverSteel does not drive BALL joints: a distant target moves nothing
        tq = s.joint_q.numpy().copy()
        tq[qs:qs + 4] = Rotation.from_rotvec([0.0, 0.0, 1.0]).as_quat()
        c.joint_target_q.assign(tq)

    assert np.abs(_step(model, solver, far_target, steps=20).joint_qd.numpy()).max() == 0.0


def test_drive_kernel_is_the_mujoco_engines_law(bare_model):
    model, info = bare_model
    rng = np.random.default_rng(1)
    kp = np.full((15, 3), 30.0)
    kd = rng.uniform(0.3, 0.4, (15, 3))
    eff = np.full((15, 3), 0.4)
    drive = SteelFingerDrive.from_gains(info["hand_q_start"], info["hand_qd_start"], kp=kp, kd=kd, effort=eff,
                                        device="cpu")
    q = Rotation.from_rotvec(rng.normal(0, 0.6, (15, 3)))
    tgt = Rotation.from_rotvec(rng.normal(0, 0.6, (15, 3))) * q
    w_p = rng.normal(0, 2.0, (15, 3))  # parent-anchor frame
    state, control = model.state(), model.control()
    jq, jqd = state.joint_q.numpy(), state.joint_qd.numpy()
    for j in range(15):
        a = info["hand_q_start"] + 7 + 4 * j
        v = info["hand_qd_start"] + 6 + 3 * j
        jq[a:a + 4], jqd[v:v + 3] = q[j].as_quat(), w_p[j]
    state.joint_q.assign(jq)
    state.joint_qd.assign(jqd)
    drive.set_targets(tgt.as_quat())
    drive.apply(state, control)
    got = control.joint_f.numpy()[info["hand_qd_start"] + 6:info["hand_qd_start"] + 51].reshape(15, 3)
    # MuJoCo's engine: wxyz, child-frame velocity and torque
    qpos = np.concatenate([x[[3, 0, 1, 2]] for x in q.as_quat()])
    qvel = np.concatenate([q[j].inv().apply(w_p[j]) for j in range(15)])
    qfrc = np.zeros(45)
    mj_drive.quat_drive(qpos, qvel, np.arange(15) * 4, np.arange(15) * 3, tgt.as_quat()[:, [3, 0, 1, 2]],
                        kp, kd, eff, qfrc)
    want = np.stack([q[j].apply(qfrc[3 * j:3 * j + 3]) for j in range(15)])
    np.testing.assert_allclose(got, want, atol=2e-5)
    assert drive.max_torque() <= 0.4 + 1e-6 and drive.max_torque() > 0.39  # some components saturate


def test_support_carries_the_objects_weight(window, capsule_rhand):
    cfg = ReplayConfig(**STEEL)
    plan, args, ext = _scene_inputs(window, cfg)
    grasp = plan.coords[plan.phase == 1][-1]
    scene = build_steel_scene(SceneSpec(capsule_rhand, *args, grasp, finger_quats(plan.coords), support_extent=ext), cfg)
    batch = SteelBatch(scene, [Variant()])
    row = np.zeros((1, 16))
    row[0, :3], row[0, 3:7] = plan.coords[0, :3], plan.coords[0, [6, 3, 4, 5]]
    for _ in range(6):
        batch.step_frame(finger_quats(plan.coords[:1]), row, row)
    c = batch.contacts
    support = np.zeros(scene.model.shape_count, bool)
    support[scene.model.shape_body.numpy() < 0] = True
    obj = batch.layout.object_geoms
    n, nf, fsum, _, _ = steel_signals.hand_object_signals(
        int(c.rigid_contact_count.numpy()[0]), c.rigid_contact_shape0.numpy(), c.rigid_contact_shape1.numpy(),
        normal=c.rigid_contact_normal.numpy(), force=batch.obs.contact_f.numpy(), hand_shapes=support,
        object_shapes=obj, shape_mu=scene.model.shape_material_mu.numpy(), force_min=1e-6)
    assert n >= 3 and nf >= 1
    assert fsum == pytest.approx(scene.object_mass * GRAVITY, rel=0.05)


@pytest.mark.slow  # contact and ablation rollouts on the steel engine through the SHORT protocol: 24 s on 2 shared cores (make test-slow)
def test_contact_rollout_and_clean_ablation(window, capsule_rhand):
    contact, ablation, cfg = contact_and_ablation(window, capsule_rhand, **{k: v for k, v in STEEL.items()
                                                                           if k not in SHORT})
    c, a = contact.metrics, ablation.metrics
    for m in (c, a):
        assert m["engine"] == "steel" and m["solver_backend"] == "steel"
        assert m["stable"], m["unstable_reason"]
        rows = m["steel_rows"]
        assert rows["rollout"]["articulation_overflow_world_steps"] == 0
        assert rows["rollout"]["free_body_overflow_world_steps"] == 0
        assert rows["articulation_budget"] >= cfg.steel.rows_min
        assert m["finger_actuator_force_max"] <= max(joint_limits(cfg, capsule_rhand)) + 1e-6  # N·m
        assert m["fingertip_distance_mm"] is None  # no distance query on Newton's pipeline: flagged, not faked
    assert c["contacts_at_lift"] > 0 and c["contacts_force_at_lift"] > 0
    assert c["friction_budget_peak_kg"] > 0
    assert c["outcome"] in ("lifted", "not_lifted")
    assert a["readback"]["ablation_filter_pairs"] == 16 * len(window[0].target_object.asset.collision_meshes)
    assert a["max_hand_object_contacts"] == 0 and a["contacts_at_lift"] == 0
    assert float(np.max(ablation.poses["contact_count"])) == 0
    assert a["max_object_disp_mm"] < cfg.ablation_clean_mm
    assert a["rise"] < cfg.lift.lifted_min_rise and not a["lifted"]


def test_row_overflow_is_a_hard_failure(window, capsule_rhand):
    rec, coords = window
    cfg = ReplayConfig(**STEEL).replace(steel={"row_budget": 2})  # the object alone needs 9 free-body rows at rest
    r = run_rollout(rec, coords, capsule_rhand, cfg=cfg, frame_limit=10).metrics
    assert r["outcome"] == "unstable" and not r["stable"]
    assert r["unstable_frame"] == 0
    assert r["unstable_reason"].startswith("steel dropped constraint rows or contacts")
    assert r["steel_rows"]["free_body_budget"] == 2
    assert r["steel_rows"]["rollout"]["free_body_overflow_world_steps"] > 0


def test_config_rules():
    with pytest.raises(DataError, match="finger_drive"):
        ReplayConfig(engine="steel").validate()
    with pytest.raises(DataError, match="steel.friction_mode"):
        ReplayConfig(engine="steel", finger_drive="quat", steel={"friction_mode": "bisection_desaxce"}).validate()
    with pytest.raises(DataError, match="steel.row_budget"):
        ReplayConfig(steel={"row_budget": 0}).validate()
    ok = ReplayConfig(engine="steel", finger_drive="quat", device="cuda", steel={"friction_mode": "bisection_desaxce"}).validate()
    assert ok.replace(steel={"friction_mode": "fixed_normal"}, device="cpu").validate()
