"""The N-world model of a :class:`~replay.sim.engine.mjwarp.warp_batch.WarpBatch`: the scene's world replicated per
:class:`~replay.sim.engine.variants.Variant`, edited before ``finalize``, read back after (docs/gpu.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from replay.errors import EngineError
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.variants import Variant
from replay.sim.engine.world import WorldStatus
from replay.sim.world_builder import add_replay_world, new_builder


@dataclass(kw_only=True)
class WarpWorld(WorldStatus):
    """One world of a batch (``readback``: ``object_friction``, ``finger_forcerange`` N·m, ``object_mass`` kg) and
    where its bodies, shapes and DOFs start."""

    index: int = 0
    offsets: dict = field(default_factory=dict)


def finger_limits(scene, layout: MjLayout, v: Variant) -> np.ndarray:
    """(45,) float32 upper force range, N·m, per finger actuator of world ``v``: the scene's per-joint limits, or
    ``v.effort_limit``, times ``v.effort_scale``."""
    eff = scene.model.joint_effort_limit.numpy()
    lim = eff[int(scene.finger_qd_start) + 3 * layout.finger_joint + layout.finger_axis].astype(np.float64)
    if v.effort_limit is not None:
        lim = np.full(len(layout.finger_act), float(v.effort_limit))
    if v.effort_scale is not None:
        lim = lim * float(v.effort_scale)
    return np.float32(lim).astype(np.float64)


def _world_expected(scene, layout: MjLayout, v: Variant) -> dict:
    """What world ``v`` must hold: object friction, finger force ranges (45,) N·m, object mass kg."""
    mu = scene.model.shape_material_mu.numpy()[np.asarray(scene.object_shapes, int)]
    return {
        "object_friction": float(v.friction) if v.friction is not None else float(mu[0]),
        "finger_forcerange": finger_limits(scene, layout, v),
        "object_mass": float(v.object_mass) if v.object_mass is not None else float(scene.object_mass),
    }


def _replay_world(scene):
    """``(builder, info)``: the scene's world rebuilt, damping kept; EngineError: no build inputs, other counts."""
    args = dict(scene.build_inputs)
    if not args:
        raise EngineError(
            "the scene carries no build_inputs (built before replay.sim.world_builder.add_replay_world existed?)"
        )
    wb = new_builder(scene.config)
    info = add_replay_world(wb, **args)
    if (wb.body_count, wb.shape_count, wb.joint_dof_count) != (
        scene.model.body_count,
        scene.model.shape_count,
        scene.model.joint_dof_count,
    ):
        raise EngineError("rebuilding the scene's world gave other entity counts than the scene")
    wb.joint_damping[:] = [float(x) for x in scene.model.joint_damping.numpy()]
    return wb, info


def build_worlds(scene, variants: list[Variant], device) -> tuple:
    """``(model, offsets)``: a world of ``scene`` per variant, each edited; ``offsets`` ``{"body", "shape",
    "joint_dof"}``. Raises EngineError: the rebuilt world differs, or a variant sets ``options`` (one per batch)."""
    if any(v.options for v in variants):
        raise EngineError(
            "mujoco-warp holds one set of solver options per batch: a Variant's options run on "
            "MuJoCo C (device cpu), or as a batch of their own"
        )
    wb, info = _replay_world(scene)
    builder = new_builder(scene.config)
    # one batched merge, much faster than add_world per copy for large N
    builder.replicate(wb, len(variants))
    if (builder.world_count, builder.body_count) != (len(variants), len(variants) * wb.body_count):
        raise EngineError(
            f"replicating the scene's world gave {builder.world_count} worlds, {builder.body_count} bodies"
        )
    offsets = []
    qd0 = int(info["hand_qd_start"])
    for i, v in enumerate(variants):
        if v.edits_contact:
            raise EngineError(
                "solref / solimp / torsional friction / object mass scale / object offset variants are "
                "edits of the direct MuJoCo C engine (device cpu) only"
            )
        off = {"body": i * wb.body_count, "shape": i * wb.shape_count, "joint_dof": i * wb.joint_dof_count}
        offsets.append(off)
        if v.friction is not None:
            # on both: MuJoCo takes the pair's maximum (as mujoco_c.model_edits.apply_variant)
            for s in list(info["object_shapes"]) + list(info["hand_shapes"]):
                builder.shape_material_mu[off["shape"] + int(s)] = float(v.friction)
        for d in range(qd0 + MANOSIM_HAND.finger_dof_start, qd0 + MANOSIM_HAND.dofs):
            if v.effort_limit is not None:
                builder.joint_effort_limit[off["joint_dof"] + d] = float(v.effort_limit)
            if v.effort_scale is not None:
                builder.joint_effort_limit[off["joint_dof"] + d] *= float(v.effort_scale)
        if v.object_mass is not None:
            b = off["body"] + int(info["object_body"])
            scale = float(v.object_mass) / float(builder.body_mass[b])
            builder.body_mass[b] = float(v.object_mass)
            builder.body_inv_mass[b] = 1.0 / float(v.object_mass)
            builder.body_inertia[b] = builder.body_inertia[b] * scale
            builder.body_inv_inertia[b] = builder.body_inv_inertia[b] * (1.0 / scale)
    return builder.finalize(device=device), offsets


def _batched(a, nworld: int) -> np.ndarray:
    """A mujoco-warp model field as (nworld, ...) on the host (a shared field is broadcast)."""
    x = a.numpy()
    if x.shape[0] == nworld:
        return x
    if x.shape[0] == 1:
        return np.broadcast_to(x, (nworld,) + x.shape[1:])
    raise EngineError(f"mujoco-warp field of shape {x.shape} is neither per-world ({nworld}) nor shared")


def set_effort_limits(m, worlds: list[WarpWorld], *, layout: MjLayout, scene) -> None:
    """Write each world's finger force ranges (N·m, :func:`finger_limits`) into ``m``'s per-world
    ``actuator_forcerange`` (newton 1.8 compiles them from the template world only).

    Raises:
        EngineError: the field is shared while the variants ask for different limits."""
    if all(w.variant.effort_limit is None and w.variant.effort_scale is None for w in worlds):
        return
    fr = m.actuator_forcerange.numpy()
    if fr.shape[0] != len(worlds):
        raise EngineError(f"mujoco-warp's actuator_forcerange is not per world (shape {fr.shape})")
    fa = layout.finger_act
    for i, w in enumerate(worlds):
        lim = finger_limits(scene, layout, w.variant)
        fr[i, fa, 0] = -lim
        fr[i, fa, 1] = lim
    m.actuator_forcerange.assign(fr)


def read_back(m, solver, worlds: list[WarpWorld], *, layout: MjLayout, scene) -> None:
    """Per world: object friction, finger force range (N·m) and object mass (kg) as ``m`` holds them, compared with the
    variant's (rtol 1e-6, float32) and stored in its ``readback``.

    Raises:
        EngineError: listing every mismatch."""
    N, lay = len(worlds), layout
    og = np.flatnonzero(lay.object_geoms)
    fr = _batched(m.geom_friction, N)
    rng = _batched(m.actuator_forcerange, N)
    mass = _batched(m.body_mass, N)
    flim = np.asarray(solver.mj_model.actuator_forcelimited)[lay.finger_act]
    errs = []
    for i, w in enumerate(worlds):
        want = _world_expected(scene, lay, w.variant)
        hg = np.flatnonzero(lay.hand_geoms)
        got = {
            "object_friction": fr[i][og, 0],
            "finger_forcerange": rng[i][lay.finger_act, 1],
            "object_mass": np.asarray([mass[i][lay.object_body]]),
        }
        lo = rng[i][lay.finger_act, 0]
        if w.variant.friction is not None and not np.allclose(fr[i][hg, 0], want["object_friction"], rtol=1e-6):
            errs.append(f"world {i}: hand geom friction {np.unique(fr[i][hg, 0])}, set {want['object_friction']}")
        for k, vals in got.items():
            if not np.allclose(vals, want[k], rtol=1e-6, atol=0):
                errs.append(f"world {i}: {k} = {np.unique(vals)} in mujoco-warp, set {want[k]}")
        if not np.allclose(lo, -want["finger_forcerange"], rtol=1e-6) or not np.all(flim):
            errs.append(f"world {i}: finger actuators not limited to +-{np.unique(want['finger_forcerange'])}")
        w.readback = {k: float(v[0]) for k, v in got.items()}
        w.readback["finger_forcerange_per_joint"] = [
            float(got["finger_forcerange"][lay.finger_joint == j].max()) for j in range(MANOSIM_HAND.finger_joints)
        ]
        w.readback["world"] = i
    if errs:
        raise EngineError("variant read-back mismatch:\n  " + "\n  ".join(errs))
