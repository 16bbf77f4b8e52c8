"""Add one replay world (manosim hand, object of convex parts, support, ablation filter pairs) to a Newton
``ModelBuilder``. World Z up, gravity -``GRAVITY`` m/s^2, quaternions xyzw."""

from __future__ import annotations

import copy
import logging
import warnings
from functools import lru_cache
from pathlib import Path

import newton
import numpy as np
import warp as wp

from importer_patches.api import add_mjcf
from importer_patches.errors import FreeJointActuatorWarning
from replay.config import GRAVITY, ReplayConfig
from replay.data.mesh_io import shared_mesh
from replay.data.types import ObjectAsset
from replay.errors import DataError, SceneError
from replay.kinematics.hand_layout import BALL_DOFS, MANOSIM_HAND, HandLayout
from replay.sim import finger_strength, physics
from replay.sim.made_mass import made_mass
from replay.sim.object_visual import add_written_visual
from replay.sim.scene_spec import support_box

log = logging.getLogger(__name__)


def load_collision_parts(asset: ObjectAsset) -> list[tuple[np.ndarray, np.ndarray]]:
    """The asset's convex collision parts as (vertices (V, 3) m, faces (F, 3) int) pairs. Raises DataError: a part
    is missing, over the mesh size limit, unreadable or empty (names the file)."""
    if not asset.collision_meshes:
        raise DataError(asset.source, "collision_meshes", f"object {asset.name!r} has no collision parts")
    parts = []
    for p in asset.collision_meshes:  # the process's one parse of each file (its size checked before it is read)
        m = shared_mesh(p, "collision_meshes", asset.source)
        v = np.array(m.vertices, dtype=np.float64)  # the caller's own copies: the shared mesh stays as read
        f = np.array(m.faces, dtype=np.int32)
        if v.shape[0] < 4 or not np.all(np.isfinite(v)):
            raise DataError(p, "vertices", "collision part has fewer than 4 finite vertices")
        parts.append((v, f))
    return parts


def import_hand(builder: newton.ModelBuilder, mjcf: Path):
    """Import the unmodified MJCF at the world origin; the importer's ``FreeJointActuatorWarning`` stays in
    ``report.warnings``, any other warning is logged (WARNING, ``"<Category>: <message>"``)."""
    report, caught = _import_kept(builder, mjcf)
    _say(caught)
    return report


def _import_kept(builder: newton.ModelBuilder, mjcf: Path) -> tuple:
    """``(report, [(category name, message)])``: the import, its warnings but the FreeJointActuatorWarning kept."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = add_mjcf(builder, str(mjcf))
    kept = [
        (w.category.__name__, str(w.message)) for w in caught if not issubclass(w.category, FreeJointActuatorWarning)
    ]
    return report, kept


def _say(caught: list) -> None:
    for category, message in caught:
        log.warning("%s: %s", category, message)


def model_device(config: ReplayConfig) -> str:
    """Warp device the model lives on: ``config.device`` (``"cuda"`` as ``"cuda:0"``)."""
    return "cpu" if config.device == "cpu" else "cuda:0"


def new_builder(config: ReplayConfig) -> newton.ModelBuilder:
    """An empty :class:`newton.ModelBuilder` as every replay model's: Z up, gravity -9.81 m/s^2, MuJoCo's custom
    attributes, the physics' ``contact_gap``."""
    return _new_builder(float(physics.choice_value(config, "contact_gap")))


def _new_builder(contact_gap: float) -> newton.ModelBuilder:
    builder = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=(0.0, 0.0, -GRAVITY))
    newton.solvers.SolverMuJoCo.register_custom_attributes(builder)
    builder.rigid_gap = contact_gap
    return builder


def build_world_model(spec, config: ReplayConfig, solver_attributes: tuple = ()) -> tuple:
    """``(model, info)``: one replay world of ``spec`` (plus ``solver_attributes``' custom attributes), finalized on
    :func:`model_device`. Raises DataError: bad asset; SceneError: the hand import is not as expected."""
    builder, report = hand_builder(config, spec.mjcf, solver_attributes)
    info = add_replay_world(builder, **spec.world_inputs(config), hand=report)
    return builder.finalize(device=model_device(config)), info


#: builders holding nothing but an imported hand, kept per process by :func:`hand_builder`
HAND_CACHE_SIZE = 8


def hand_builder(config: ReplayConfig, mjcf: str | Path, solver_attributes: tuple = ()) -> tuple:
    """``(builder, report)``: deep copies of a builder holding only the hand of ``mjcf`` (indices from 0), imported once
    per process per file version, ``contact_gap`` and solver classes. Raises MJCFError and :func:`import_hand`'s
    errors."""
    path = Path(mjcf)
    try:
        st = path.stat()
        version = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    except OSError:  # the import raises, naming the missing file
        version = (str(path), -1, -1)
    gap = float(physics.choice_value(config, "contact_gap"))
    builder, report, caught = _imported_hand(*version, gap, tuple(solver_attributes))
    _say(caught)
    return copy.deepcopy(builder), copy.deepcopy(report)


@lru_cache(maxsize=HAND_CACHE_SIZE)
def _imported_hand(path_str: str, size: int, mtime_ns: int, contact_gap: float, solver_classes: tuple) -> tuple:
    """``(builder, report, warnings)`` of one hand import, kept as imported."""
    builder = _new_builder(contact_gap)
    for solver_class in solver_classes:
        solver_class.register_custom_attributes(builder)
    report, caught = _import_kept(builder, Path(path_str))
    return builder, report, caught


def add_replay_world(
    builder: newton.ModelBuilder,
    *,
    mjcf: str | Path,
    asset: ObjectAsset,
    object_pos: np.ndarray,
    object_quat: np.ndarray,
    support_height: float,
    hand_coords0: np.ndarray,
    config: ReplayConfig,
    ablation: bool = False,
    support_extent=None,
    hand=None,
) -> dict:
    """Add the hand, object, support (and ablation filter pairs) to ``builder``'s current world.

    Args:
        object_pos: (3,) m, world. object_quat: (4,) xyzw, world. support_height: m.
        hand_coords0: (67,) Newton joint_q order (free pos + quat xyzw, 15 ball quats xyzw).
        support_extent: ``(xmin, ymin, xmax, ymax)`` m of a table-top box; None: a ground plane.
        hand: the import report of the hand ``builder`` holds alone (:func:`hand_builder`); None: import it.

    Returns ``info``: builder indices and values keyed by :class:`replay.sim.scene.Scene` field names (masses kg).
    Raises DataError: bad asset; SceneError: the hand import is not as expected."""
    report, hand = _add_hand(builder, Path(mjcf), hand_coords0, hand)
    obj_body, obj_joint, obj_shapes, parts = _add_object(builder, asset, object_pos, object_quat, config)
    _add_support(builder, support_height, support_extent, config)
    _set_hand_drives(builder, hand["hand_qd_start"], config, Path(mjcf))
    kp, kd = _wrist_gains(report, mjcf, hand["hand_qd_start"])
    gain = float(physics.choice_value(config, "wrist_gain_scale"))
    if ablation:  # filter every hand-object pair BEFORE the solver exists
        _filter_hand_object(builder, hand["hand_shapes"], obj_shapes)
    return dict(
        **hand,
        object_body=obj_body,
        object_q_start=builder.joint_q_start[obj_joint],
        object_qd_start=builder.joint_qd_start[obj_joint],
        object_shapes=np.asarray(obj_shapes),
        wrist_kp=kp * gain,
        wrist_kd=kd * np.sqrt(gain),
        hand_mass=float(sum(builder.body_mass[b] for b in hand["hand_bodies"])),
        object_mass=float(builder.body_mass[obj_body]),
        object_vertices=np.concatenate([v for v, _ in parts]),
        import_report=report,
    )


def _filter_hand_object(builder: newton.ModelBuilder, hand_shapes, object_shapes) -> None:
    """The contact ablation: a collision filter pair for every hand and object shape."""
    for hs in hand_shapes:
        for os_ in object_shapes:
            builder.add_shape_collision_filter_pair(int(hs), int(os_))


def _add_hand(builder: newton.ModelBuilder, mjcf: Path, hand_coords0: np.ndarray, report=None) -> tuple:
    """Import the hand (unless ``report`` is given), check :data:`MANOSIM_HAND`'s layout (SceneError naming the file),
    set its coords. Returns ``(report, {hand_joint, hand_q_start, hand_qd_start, hand_bodies, hand_shapes})``."""
    if report is None:
        j0, b0, s0 = builder.joint_count, builder.body_count, builder.shape_count
        report = import_hand(builder, mjcf)
    else:
        j0 = b0 = s0 = 0
    hand_joints = list(range(j0, builder.joint_count))
    hand_bodies = np.arange(b0, builder.body_count)
    hand_shapes = np.arange(s0, builder.shape_count)
    labels = [builder.body_label[b].split("/")[-1] for b in hand_bodies]
    q0 = builder.joint_q_start[j0]
    qd0 = builder.joint_qd_start[j0]
    layout = HandLayout.from_import(
        str(mjcf),
        [newton.JointType(int(builder.joint_type[j])).name for j in hand_joints],
        labels,
        coord_count=builder.joint_coord_count - q0,
        dof_count=builder.joint_dof_count - qd0,
    )
    if layout != MANOSIM_HAND:
        raise SceneError(
            f"{mjcf}: a hand of {layout.finger_joints} finger joints; the replay drives "
            f"{MANOSIM_HAND.finger_joints} (manosim)"
        )
    builder.joint_q[q0 : q0 + layout.coords] = [float(x) for x in hand_coords0]
    return report, dict(
        hand_joint=j0, hand_q_start=q0, hand_qd_start=qd0, hand_bodies=hand_bodies, hand_shapes=hand_shapes
    )


def _set_hand_drives(builder: newton.ModelBuilder, qd0: int, config: ReplayConfig, mjcf: Path) -> None:
    """Finger DOFs: per-joint effort limit, N·m (``finger_strength.joint_limits``), damping as imported; wrist: none."""
    f0 = qd0 + MANOSIM_HAND.finger_dof_start
    per_joint = finger_strength.joint_limits(config, mjcf)
    for d in range(f0, f0 + MANOSIM_HAND.finger_dofs):
        builder.joint_effort_limit[d] = float(per_joint[(d - f0) // BALL_DOFS])
    for d in range(qd0, f0):
        builder.joint_target_ke[d] = 0.0
        builder.joint_target_kd[d] = 0.0


def _wrist_gains(report, mjcf, qd0: int) -> tuple[np.ndarray, np.ndarray]:
    """The authored wrist gains ``(kp, kd)``, (6,) each (units and frames: ``importer_patches.api.WRIST_FRAMES``).
    Raises SceneError: no or malformed gains for the free joint at DOF ``qd0``."""
    gains = report.wrist_gains
    if not gains or gains.get("dof_start") != qd0:
        raise SceneError(f"{mjcf}: import report has no wrist gains for the free joint at DOF {qd0}: {gains!r}")
    kp = np.asarray(gains["kp"], float)
    kd = np.asarray(gains["kd"], float)
    if kp.shape != (6,) or kd.shape != (6,) or not np.all(np.isfinite(kp)) or not np.all(np.isfinite(kd)):
        raise SceneError(f"wrist gains malformed: kp={kp}, kd={kd}")
    return kp, kd


def _add_object(
    builder: newton.ModelBuilder, asset: ObjectAsset, object_pos, object_quat, config: ReplayConfig
) -> tuple:
    """Add the object: a free body of convex hulls at ``object_pos`` m / ``object_quat`` xyzw, mass kg of
    ``object_mass_model``. Returns ``(body, joint, shapes, parts)``. Raises DataError: an unreadable part or no mass."""
    parts = load_collision_parts(asset)
    obj_xform = wp.transform(wp.vec3(*map(float, object_pos)), wp.quat(*map(float, object_quat)))
    obj_body = builder.add_body(xform=obj_xform, label="object")
    obj_joint = builder.joint_count - 1
    stiff = physics.choice_value(config, "object_shape_stiffness")
    gap = float(physics.choice_value(config, "contact_gap"))
    cfg = newton.ModelBuilder.ShapeConfig(
        density=float(asset.density),
        mu=float(asset.friction[0]),
        mu_torsional=float(asset.friction[1]),
        mu_rolling=float(asset.friction[2]),
        ke=float(stiff["ke"]),
        kd=float(stiff["kd"]),
        gap=gap,
    )
    obj_shapes = []
    for i, (v, f) in enumerate(parts):
        mesh = newton.Mesh(v.astype(np.float32), f.reshape(-1))
        s = builder.add_shape_convex_hull(
            obj_body,
            mesh=mesh,
            cfg=cfg,
            label=f"object_part{i}",
            custom_attributes={"mujoco:condim": int(asset.condim)},
        )
        obj_shapes.append(s)
    if physics.choice_value(config, "object_visual_geoms") == "as_written":  # they collide and weigh
        obj_shapes += add_written_visual(builder, obj_body, asset, gap=gap)
    made = made_mass(asset, config)  # the physics choice object_mass_model: the mass as the object was made
    if made.sets_mass or asset.mass is not None:
        _set_body_mass(builder, obj_body, made.centre_kg if made.sets_mass else float(asset.mass), asset)
    if not builder.body_mass[obj_body] > 0:
        raise DataError(asset.source, "collision_meshes", f"object {asset.name!r} has no mass")
    return obj_body, obj_joint, obj_shapes, parts


def _set_body_mass(builder: newton.ModelBuilder, body: int, mass: float, asset: ObjectAsset) -> None:
    """Scale ``body``'s mass and inertia to ``mass`` kg. Raises DataError: the collision parts have zero volume."""
    m = builder.body_mass[body]
    if not m > 0:
        raise DataError(asset.source, "collision_meshes", "collision parts have zero volume")
    scale = mass / m
    builder.body_mass[body] = mass
    builder.body_inv_mass[body] = 1.0 / mass
    builder.body_inertia[body] = builder.body_inertia[body] * scale
    builder.body_inv_inertia[body] = builder.body_inv_inertia[body] * (1.0 / scale)


def support_shape_values(support_height: float, support_extent, config: ReplayConfig) -> tuple:
    """The support shape as a finalized model holds it: ``(shape_transform (7,) xyzw, shape_scale (3,), radius,
    aabb_lower (3,), aabb_upper (3,))``, float32, m, as newton 1.8.0's ``_finalize_impl`` derives it."""
    builder = _new_builder(float(physics.choice_value(config, "contact_gap")))
    _add_support(builder, support_height, support_extent, config)
    f32 = lambda v: np.asarray(v, np.float32)  # noqa: E731 (the model's dtype)
    scale = f32(builder.shape_scale[0])
    half = scale if builder.shape_type[0] == newton.GeoType.BOX else f32([1.0, 1.0, 1.0])
    return (f32(builder.shape_transform[0]), scale, f32(builder.shape_collision_radius[0]), -half, half.copy())


def _add_support(builder: newton.ModelBuilder, support_height: float, support_extent, config: ReplayConfig) -> None:
    """A ground plane at ``support_height`` m, or with ``support_extent`` ``(xmin, ymin, xmax, ymax)`` m a static box of
    ``config.support_thickness`` whose top is there."""
    mu = float(physics.choice_value(config, "support_contact")["friction"][0])
    ground_cfg = newton.ModelBuilder.ShapeConfig(mu=mu, gap=float(physics.choice_value(config, "contact_gap")))
    if support_extent is None:
        builder.add_ground_plane(height=float(support_height), cfg=ground_cfg)
        return
    centre, (hx, hy, hz) = support_box(support_height, support_extent, config.support_thickness)
    builder.add_shape_box(
        -1,
        xform=wp.transform(wp.vec3(*centre), wp.quat_identity()),
        hx=hx,
        hy=hy,
        hz=hz,
        cfg=ground_cfg,
        label="support",
    )
