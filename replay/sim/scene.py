"""Build the Newton model and the MuJoCo solver for one replay.

The scene holds the manosim hand (imported unmodified through
:func:`importer_patches.add_mjcf`), the target object (its convex collision parts
only, as a passive free body), a support plane at the recording's table/ground
height and gravity (world Z up, -9.81 m/s^2); :mod:`replay.sim.world_builder` adds them
to the builder.

Order matters (Newton bakes model values into ``SolverMuJoCo`` when it is built; see the
manosim-in-Newton report in :mod:`replay.config`): every model edit
(effort limits, damping, collision filters for the ablation) happens before the
final :class:`newton.solvers.SolverMuJoCo` is built, and the values the solver
actually compiled are read back and compared (:func:`replay.sim.silent_failures.check_readback`).

Contact capacity (a full contact buffer drops contacts silently): a probe solver
settles the object and counts the resting contacts; the final capacity
(``nconmax``) is ``headroom`` (6) times that, at least ``contact_capacity_min``.

Quaternions: Newton xyzw everywhere here; MuJoCo's own arrays (wxyz) are only
read inside :mod:`replay.sim.silent_failures` (through :mod:`replay.sim.solver_view`).
"""

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
    """A built replay scene (frozen: every field is known when it is constructed).

    :func:`build_scene` constructs it twice: first for the probe (the probe solver, and the
    probe's results at their "not measured" defaults), then with ``dataclasses.replace``
    once the probe has measured them and the final solver exists.

    Attributes:
        model: the finalized :class:`newton.Model`.
        solver: the :class:`newton.solvers.SolverMuJoCo` built after every model edit.
        config: the settings it was built from.
        hand_joint: index of the hand's free (wrist) joint.
        hand_q_start / hand_qd_start: first coord / DOF of the hand (``MANOSIM_HAND.coords`` coords,
            ``MANOSIM_HAND.dofs`` DOFs).
        hand_bodies: (``MANOSIM_HAND.bodies``,) Newton body indices of ``mano_body_0..15``.
        hand_shapes / object_shapes: Newton shape indices.
        object_body: Newton body index of the target object.
        object_q_start / object_qd_start: its free joint's first coord / DOF.
        support_height: z of the support plane, m.
        wrist_kp / wrist_kd: (6,) wrist PD gains (tx, ty, tz, rx, ry, rz), N/m, N·s/m, N·m/rad, N·m·s/rad.
        hand_mass: total hand mass, kg.
        object_mass: kg.
        object_vertices: (V, 3) collision vertices in the object frame, m (clearance checks).
        ablation: True when hand-object contact pairs are filtered out.
        import_report: whatever ``importer_patches.add_mjcf`` returned.
        build_inputs: the arguments of :func:`replay.sim.world_builder.add_replay_world` this scene was built
            from (less ``builder``), so that more worlds of it can be built
            (:class:`replay.sim.engine.mjwarp.warp_batch.WarpBatch`).
        contact_capacity: the ``nconmax`` the solver was built with (0 in the probe stage).
        resting_contacts: contacts after the probe's settle (object at rest, hand at its
            first pose): the count the capacity is sized from.
        probe_contacts: [resting, with the hand moved kinematically to its grasp pose].
        finger_damping: (``MANOSIM_HAND.finger_dofs``,) passive damping the solver uses on the
            finger DOFs, N·m·s/rad (None in the probe stage).
        flutter: per-joint flutter bound records (see :func:`replay.sim.silent_failures.flutter_margins`).
        readback: what :func:`replay.sim.silent_failures.check_readback` read from the final solver.
    """

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
    """Build (but do not simulate) the replay model of ``spec``
    (:func:`replay.sim.world_builder.build_world_model`).

    Returns:
        ``(model, info)`` where ``info`` holds the indices :class:`Scene` needs.

    Raises:
        DataError: bad asset; SceneError: the hand import is not as expected.
    """
    return build_world_model(spec, config)


def probe_scene(spec: SceneSpec, config: ReplayConfig, model, info: dict, solver) -> Scene:
    """The probe stage's :class:`Scene` of ``spec`` (shared by every scene builder): ``model`` and
    ``info`` from :func:`replay.sim.world_builder.build_world_model`, the probe ``solver``, the
    probe's results at their "not measured" defaults."""
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
    return slice(info["hand_qd_start"] + MANOSIM_HAND.finger_dof_start, info["hand_qd_start"] + MANOSIM_HAND.dofs)


def make_solver(model: newton.Model, config: ReplayConfig, nconmax: int | None, **extra):
    """Construct :class:`newton.solvers.SolverMuJoCo` with the config's options.

    CPU: MuJoCo's C backend with its own collision detection (``use_mujoco_cpu=True``);
    CUDA: mujoco-warp. ``nconmax`` is the contact capacity (per world).
    """
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
    """Build model, measure contacts and mass matrix with a probe solver, edit, build the solver:
    :func:`finish_scene` of :func:`compile_scene`.

    Args:
        spec: what the scene is built from (:class:`replay.sim.scene_spec.SceneSpec`); its
            ``grasp_coords`` (contact-count probe) and ``commanded_finger_quats`` (flutter bound:
            largest angle per joint) are required here.
        config: settings.

    Returns:
        The :class:`Scene`.

    Raises:
        ReadbackError: read-back mismatch (a set value did not reach the solver).
        SceneError: the hand import is not as expected. DataError: bad asset.
    """
    return finish_scene(compile_scene(spec, config), spec)


def compile_scene(spec: SceneSpec, config: ReplayConfig) -> Scene:
    """The probe stage of :func:`build_scene`: the finalized Newton model and the probe solver (the
    compiled ``MjModel``), nothing measured or edited yet. What it costs (Newton's ``finalize``, the
    conversion and MuJoCo's compile) is what :mod:`replay.sim.scene_cache` keeps per object.

    Raises:
        SceneError: the hand import is not as expected. DataError: bad asset.
    """
    model, info = build_model(spec, config)
    return probe_scene(spec, config, model, info, make_solver(model, config, None))


def finish_scene(probe: Scene, spec: SceneSpec) -> Scene:
    """The rest of :func:`build_scene` on a probe-stage scene of ``spec``'s placement: the probe
    (resting contacts, contacts and mass matrix at the grasp), the contact capacity, the flutter
    damping, the final solver, the read-back and the object's contact settings.

    Raises:
        ReadbackError: read-back mismatch (a set value did not reach the solver).
    """
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
    fd = slice(probe.finger_qd_start, hqd + MANOSIM_HAND.dofs)
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
    """Measure with the probe solver ``scene.solver``: settle the object with the hand held at its
    first pose and count the resting contacts; count again with the hand moved kinematically to
    ``grasp_coords``; the mass-matrix diagonal there (flutter bound).

    Returns:
        ``(resting, at_grasp, inertia)``: contact counts and the (joint_dof_count,) mass-matrix
        diagonal incl. armature, kg or kg·m^2 (:func:`replay.sim.silent_failures.dof_inertia`).
    """
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
    """Flutter bound per finger joint (:func:`replay.sim.silent_failures.flutter_margins`); raise the model's
    passive damping (N·m·s/rad) on the three DOFs of every joint where it is short (not with
    ``finger_drive="quat"``, which is not a per-axis position drive).

    Returns:
        ``(damping, flutter, changed)``: the model's (joint_dof_count,) passive damping after the
        edit, the per-joint records, and whether ``model.joint_damping`` was changed.
    """
    fd = slice(hqd + MANOSIM_HAND.finger_dof_start, hqd + MANOSIM_HAND.dofs)
    damping = model.joint_damping.numpy().copy()
    ke = model.joint_target_ke.numpy()
    flutter = diagnostics.flutter_margins(
        commanded_finger_quats, inertia[fd], ke[fd], damping[fd], kd_resolved[fd], config
    )
    changed = False
    if physics.choice_value(config, "finger_flutter_damping") == "as_authored":  # measured, never raised
        return damping, [dict(rec, raised_to=None) for rec in flutter], False
    if config.finger_drive == "quat":  # the quaternion drive has no flutter bound: damping stays as imported
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
    """The solver the rollout uses, with every model edit in it.

    Direct engine (MuJoCo C): MuJoCo C grows its contact arena itself (``nconmax`` only limits
    Newton's contact export, which the direct engine does not use), so the probe's compiled model
    serves: the damping edit reaches it through Newton's ``notify_model_changed`` (and the
    read-back proves it arrived). Otherwise mujoco-warp sizes its buffers from ``nconmax``: a new
    solver compiled with ``capacity``.
    """
    if config_uses_direct_engine(config):
        if changed:
            probe.notify_model_changed(newton.ModelFlags.JOINT_DOF_FORCE_PROPERTIES)
        return probe
    return make_solver(model, config, capacity)


def _probe_settle(scene: Scene, hand_coords0: np.ndarray):
    """Step ``scene.solver`` for ``settle_s`` holding the hand at ``hand_coords0``; return the state.

    MuJoCo C: one span of the direct engine (:class:`replay.sim.engine.mujoco_c.mjc.MjcBatch`, no contact
    limit, no runaway limit); otherwise ``SolverMuJoCo.step`` with the wrist wrench of
    :class:`replay.sim.control.HandController`.
    """
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
        batch.begin_spans(fingers, rows, settle, 0, -np.inf, cfg.contact_force_min, np.inf, np.inf)
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
            ctl.apply_wrist(s0, hand_coords0[:3], hand_coords0[3:7], zero, zero)
            scene.solver.step(s0, s1, control, None, cfg.dt)
            s0, s1 = s1, s0
    return s0


def config_uses_direct_engine(config: ReplayConfig) -> bool:
    """True when rollouts of ``config`` step MuJoCo C directly (engine mujoco-c)."""
    return config.engine is EngineChoice.MUJOCO_C
