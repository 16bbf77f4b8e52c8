"""Build the Newton model and the ``SolverMuJoCo`` for one replay; every model edit happens before the final solver
is built, and what it compiled is read back (docs/engine.md). Quaternions xyzw (wxyz only in
:mod:`replay.sim.solver_view`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import newton
import numpy as np

from replay.config import ReplayConfig
from replay.kinematics.hand_layout import BALL_DOFS, MANOSIM_HAND, finger_quats
from replay.results.engine_choice import EngineChoice
from replay.sim import physics
from replay.sim import silent_failures as diagnostics
from replay.sim.control import HandController
from replay.sim.engine import wrist
from replay.sim.engine.mujoco_c.mjc import MjcBatch
from replay.sim.engine.spans import frame_rows
from replay.sim.engine.variants import Variant
from replay.sim.made_mass import made_mass
from replay.sim.object_contact import apply_object_contact
from replay.sim.scene_spec import SceneSpec
from replay.sim.world_builder import build_world_model

#: the hand's bodies as named in the manosim MJCF, in Newton body order.
HAND_BODY_NAMES = MANOSIM_HAND.body_names


@dataclass(frozen=True)
class Scene:
    """A built replay scene (:func:`build_scene` fills the probe stage first, then the measured fields).

    Attributes:
        hand_bodies: (16,) Newton body indices of ``mano_body_0..15``.
        support_height: m. wrist_kp / wrist_kd: (6,) gains (tx, ty, tz, rx, ry, rz), N/m, N·s/m, N·m/rad, N·m·s/rad.
        hand_mass / object_mass: kg. object_vertices: (V, 3) collision vertices, object frame, m.
        build_inputs: :func:`replay.sim.world_builder.add_replay_world`'s arguments less ``builder``.
        contact_capacity: ``nconmax`` (0: probe). resting_contacts / probe_contacts: [resting, at the grasp pose].
        finger_damping: (45,) N·m·s/rad (None: probe). flutter / readback: :mod:`replay.sim.silent_failures` records."""

    model: newton.Model
    solver: object
    config: ReplayConfig
    hand_joint: int
    hand_q_start: int
    hand_qd_start: int
    hand_bodies: np.ndarray
    hand_shapes: np.ndarray
    object_body: int
    object_q_start: int
    object_qd_start: int
    object_shapes: np.ndarray
    support_height: float
    wrist_kp: np.ndarray
    wrist_kd: np.ndarray
    hand_mass: float
    object_mass: float
    object_vertices: np.ndarray
    ablation: bool
    import_report: object = None
    build_inputs: dict = field(default_factory=dict)
    contact_capacity: int = 0
    resting_contacts: int = 0
    probe_contacts: list = field(default_factory=list)
    finger_damping: np.ndarray | None = None
    flutter: list = field(default_factory=list)
    readback: dict = field(default_factory=dict)

    @property
    def finger_qd_start(self) -> int:
        return self.hand_qd_start + MANOSIM_HAND.finger_dof_start


def build_model(spec: SceneSpec, config: ReplayConfig):
    """``(model, info)`` of ``spec``, not simulated. Raises DataError: bad asset; SceneError: bad hand import."""
    return build_world_model(spec, config)


def probe_scene(spec: SceneSpec, config: ReplayConfig, *, model, info: dict, solver) -> Scene:
    """The probe stage's :class:`Scene` of ``spec``: ``model`` and ``info`` from :func:`build_model`, the probe
    ``solver``."""
    return Scene(
        model=model,
        solver=solver,
        config=config,
        support_height=spec.support_height,
        ablation=spec.ablation,
        build_inputs=spec.world_inputs(config),
        **info,
    )


def finger_dof_slice(info: dict) -> slice:
    """The finger DOFs of the hand in a model built from ``info`` (:func:`build_model`)."""
    return _finger_dofs(info["hand_qd_start"])


def _finger_dofs(hqd: int) -> slice:
    return slice(hqd + MANOSIM_HAND.finger_dof_start, hqd + MANOSIM_HAND.dofs)


def make_solver(model: newton.Model, config: ReplayConfig, nconmax: int | None, **extra):
    """``SolverMuJoCo``: MuJoCo C on a CPU engine, else mujoco-warp; ``nconmax``: contact capacity per world."""
    kwargs = dict(
        solver=config.solver,
        integrator=physics.choice_value(config, "integrator"),
        cone=physics.choice_value(config, "cone"),
        impratio=physics.choice_value(config, "impratio"),
        iterations=config.iterations,
        ls_iterations=config.ls_iterations,
        tolerance=config.tolerance,
        use_mujoco_cpu=config.engine.mujoco_cpu(config.device),
        nconmax=nconmax,
        enable_multiccd=bool(physics.choice_value(config, "multiccd")),
        **extra,
    )
    if nconmax is not None and not config.engine.mujoco_cpu(config.device):
        # elliptic cone: condim rows per contact (<= 4 here) + joint rows
        kwargs["njmax"] = int(nconmax * 4 + 64)
    return newton.solvers.SolverMuJoCo(model, **kwargs)


def build_scene(spec: SceneSpec, config: ReplayConfig) -> Scene:
    """:func:`finish_scene` of :func:`compile_scene`; ``spec`` needs ``grasp_coords`` and ``commanded_finger_quats``.
    Raises ReadbackError: a set value did not reach the solver; SceneError; DataError: bad asset."""
    return finish_scene(compile_scene(spec, config), spec)


def compile_scene(spec: SceneSpec, config: ReplayConfig) -> Scene:
    """The probe stage (what :mod:`replay.sim.scene_cache` keeps). Raises SceneError; DataError: bad asset."""
    model, info = build_model(spec, config)
    return probe_scene(spec, config, model=model, info=info, solver=make_solver(model, config, None))


def finish_scene(probe: Scene, spec: SceneSpec) -> Scene:
    """The rest of :func:`build_scene`: probe, contact capacity, flutter damping, final solver, read-back, object
    contact settings. Raises ReadbackError: a set value did not reach the solver."""
    config, model, hqd = probe.config, probe.model, probe.hand_qd_start
    resting, at_grasp, inertia = _probe(probe, spec.hand_coords0, spec.grasp_coords)
    kd_resolved = model.joint_target_kd.numpy().copy()
    if config.contact_budget.capacity is not None:
        capacity = int(config.contact_budget.capacity)
    else:
        capacity = int(max(config.contact_budget.capacity_min, math.ceil(config.contact_budget.headroom * resting)))
    damping, flutter, changed = _raise_flutter_damping(
        model, hqd, inertia, kd_resolved, spec.commanded_finger_quats, config
    )
    fd = _finger_dofs(hqd)
    scene = dataclasses.replace(
        probe,
        solver=_final_solver(probe.solver, model, config, capacity, changed),
        contact_capacity=capacity,
        resting_contacts=int(resting),
        probe_contacts=[int(resting), int(at_grasp)],
        finger_damping=damping[fd].copy(),
        flutter=flutter,
    )
    rb = diagnostics.check_readback(scene)
    rb["object_mass_model"] = made_mass(
        scene.build_inputs["asset"], scene.config
    ).record()  # the rule it was weighed by
    scene = dataclasses.replace(scene, readback=rb)
    return apply_object_contact(scene)  # config's object contact softness / density (no change by default)


def _probe(scene: Scene, hand_coords0: np.ndarray, grasp_coords: np.ndarray) -> tuple[int, int, np.ndarray]:
    """``(resting, at_grasp, inertia)``: contacts after settling at the first pose, contacts at ``grasp_coords``, and
    the (joint_dof_count,) mass-matrix diagonal there incl. armature, kg or kg·m^2."""
    probe, model, hq = scene.solver, scene.model, scene.hand_q_start
    settled = _probe_settle(scene, hand_coords0)
    resting = diagnostics.count_contacts(probe, model, settled)
    q = settled.joint_q.numpy().copy()
    q[hq : hq + MANOSIM_HAND.coords] = grasp_coords
    settled.joint_q.assign(q)
    settled.joint_qd.zero_()
    newton.eval_fk(model, settled.joint_q, settled.joint_qd, settled)
    at_grasp = diagnostics.count_contacts(probe, model, settled)
    inertia = diagnostics.dof_inertia(probe, model, settled)
    return resting, at_grasp, inertia


def _raise_flutter_damping(
    model: newton.Model,
    hqd: int,
    inertia: np.ndarray,
    kd_resolved: np.ndarray,
    commanded_finger_quats: np.ndarray,
    config: ReplayConfig,
) -> tuple[np.ndarray, list, bool]:
    """Raise each finger joint's passive damping (N·m·s/rad) to its flutter bound. Returns ``(damping
    (joint_dof_count,), flutter records, changed)``."""
    fd = _finger_dofs(hqd)
    damping = model.joint_damping.numpy().copy()
    ke = model.joint_target_ke.numpy()
    flutter = diagnostics.flutter_margins(
        commanded_finger_quats, inertia[fd], ke=ke[fd], damping=damping[fd], kd=kd_resolved[fd], config=config
    )
    changed = False
    # as_authored: measured, never raised; the quaternion drive has no flutter bound: damping stays as imported
    if physics.choice_value(config, "finger_flutter_damping") == "as_authored" or config.finger_drive == "quat":
        return damping, [dict(rec, raised_to=None) for rec in flutter], False
    for rec in flutter:
        if rec["raised_to"] is not None:
            for k in range(BALL_DOFS):
                damping[fd.start + BALL_DOFS * rec["joint"] + k] = rec["raised_to"]
            changed = True
    if changed:
        model.joint_damping.assign(damping)
    return damping, flutter, changed


def _final_solver(probe, model: newton.Model, config: ReplayConfig, capacity: int, changed: bool):
    """The rollout's solver: MuJoCo C keeps the probe's (its contact arena grows), else a new one of ``capacity``."""
    if config_uses_direct_engine(config):
        if changed:
            probe.notify_model_changed(newton.ModelFlags.JOINT_DOF_FORCE_PROPERTIES)
        return probe
    return make_solver(model, config, capacity)


def _probe_settle(scene: Scene, hand_coords0: np.ndarray):
    """The state after ``settle_s`` holding the hand at ``hand_coords0`` (MuJoCo C: one span; else ``SolverMuJoCo``)."""
    cfg, model = scene.config, scene.model
    frames = max(1, int(round(cfg.settle_s * cfg.control_fps)))
    hand_coords0 = np.asarray(hand_coords0, float)
    if config_uses_direct_engine(cfg):
        batch = MjcBatch(scene, [Variant(ablation=scene.ablation)], capacity=1 << 30)
        row = np.zeros(wrist.T_SIZE)
        row[:3] = hand_coords0[:3]
        row[3:7] = hand_coords0[[6, 3, 4, 5]]  # xyzw -> MuJoCo wxyz
        rows = np.broadcast_to(row, (1, frames, wrist.T_SIZE))
        fingers = np.broadcast_to(finger_quats(hand_coords0), (1, frames, 15, 4))
        settle = np.zeros(frames, np.int64)  # one phase throughout, no wrist error measured
        batch.begin_spans(
            fingers,
            rows,
            phase=settle,
            settle=0,
            floor=-np.inf,
            force_min=cfg.contact_force_min,
            max_linear=np.inf,
            max_angular=np.inf,
        )
        batch.run_span(0, frames, [frame_rows(frames)])
        state = model.state()
        batch.sync_state(0, state)
        return state

    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)  # the wrench reads body poses
    control = model.control()
    ctl = HandController(scene, control)
    ctl.set_finger_targets(finger_quats(hand_coords0))
    zero = np.zeros(3)
    for _ in range(frames):
        for _ in range(cfg.substeps):
            ctl.apply_wrist(s0, hand_coords0[:3], hand_coords0[3:7], vel=zero, omega=zero)
            scene.solver.step(s0, s1, control, None, cfg.dt)
            s0, s1 = s1, s0
    return s0


def config_uses_direct_engine(config: ReplayConfig) -> bool:
    return config.engine is EngineChoice.MUJOCO_C
