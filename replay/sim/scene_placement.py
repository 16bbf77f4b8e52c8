"""A built scene moved to another recording's placement without a rebuild, in Newton and the compiled ``MjModel``: a
fresh build's model bit for bit (docs/engine.md, "Where a worker's time goes"). Newton xyzw, MuJoCo wxyz, m."""

from __future__ import annotations

import dataclasses

import mujoco
import newton
import numpy as np

from replay.errors import SceneError
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.sim.engine.layout import MjLayout
from replay.sim.world_builder import support_shape_values


def _xyzw_to_wxyz(q) -> np.ndarray:
    q = np.asarray(q, np.float64)
    return np.array([q[3], q[0], q[1], q[2]])


def _support_shape(model: newton.Model) -> int:
    """The Newton index of the one static shape (the support), or SceneError."""
    static = np.flatnonzero(model.shape_body.numpy() == -1)
    if len(static) != 1:
        raise SceneError(f"expected one static shape (the support), found {len(static)}")
    return int(static[0])


def _place_newton(scene, spec, shape: int) -> None:
    """Write ``spec``'s placement into ``scene.model``, float32 as the builder does."""
    model = scene.model
    q = model.joint_q.numpy()
    q[scene.hand_q_start : scene.hand_q_start + MANOSIM_HAND.coords] = spec.hand_coords0
    pose = np.concatenate([spec.object_pos, spec.object_quat]).astype(np.float32)
    q[scene.object_q_start : scene.object_q_start + 7] = pose
    model.joint_q.assign(q)
    body_q = model.body_q.numpy()
    body_q[scene.object_body] = pose
    model.body_q.assign(body_q)
    xform, scale, radius, lower, upper = support_shape_values(spec.support_height, spec.support_extent, scene.config)
    for name, value in (
        ("shape_transform", xform),
        ("shape_scale", scale),
        ("shape_collision_radius", radius),
        ("shape_collision_aabb_lower", lower),
        ("shape_collision_aabb_upper", upper),
    ):
        arr = getattr(model, name)
        a = arr.numpy()
        a[shape] = value
        arr.assign(a)
    if getattr(model, "bvh_shapes", None) is not None:
        model.bvh_refit_shapes(model.state())


def _converter_size(scale: np.ndarray) -> np.ndarray:
    """Newton 1.8.0's converter geom size for ``scale`` (zeros take the first nonzero entry; all zero: 5 m)."""
    size = np.asarray(scale, np.float64).copy()
    if np.any(size > 0.0):
        size[size == 0.0] = size[size > 0.0][0]
        return size
    return np.array([5.0, 5.0, 5.0])


def _compiled_placement(model: newton.Model, m: mujoco.MjModel, obj_body: int, shape: int, support_geom: int):
    """MuJoCo's own compile of the placed object body and support geom."""
    spec = mujoco.MjSpec()
    bq = model.body_q.numpy()[obj_body]
    body = spec.worldbody.add_body(
        pos=np.asarray(bq[:3], np.float64),
        quat=_xyzw_to_wxyz(bq[3:7]),
        mass=1.0,
        inertia=[1.0, 1.0, 1.0],
        explicitinertial=True,
    )
    body.add_freejoint()
    tf = model.shape_transform.numpy()[shape]
    spec.worldbody.add_geom(
        type=mujoco.mjtGeom(int(m.geom_type[support_geom])),
        pos=np.asarray(tf[:3], np.float64),
        quat=_xyzw_to_wxyz(tf[3:7]),
        size=_converter_size(model.shape_scale.numpy()[shape]),
    )
    return spec.compile()


def place_scene(scene, spec):
    """Move probe-stage ``scene`` to ``spec``'s placement in place; SceneError: not one object body and support."""
    model, m = scene.model, scene.solver.mj_model
    shape = _support_shape(model)
    world = np.flatnonzero(m.geom_bodyid == 0)
    if len(world) != 1 or m.body_bvhnum[0] != 1:
        raise SceneError(f"expected one geom on MuJoCo's world body (the support), found {len(world)}")
    _place_newton(scene, spec, shape)
    lay = MjLayout.from_scene(scene)
    b, g, adr = lay.object_body, int(world[0]), int(m.jnt_qposadr[m.body_jntadr[lay.object_body]])
    tiny = _compiled_placement(model, m, scene.object_body, shape, g)
    m.body_pos[b], m.body_quat[b] = tiny.body_pos[1], tiny.body_quat[1]
    bq = np.asarray(model.body_q.numpy()[scene.object_body], np.float64)  # as newton 1.8.0's sync_qpos0_kernel
    m.qpos0[adr : adr + 7] = m.qpos_spring[adr : adr + 7] = np.concatenate([bq[:3], _xyzw_to_wxyz(bq[3:7])])
    for name in ("geom_pos", "geom_quat", "geom_size", "geom_aabb", "geom_rbound"):
        getattr(m, name)[g] = getattr(tiny, name)[0]
    m.bvh_aabb[m.body_bvhadr[0]] = tiny.bvh_aabb[tiny.body_bvhadr[0]]
    canonical = getattr(scene.solver, "_canonical_bvh_aabb", None)  # newton 1.8.0 re-expresses midphase boxes
    if canonical is not None:  # from this copy when a body's inertial frame is notified as changed
        canonical[m.body_bvhadr[0]] = m.bvh_aabb[m.body_bvhadr[0]]
    mujoco.mj_setConst(m, scene.solver.mj_data)
    return dataclasses.replace(scene, support_height=spec.support_height, build_inputs=spec.world_inputs(scene.config))
