"""Build the Newton model and the MuJoCo solver for one replay.

The scene holds the manosim hand (imported unmodified through
:func:`importer_patches.add_mjcf`), the target object (its convex collision parts
only, as a passive free body), a support plane at the recording's table/ground
height and gravity (world Z up, -9.81 m/s^2).

Order matters (Newton bakes model values into ``SolverMuJoCo`` when it is built; see the
manosim-in-Newton report in :mod:`replay.config`): every model edit
(effort limits, damping, collision filters for the ablation) happens before the
final :class:`newton.solvers.SolverMuJoCo` is built, and the values the solver
actually compiled are read back and compared (:func:`replay.diagnostics.check_readback`).

Contact capacity (a full contact buffer drops contacts silently): a probe solver
settles the object and counts the resting contacts; the final capacity
(``nconmax``) is ``headroom`` (6) times that, at least ``contact_capacity_min``.

Quaternions: Newton xyzw everywhere here; MuJoCo's own arrays (wxyz) are only
read inside :mod:`replay.diagnostics`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import newton
import numpy as np
import trimesh
import warp as wp

from importer_patches import FreeJointActuatorWarning, add_mjcf
from replay import diagnostics
from replay.config import GRAVITY, ReplayConfig
from replay.control import HandController
from replay.data.types import ObjectAsset
from replay.engine import Variant, wrist
from replay.engine.mjc import MjcBatch
from replay.errors import DataError, SceneError
from replay.hand_assets import hand_mjcf_path  # noqa: F401 (re-exported: where callers found it)
from replay.hand_layout import MANOSIM_HAND, HandLayout, finger_quats

#: the hand's bodies as named in the manosim MJCF, in Newton body order.
HAND_BODY_NAMES = MANOSIM_HAND.body_names



@dataclass
class Scene:
    """A built replay scene.

    Attributes:
        model: the finalized :class:`newton.Model`.
        solver: the :class:`newton.solvers.SolverMuJoCo` built after every model edit.
        config: the settings it was built from.
        hand_joint: index of the hand's free (wrist) joint.
        hand_q_start / hand_qd_start: first coord / DOF of the hand (67 coords, 51 DOFs).
        hand_bodies: (16,) Newton body indices of ``mano_body_0..15``.
        hand_shapes / object_shapes: Newton shape indices.
        object_body: Newton body index of the target object.
        object_q_start / object_qd_start: its free joint's first coord / DOF.
        support_height: z of the support plane, m.
        wrist_kp / wrist_kd: (6,) wrist PD gains (tx, ty, tz, rx, ry, rz), N/m, N·s/m, N·m/rad, N·m·s/rad.
        hand_mass: total hand mass, kg.
        object_mass: kg.
        object_vertices: (V, 3) collision vertices in the object frame, m (clearance checks).
        contact_capacity: the ``nconmax`` the solver was built with.
        resting_contacts: contacts after the probe's settle (object at rest, hand at its
            first pose): the count the capacity is sized from.
        probe_contacts: [resting, with the hand moved kinematically to its grasp pose].
        ablation: True when hand-object contact pairs are filtered out.
        finger_damping: (45,) passive damping the solver uses on the finger DOFs, N·m·s/rad.
        flutter: per-joint flutter bound records (see :func:`replay.diagnostics.flutter_margins`).
        import_report: whatever ``importer_patches.add_mjcf`` returned.
        build_inputs: the arguments of :func:`add_replay_world` this scene was built
            from (less ``builder``), so that more worlds of it can be built
            (:class:`replay.engine.warp_batch.WarpBatch`).
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
    contact_capacity: int
    resting_contacts: int
    probe_contacts: list
    ablation: bool
    finger_damping: np.ndarray
    flutter: list = field(default_factory=list)
    import_report: object = None
    readback: dict = field(default_factory=dict)
    build_inputs: dict = field(default_factory=dict)

    @property
    def finger_qd_start(self) -> int:
        return self.hand_qd_start + MANOSIM_HAND.finger_dof_start


def load_collision_parts(asset: ObjectAsset) -> list[tuple[np.ndarray, np.ndarray]]:
    """Read the asset's convex collision parts as (vertices (V,3) m, faces (F,3) int) pairs.

    Raises:
        DataError: a part is missing, unreadable or empty (names the file).
    """

    if not asset.collision_meshes:
        raise DataError(asset.source, "collision_meshes", f"object {asset.name!r} has no collision parts")
    parts = []
    for p in asset.collision_meshes:
        try:
            m = trimesh.load(p, force="mesh")
        except Exception as e:  # trimesh raises many types
            raise DataError(p, None, f"cannot read collision mesh: {e}") from e
        v = np.asarray(m.vertices, dtype=np.float64)
        f = np.asarray(m.faces, dtype=np.int32)
        if v.shape[0] < 4 or not np.all(np.isfinite(v)):
            raise DataError(p, "vertices", "collision part has fewer than 4 finite vertices")
        parts.append((v, f))
    return parts


def _import_hand(builder: newton.ModelBuilder, mjcf: Path):
    """Import the unmodified MJCF at the world origin (the pose is set through joint_q).

    The importer's :class:`~importer_patches.FreeJointActuatorWarning` (manosim's six
    wrist actuators target what Newton makes a free joint) is expected here: the
    replay drives the wrist with a wrench built from ``report.wrist_gains`` instead.
    It is kept in ``report.warnings`` (and in every rollout's ``import_warnings``)
    and said once per study by :func:`replay.study.run_study`, not once per scene.
    Any other import warning is re-issued.
    """


    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = add_mjcf(builder, str(mjcf))
    for w in caught:
        if not issubclass(w.category, FreeJointActuatorWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return report


def model_device(config: ReplayConfig) -> str:
    """Warp device the model lives on: ``"cpu"`` for the MuJoCo C backend and for
    mujoco-warp on Warp's CPU device (``config.device == "warp-cpu"``), else ``"cuda:0"``."""
    return "cpu" if config.device in ("cpu", "warp-cpu") else "cuda:0"


def new_builder(config: ReplayConfig) -> newton.ModelBuilder:
    """An empty :class:`newton.ModelBuilder` set up as every replay model is: Z up,
    gravity -9.81 m/s^2, MuJoCo's custom attributes registered, geom gap from the config."""
    builder = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=(0.0, 0.0, -GRAVITY))
    newton.solvers.SolverMuJoCo.register_custom_attributes(builder)
    builder.rigid_gap = float(config.contact_gap)
    return builder


def build_model(
    mjcf: str | Path,
    asset: ObjectAsset,
    object_pos: np.ndarray,
    object_quat: np.ndarray,
    support_height: float,
    hand_coords0: np.ndarray,
    config: ReplayConfig,
    ablation: bool = False,
    support_extent=None,
):
    """Build (but do not simulate) the replay model: one world (:func:`add_replay_world`)
    in a fresh builder (:func:`new_builder`), finalized on :func:`model_device`.

    Returns:
        ``(model, info)`` where ``info`` holds the indices :class:`Scene` needs.

    Raises:
        DataError: bad asset; SceneError: the hand import is not as expected.
    """
    builder = new_builder(config)
    info = add_replay_world(builder, mjcf, asset, object_pos, object_quat, support_height, hand_coords0, config,
                            ablation, support_extent)
    model = builder.finalize(device=model_device(config))
    return model, info


def add_replay_world(
    builder: newton.ModelBuilder,
    mjcf: str | Path,
    asset: ObjectAsset,
    object_pos: np.ndarray,
    object_quat: np.ndarray,
    support_height: float,
    hand_coords0: np.ndarray,
    config: ReplayConfig,
    ablation: bool = False,
    support_extent=None,
) -> dict:
    """Add the replay's hand, object, support (and ablation filter pairs) to ``builder``.

    Everything lands in the builder's current world (global, or the one opened by
    ``builder.begin_world()``); a builder holding one replay world can be copied N
    times to another with ``ModelBuilder.replicate`` (:mod:`replay.engine.warp_batch`).

    Args:
        mjcf: manosim hand MJCF (unmodified).
        asset: the target object's geometry.
        object_pos: (3,) initial object position, world, m.
        object_quat: (4,) initial object orientation, world, xyzw.
        support_height: z of the support plane, m.
        hand_coords0: (67,) initial hand coords in Newton joint_q order
            (free: pos xyz + quat xyzw; then 15 ball quats xyzw).
        config: settings.
        ablation: filter every hand-object shape pair (the hand passes through).
        support_extent: ``(xmin, ymin, xmax, ymax)`` of a table top, m (a box of
            ``support_thickness`` below ``support_height``), or None for an infinite
            ground plane at ``support_height``.

    Returns:
        ``info``: the builder indices :class:`Scene` needs (absolute in ``builder``).

    Raises:
        DataError: bad asset; SceneError: the hand import is not as expected.
    """
    # --- hand --------------------------------------------------------------------
    j0, b0, s0 = builder.joint_count, builder.body_count, builder.shape_count
    report = _import_hand(builder, Path(mjcf))
    hand_joints = list(range(j0, builder.joint_count))
    hand_bodies = np.arange(b0, builder.body_count)
    hand_shapes = np.arange(s0, builder.shape_count)
    labels = [builder.body_label[b].split("/")[-1] for b in hand_bodies]
    q0 = builder.joint_q_start[j0]
    qd0 = builder.joint_qd_start[j0]
    layout = HandLayout.from_import(str(mjcf), [newton.JointType(int(builder.joint_type[j])).name for j in hand_joints], labels,
                                    builder.joint_coord_count - q0, builder.joint_dof_count - qd0)
    if layout != MANOSIM_HAND:
        raise SceneError(f"{mjcf}: a hand of {layout.finger_joints} finger joints; the replay drives "
                         f"{MANOSIM_HAND.finger_joints} (manosim)")
    builder.joint_q[q0 : q0 + layout.coords] = [float(x) for x in hand_coords0]

    # finger drives: effort limit per DOF (config.effort_limit, 0.4 N·m by default); passive damping override
    f0 = qd0 + layout.finger_dof_start
    for d in range(f0, f0 + layout.finger_dofs):
        builder.joint_effort_limit[d] = float(config.effort_limit)
        if config.finger_damping is not None:
            builder.joint_damping[d] = float(config.finger_damping)
    # wrist: driven by joint_f only
    for d in range(qd0, f0):
        builder.joint_target_ke[d] = 0.0
        builder.joint_target_kd[d] = 0.0

    gains = report.wrist_gains
    if not gains or gains.get("dof_start") != qd0:
        raise SceneError(f"{mjcf}: import report has no wrist gains for the free joint at DOF {qd0}: {gains!r}")
    kp = np.asarray(gains["kp"], float)
    kd = np.asarray(gains["kd"], float)
    if kp.shape != (6,) or kd.shape != (6,) or not np.all(np.isfinite(kp)) or not np.all(np.isfinite(kd)):
        raise SceneError(f"wrist gains malformed: kp={kp}, kd={kd}")

    # --- object ---------------------------------------------------------------------
    parts = load_collision_parts(asset)
    obj_xform = wp.transform(wp.vec3(*map(float, object_pos)), wp.quat(*map(float, object_quat)))
    obj_body = builder.add_body(xform=obj_xform, label="object")
    obj_joint = builder.joint_count - 1
    cfg = newton.ModelBuilder.ShapeConfig(
        density=float(asset.density),
        mu=float(asset.friction[0]),
        mu_torsional=float(asset.friction[1]),
        mu_rolling=float(asset.friction[2]),
        ke=float(config.object_ke),
        kd=float(config.object_kd),
        gap=float(config.contact_gap),
    )
    obj_shapes = []
    for i, (v, f) in enumerate(parts):
        mesh = newton.Mesh(v.astype(np.float32), f.reshape(-1))
        s = builder.add_shape_convex_hull(
            obj_body, mesh=mesh, cfg=cfg, label=f"object_part{i}",
            custom_attributes={"mujoco:condim": int(asset.condim)},
        )
        obj_shapes.append(s)
    if asset.mass is not None:
        m = builder.body_mass[obj_body]
        if not m > 0:
            raise DataError(asset.source, "collision_meshes", "collision parts have zero volume")
        scale = float(asset.mass) / m
        builder.body_mass[obj_body] = float(asset.mass)
        builder.body_inv_mass[obj_body] = 1.0 / float(asset.mass)
        builder.body_inertia[obj_body] = builder.body_inertia[obj_body] * scale
        builder.body_inv_inertia[obj_body] = builder.body_inv_inertia[obj_body] * (1.0 / scale)
    if not builder.body_mass[obj_body] > 0:
        raise DataError(asset.source, "collision_meshes", f"object {asset.name!r} has no mass")

    # --- support ----------------------------------------------------------------------
    ground_cfg = newton.ModelBuilder.ShapeConfig(mu=float(config.support_friction), gap=float(config.contact_gap))
    if support_extent is None:
        builder.add_ground_plane(height=float(support_height), cfg=ground_cfg)
    else:
        x0, y0, x1, y1 = map(float, support_extent)
        hz = 0.5 * float(config.support_thickness)
        center = wp.vec3(0.5 * (x0 + x1), 0.5 * (y0 + y1), float(support_height) - hz)
        builder.add_shape_box(-1, xform=wp.transform(center, wp.quat_identity()), hx=0.5 * (x1 - x0),
                              hy=0.5 * (y1 - y0), hz=hz, cfg=ground_cfg, label="support")

    # --- ablation: filter every hand-object pair BEFORE the solver exists ---------------
    if ablation:
        for hs in hand_shapes:
            for os_ in obj_shapes:
                builder.add_shape_collision_filter_pair(int(hs), int(os_))

    info = dict(
        hand_joint=j0, hand_q_start=q0, hand_qd_start=qd0, hand_bodies=hand_bodies,
        hand_shapes=hand_shapes, object_body=obj_body, object_q_start=builder.joint_q_start[obj_joint],
        object_qd_start=builder.joint_qd_start[obj_joint], object_shapes=np.asarray(obj_shapes),
        wrist_kp=kp * config.wrist_gain_scale, wrist_kd=kd * np.sqrt(config.wrist_gain_scale),
        hand_mass=float(sum(builder.body_mass[b] for b in hand_bodies)),
        object_mass=float(builder.body_mass[obj_body]),
        object_vertices=np.concatenate([v for v, _ in parts]),
        import_report=report,
    )
    return info


def make_solver(model: newton.Model, config: ReplayConfig, nconmax: int | None, **extra):
    """Construct :class:`newton.solvers.SolverMuJoCo` with the config's options.

    CPU: MuJoCo's C backend with its own collision detection (``use_mujoco_cpu=True``);
    CUDA: mujoco-warp. ``nconmax`` is the contact capacity (per world).
    """
    kwargs = dict(
        solver=config.solver, integrator=config.integrator, cone=config.cone, impratio=config.impratio,
        iterations=config.iterations, ls_iterations=config.ls_iterations, tolerance=config.tolerance,
        use_mujoco_cpu=config.device == "cpu", nconmax=nconmax, enable_multiccd=bool(config.multiccd), **extra,
    )
    if nconmax is not None and config.device != "cpu":
        # elliptic cone: condim rows per contact (<= 4 here) + joint rows
        kwargs["njmax"] = int(nconmax * 4 + 64)
    return newton.solvers.SolverMuJoCo(model, **kwargs)


def build_scene(
    mjcf: str | Path,
    asset: ObjectAsset,
    object_pos: np.ndarray,
    object_quat: np.ndarray,
    support_height: float,
    hand_coords0: np.ndarray,
    grasp_coords: np.ndarray,
    commanded_finger_quats: np.ndarray,
    config: ReplayConfig,
    ablation: bool = False,
    support_extent=None,
) -> Scene:
    """Build model, measure contacts and mass matrix with a probe solver, edit, build the solver.

    Args:
        mjcf, asset, object_pos, object_quat, support_height, hand_coords0, config, ablation:
            see :func:`build_model`.
        grasp_coords: (67,) hand coords at the grasp frame (contact-count probe).
        commanded_finger_quats: (T, 15, 4) every finger target the rollout will command,
            xyzw (flutter bound: largest angle per joint).

    Returns:
        The :class:`Scene`.

    Raises:
        SceneError: read-back mismatch (a set value did not reach the solver).
    """

    model, info = build_model(mjcf, asset, object_pos, object_quat, support_height, hand_coords0, config, ablation,
                              support_extent)
    hq, hqd = info["hand_q_start"], info["hand_qd_start"]

    # --- probe solver: settle the object with the hand held at its first pose and
    # count the resting contacts; count again with the hand at its grasp pose; mass
    # matrix at the grasp pose (flutter bound). Nothing here edits the model yet.
    probe = make_solver(model, config, None)
    scene = Scene(
        model=model, solver=probe, config=config,
        hand_joint=info["hand_joint"], hand_q_start=hq, hand_qd_start=hqd,
        hand_bodies=info["hand_bodies"], hand_shapes=info["hand_shapes"],
        object_body=info["object_body"], object_q_start=info["object_q_start"],
        object_qd_start=info["object_qd_start"], object_shapes=info["object_shapes"],
        support_height=float(support_height), wrist_kp=info["wrist_kp"], wrist_kd=info["wrist_kd"],
        hand_mass=info["hand_mass"], object_mass=info["object_mass"], object_vertices=info["object_vertices"],
        contact_capacity=0, resting_contacts=0, probe_contacts=[], ablation=ablation,
        finger_damping=np.zeros(MANOSIM_HAND.finger_dofs), import_report=info["import_report"],
        build_inputs=dict(mjcf=mjcf, asset=asset, object_pos=np.asarray(object_pos, float).copy(),
                          object_quat=np.asarray(object_quat, float).copy(), support_height=float(support_height),
                          hand_coords0=np.asarray(hand_coords0, float).copy(), config=config, ablation=ablation,
                          support_extent=support_extent),
    )
    settled = _probe_settle(scene, hand_coords0)
    resting = diagnostics.count_contacts(probe, model, settled)
    q = settled.joint_q.numpy().copy()
    q[hq : hq + MANOSIM_HAND.coords] = grasp_coords
    settled.joint_q.assign(q)
    settled.joint_qd.zero_()
    newton.eval_fk(model, settled.joint_q, settled.joint_qd, settled)
    at_grasp = diagnostics.count_contacts(probe, model, settled)
    inertia = diagnostics.dof_inertia(probe, model, settled)  # (ndof,) incl. armature
    kd_resolved = model.joint_target_kd.numpy().copy()

    if config.contact_capacity is not None:
        capacity = int(config.contact_capacity)
    else:
        capacity = int(max(config.contact_capacity_min, math.ceil(config.contact_headroom * resting)))

    # --- flutter bound per finger joint; raise passive damping where short ----------
    damping = model.joint_damping.numpy().copy()
    ke = model.joint_target_ke.numpy()
    flutter = diagnostics.flutter_margins(
        commanded_finger_quats, inertia[hqd + 6 : hqd + 51], ke[hqd + 6 : hqd + 51],
        damping[hqd + 6 : hqd + 51], kd_resolved[hqd + 6 : hqd + 51], config,
    )
    changed = False
    for rec in flutter:
        if rec["raised_to"] is not None:
            for k in range(3):
                damping[hqd + 6 + 3 * rec["joint"] + k] = rec["raised_to"]
            changed = True
    if changed:
        model.joint_damping.assign(damping)

    # --- the solver the rollout uses, with every edit in it; then read back ---------
    if config_uses_direct_engine(config):
        # MuJoCo C grows its contact arena itself (nconmax only limits Newton's contact
        # export, which the direct engine does not use), so the probe's compiled model
        # serves: the damping edit reaches it through Newton's notify_model_changed,
        # and the read-back below proves it arrived
        if changed:
            probe.notify_model_changed(newton.ModelFlags.JOINT_DOF_FORCE_PROPERTIES)
        scene.solver = probe
    else:
        del probe  # mujoco-warp sizes its buffers from nconmax: compile again with the capacity
        scene.solver = make_solver(model, config, capacity)
    scene.contact_capacity = capacity
    scene.resting_contacts = int(resting)
    scene.probe_contacts = [int(resting), int(at_grasp)]
    scene.finger_damping = damping[hqd + 6 : hqd + 51].copy()
    scene.flutter = flutter
    scene.readback = diagnostics.check_readback(scene)
    return scene


def _probe_settle(scene: Scene, hand_coords0: np.ndarray):
    """Step ``scene.solver`` for ``settle_s`` holding the hand at ``hand_coords0``; return the state.

    CPU: the direct engine (:class:`replay.engine.mjc.MjcBatch`, no contact limit);
    CUDA: ``SolverMuJoCo.step`` with the wrist wrench of :class:`replay.control.HandController`.
    """
    cfg, model = scene.config, scene.model
    frames = max(1, int(round(cfg.settle_s * cfg.control_fps)))
    hand_coords0 = np.asarray(hand_coords0, float)
    if config_uses_direct_engine(cfg):

        batch = MjcBatch(scene, [Variant(ablation=scene.ablation)], capacity=1 << 30)
        row = np.zeros((1, wrist.T_SIZE))
        row[0, :3] = hand_coords0[:3]
        row[0, 3:7] = hand_coords0[[6, 3, 4, 5]]  # xyzw -> MuJoCo wxyz
        fingers = finger_quats(hand_coords0)[None]
        for _ in range(frames):
            batch.step_frame(fingers, row, row)
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
    """True when rollouts of ``config`` step MuJoCo C directly (CPU, ``engine="direct"``)."""
    return config.device == "cpu" and config.engine == "direct"


def build_hand_only(
    mjcf: str | Path,
    coords: np.ndarray,
    config: ReplayConfig,
    gravity: bool = True,
    drives: bool = True,
    finger_damping: float | None = None,
    finger_kd: float | None = None,
):
    """The hand alone (no object, no support) at ``coords``, for drive/stability checks.

    Args:
        mjcf: manosim MJCF. coords: (67,) Newton joint_q order, xyzw.
        gravity: -9.81 m/s^2 along Z, or none.
        drives: False sets every finger kp and kd to 0 (no actuator force).
        finger_damping: override passive finger damping, N·m·s/rad (None: as imported).
        finger_kd: override the finger drive damping, N·m·s/rad (None: dampratio-resolved).

    Returns:
        ``(model, report)``; finger targets in ``model.joint_target_q`` are ``coords``.
    """
    builder = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=(0.0, 0.0, -GRAVITY if gravity else 0.0))
    newton.solvers.SolverMuJoCo.register_custom_attributes(builder)
    builder.rigid_gap = float(config.contact_gap)
    report = _import_hand(builder, Path(mjcf))
    qd0 = report.dof_start
    builder.joint_q[report.coord_start : report.coord_start + MANOSIM_HAND.coords] = [float(x) for x in coords]
    builder.joint_target_q[report.coord_start : report.coord_start + 67] = [float(x) for x in coords]
    for d in range(qd0 + 6, qd0 + 51):
        builder.joint_effort_limit[d] = float(config.effort_limit)
        if not drives:
            builder.joint_target_ke[d] = 0.0
            builder.joint_target_kd[d] = 0.0
        else:
            if finger_kd is not None:
                builder.joint_target_kd[d] = float(finger_kd)
        if finger_damping is not None:
            builder.joint_damping[d] = float(finger_damping)
    model = builder.finalize(device=model_device(config))
    return model, report
