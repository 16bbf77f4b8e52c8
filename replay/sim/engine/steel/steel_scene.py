"""The replay scene for ``SolverSteel`` (engine ``steel``): rows sized by a probe, angular damping configured
(docs/engine.md, "SolverSteel"). Quaternions xyzw."""

from __future__ import annotations

import dataclasses
import math

import newton
import numpy as np

from replay.config import ReplayConfig
from replay.errors import ReadbackError
from replay.kinematics.hand_layout import MANOSIM_HAND, finger_quats
from replay.results.engine_choice import EngineChoice
from replay.sim import finger_strength
from replay.sim import silent_failures as diagnostics
from replay.sim.engine import wrist
from replay.sim.engine.steel.steel import SteelBatch, finger_drive_of
from replay.sim.engine.variants import Variant
from replay.sim.scene import Scene, finger_dof_slice, make_solver, probe_scene
from replay.sim.scene_spec import SceneSpec
from replay.sim.world_builder import build_world_model

#: the watermark families sized here: SolverSteel constructor argument per ``constraint_row_watermarks`` family
ROW_FAMILIES = {"articulation": "articulation_constraint_max", "free_body": "free_body_constraint_max"}


def steel_options(config: ReplayConfig, rows: dict[str, int]) -> dict:
    """SolverSteel constructor options from ``config`` and row budgets ``rows`` (``{"articulation", "free_body"}``)."""
    opts = dict(
        iterations=int(config.steel.iterations),
        friction_mode=str(config.steel.friction_mode),
        baumgarte=float(config.steel.baumgarte),
        row_watermark=True,
        warn_constraint_overflow=True,
        **{ROW_FAMILIES[k]: int(v) for k, v in rows.items()},
    )
    if config.steel.friction_mode != "fixed_normal":
        opts["friction_anchor_beta"] = 0.0  # the coupled modes use point friction (docstring); said, not defaulted
    return opts


def build_steel_model(spec: SceneSpec, config: ReplayConfig):
    """``(model, info)``: ``spec``'s replay world with SolverSteel's attributes and angular damping. Raises DataError:
    bad asset; SceneError: bad hand import."""
    model, info = build_world_model(spec, config, (newton.solvers.SolverSteel,))
    model.steel.rigid_body_angular_damping.fill_(float(config.steel.angular_damping))
    return model, info


def build_steel_scene(spec: SceneSpec, config: ReplayConfig) -> Scene:
    """The Steel scene of ``spec``; ``flutter`` informative only. Raises ReadbackError: an option, row budget or drive
    gain did not reach the solver; SceneError; DataError."""
    model, info = build_steel_model(spec, config)
    probe_rows = {k: int(config.steel.probe_rows) for k in ROW_FAMILIES}
    probe = probe_scene(
        spec,
        config,
        model=model,
        info=info,
        solver=newton.solvers.SolverSteel(model, **steel_options(config, probe_rows)),
    )
    measured, counts = _probe_rows(probe, spec.hand_coords0, spec.grasp_coords)
    if config.steel.row_budget is not None:
        rows = {k: int(config.steel.row_budget) for k in ROW_FAMILIES}
    else:
        rows = {
            k: int(max(config.steel.rows_min, math.ceil(config.steel.row_headroom * measured[k]))) for k in ROW_FAMILIES
        }
    flutter = _flutter_records(model, info, spec.grasp_coords, spec.commanded_finger_quats, config)
    fd = finger_dof_slice(info)
    scene = dataclasses.replace(
        probe,
        solver=newton.solvers.SolverSteel(model, **steel_options(config, rows)),
        resting_contacts=counts[0],
        probe_contacts=list(counts[:2]),
        finger_damping=model.joint_damping.numpy()[fd].copy(),
        flutter=flutter,
        readback={"steel_probe_rows": {"measured": measured, "budget": rows, "probe_budget": probe_rows}},
    )
    return dataclasses.replace(scene, readback=steel_readback(scene, rows), contact_capacity=counts[2])


def _probe_rows(probe: Scene, hand_coords0: np.ndarray, grasp_coords: np.ndarray) -> tuple[dict, tuple]:
    """Rows the probe requested per family over a settle and one step at the grasp pose, and ``(resting contacts,
    contacts at grasp, buffer size)``. Raises ReadbackError: the probe dropped rows (``steel.probe_rows`` too small)."""
    cfg = probe.config
    batch = SteelBatch(probe, [Variant(ablation=probe.ablation)])
    row = np.zeros((1, wrist.T_SIZE))
    row[0, :3] = hand_coords0[:3]
    row[0, 3:7] = np.asarray(hand_coords0)[[6, 3, 4, 5]]  # xyzw -> the target row's wxyz
    fingers = finger_quats(np.asarray(hand_coords0))[None]
    for _ in range(max(1, int(round(cfg.settle_s * cfg.control_fps)))):
        batch.step_frame(fingers, row, row)
    resting = int(batch.contacts.rigid_contact_count.numpy()[0])
    s = batch.s0
    q = s.joint_q.numpy().copy()
    q[probe.hand_q_start : probe.hand_q_start + MANOSIM_HAND.coords] = grasp_coords
    s.joint_q.assign(q)
    s.joint_qd.zero_()
    newton.eval_fk(probe.model, s.joint_q, s.joint_qd, s)
    batch.drive.set_targets(finger_quats(np.asarray(grasp_coords)))
    row[0, :3] = grasp_coords[:3]
    row[0, 3:7] = np.asarray(grasp_coords)[[6, 3, 4, 5]]
    batch.substep(row[0])
    at_grasp = int(batch.contacts.rigid_contact_count.numpy()[0])
    wm = probe.solver.constraint_row_watermarks()
    if np.any(probe.solver.constraint_overflow.numpy()):
        raise ReadbackError(
            f"Steel row probe dropped rows with budget {cfg.steel.probe_rows}: {wm}; raise config.steel.probe_rows"
        )
    return (
        {k: int(wm[f"{k}_raw_high_water"]) for k in ROW_FAMILIES},
        (resting, at_grasp, int(batch.contacts.rigid_contact_max)),
    )


def _flutter_records(model, info: dict, grasp_coords, commanded_finger_quats, config: ReplayConfig) -> list:
    """Flutter records of the MJCF drive at the commanded targets (informative: nothing is raised)."""
    mj = make_solver(model, dataclasses.replace(config, engine=EngineChoice.MUJOCO_C, device="cpu"), None)
    state = model.state()
    q = state.joint_q.numpy().copy()
    q[info["hand_q_start"] : info["hand_q_start"] + MANOSIM_HAND.coords] = grasp_coords
    state.joint_q.assign(q)
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    inertia = diagnostics.dof_inertia(mj, model, state)
    fd = finger_dof_slice(info)
    rec = diagnostics.flutter_margins(
        commanded_finger_quats,
        inertia[fd],
        ke=model.joint_target_ke.numpy()[fd],
        damping=model.joint_damping.numpy()[fd],
        kd=model.joint_target_kd.numpy()[fd],
        config=config,
    )
    return [dict(r, raised_to=None) for r in rec]


def steel_readback(scene: Scene, rows: dict) -> dict:
    """Compare what the final SolverSteel holds with what was asked (options, row budgets, drive gains, damping,
    gravity, filter pairs). Raises ReadbackError naming a differing value."""
    s, cfg, m = scene.solver, scene.config, scene.model
    want = dict(
        iterations=int(cfg.steel.iterations),
        friction_mode=str(cfg.steel.friction_mode),
        baumgarte=float(cfg.steel.baumgarte),
        row_watermark=True,
        **{ROW_FAMILIES[k]: int(v) for k, v in rows.items()},
    )
    got = {k: getattr(s, k) for k in want}
    bad = {k: (want[k], got[k]) for k in want if got[k] != want[k]}
    drive = finger_drive_of(scene)
    eff = drive.gains["effort"]
    want_eff = finger_strength.joint_limits(cfg, scene.build_inputs["mjcf"])
    if not np.allclose(eff, np.asarray(want_eff, np.float32)[:, None], rtol=1e-6):
        bad["finger_effort_limit"] = (sorted(set(np.round(want_eff, 6))), sorted(set(np.round(eff.ravel(), 6))))
    damp = m.steel.rigid_body_angular_damping.numpy()
    if not np.allclose(damp, cfg.steel.angular_damping):
        bad["steel_angular_damping"] = (cfg.steel.angular_damping, sorted(set(np.round(damp, 6))))
    excluded = None
    if scene.ablation:
        pairs = {tuple(sorted(map(int, p))) for p in m.shape_collision_filter_pairs}
        need = {tuple(sorted((int(h), int(o)))) for h in scene.hand_shapes for o in scene.object_shapes}
        excluded = len(need & pairs)
        if excluded != len(need):
            bad["ablation_filter_pairs"] = (len(need), excluded)
    if bad:
        raise ReadbackError(f"SolverSteel read-back mismatch (wanted, got): {bad}")
    return dict(
        scene.readback,
        solver="steel",
        **got,
        finger_drive="quat",
        finger_kp=sorted(set(np.round(drive.gains["kp"].ravel(), 6).tolist())),
        finger_kd_range=[float(drive.gains["kd"].min()), float(drive.gains["kd"].max())],
        finger_effort=float(eff.max()),
        steel_angular_damping=float(damp.max()),
        gravity=m.gravity.numpy().tolist(),
        ablation_filter_pairs=excluded,
    )
