"""One replay: plan, scene, a batch of worlds stepped through the plan, each world's measures and protocol test.
Physics trouble (non-finite state, runaway velocity, contact overflow, a MuJoCo warning or ``mujoco.FatalError``) ends a
world as ``unstable`` with its frame and reason; bad input raises :class:`replay.errors.DataError` before simulating."""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from replay.config import ReplayConfig
from replay.data.support import support_extent
from replay.data.types import Recording
from replay.errors import AblationMaskError
from replay.kinematics.hand_layout import finger_quats
from replay.protocol import contact_agreement, diagnosis
from replay.protocol.measures import Trace, measure_world
from replay.protocol.plan import PHASE_APPROACH, PHASE_LIFT, Plan
from replay.protocol.protocols.base import Protocol, protocol_named
from replay.protocol.step_plan import step_protocol
from replay.sim import physics
from replay.sim.engine.factory import build_engine_scene, capabilities_of, engine_for_scene
from replay.sim.engine.variants import Variant
from replay.sim.scene import HAND_BODY_NAMES
from replay.sim.scene_cache import cached_scene
from replay.sim.scene_spec import SceneSpec


@dataclass(frozen=True)
class Stepping:
    """A search's stepping: ``mid_lift_stop`` m (worlds that rose less stop at mid-lift; None: no stop), ``measure``
    ``f(rec, plan, scene, cfg, trace, world) -> dict`` replacing ``measure_world`` (None: full measures),
    ``engine_options`` engine keyword arguments beyond ``threads``."""

    mid_lift_stop: float | None = None
    measure: Callable | None = None
    engine_options: dict = field(default_factory=dict)


def mid_lift_stop(plan: Plan, rise: float) -> tuple[int, float] | None:
    """``(frame, rise m)`` of the mid-lift early stop; None without a lift."""
    lift = np.flatnonzero(plan.phase == PHASE_LIFT)
    return (int(lift[0]) + len(lift) // 2, float(rise)) if lift.size else None


@dataclass
class RolloutResult:
    """Metrics of one rollout (JSON-ready) and its per-frame poses."""

    metrics: dict
    poses: dict = field(repr=False)


def build_replay_scene(
    rec: Recording,
    coords: np.ndarray,
    mjcf: str | Path,
    *,
    cfg: ReplayConfig,
    ablation: bool = False,
    protocol: str | Protocol = "lift",
):
    """``(plan, scene, support_extent)`` of a recording (``cfg`` the protocol's config already; scene cached per object
    and structural config). Raises DataError (bad input), KeyError (unknown protocol)."""
    plan = protocol_named(protocol).plan(rec, coords, mjcf, cfg=cfg)
    offset = np.asarray(physics.choice_value(cfg, "wrist_target_offset_mm"), float) / 1000.0
    if np.any(offset):  # the physics choice: every wrist target (and the start) moved along world x, y, z
        plan.coords = plan.coords.copy()
        plan.coords[:, :3] += offset
    extent = support_extent(rec)
    touch_coords = coords if plan.contact_coords is None else plan.contact_coords
    plan.touch = contact_agreement.recorded_bone_distances(rec, touch_coords, mjcf)
    obj = rec.target_object
    f0 = plan.start_frame
    grasp_coords = plan.coords[plan.phase == PHASE_APPROACH][-1]
    spec = SceneSpec(
        mjcf,
        obj.asset,
        obj.pos[f0],
        obj.quat[f0],
        rec.support_height,
        plan.coords[0],
        grasp_coords,
        finger_quats(plan.coords),
        ablation=ablation,
        support_extent=extent,
    )
    scene = cached_scene(spec, cfg, build_engine_scene)  # compiled once per object and structural config (a worker's)
    return plan, scene, extent


def run_rollout(
    rec: Recording,
    coords: np.ndarray,
    mjcf: str | Path,
    *,
    cfg: ReplayConfig,
    ablation: bool = False,
    frame_limit: int | None = None,
    protocol: str | Protocol = "lift",
) -> RolloutResult:
    return run_rollouts(
        rec, coords, mjcf, cfg=cfg, variants=[Variant(ablation=ablation)], frame_limit=frame_limit, protocol=protocol
    )[0]


def run_contact(
    rec: Recording, coords: np.ndarray, mjcf: str | Path, *, cfg: ReplayConfig, ablation: bool, protocol: str | Protocol
) -> tuple[RolloutResult, RolloutResult | None]:
    """A study job's replay: the contact world and, with ``ablation``, its contact ablation in the same batch
    (:func:`run_rollouts`); ``(contact, ablation or None)``."""
    variants = [Variant()] + ([Variant(ablation=True)] if ablation else [])
    results = run_rollouts(rec, coords, mjcf, cfg=cfg, variants=variants, protocol=protocol)
    return results[0], (results[1] if ablation else None)


def run_rollouts(
    rec: Recording,
    coords: np.ndarray,
    mjcf: str | Path,
    *,
    cfg: ReplayConfig,
    variants: list[Variant],
    frame_limit: int | None = None,
    threads: int = 1,
    protocol: str | Protocol = "lift",
    stepping: Stepping | None = None,
) -> list[RolloutResult]:
    """One :class:`RolloutResult` per variant (one world each, one batch) of ``protocol`` on ``coords`` (T, 67, Newton
    joint_q order, xyzw); ``Variant(ablation=True)`` is the contact ablation; ``frame_limit`` control frames (tests).
    Raises DataError (bad input, before simulating), ValueError (no variants), KeyError (unknown protocol)."""
    protocol = protocol_named(protocol)
    cfg = protocol.config(cfg)
    if not variants:
        raise ValueError("run_rollouts needs at least one variant")
    t_wall0 = _time.perf_counter()
    caps = capabilities_of(cfg)
    run = (frame_limit, threads, stepping or Stepping())
    if caps.worlds_per_scene == 1 and len(variants) > 1:
        return [
            run_rollouts(
                rec, coords, mjcf, cfg=cfg, variants=[v], frame_limit=frame_limit, protocol=protocol, stepping=stepping
            )[0]
            for v in variants
        ]
    if caps.ablation_by_variant:
        # contact and ablation worlds on one scene, the ablation a per-world model edit
        try:
            return _run_scene(rec, coords, mjcf, cfg, variants, run, protocol, False, t_wall0)
        except AblationMaskError:
            pass  # the compiled collision bits cannot single out hand-object pairs (objects of many parts use them all)
    return _run_apart(rec, coords, mjcf, cfg, variants, run, protocol)


def _run_apart(rec, coords, mjcf, cfg, variants, run, protocol) -> list[RolloutResult]:
    """Contact worlds, then ablation worlds (built with hand-object filter pairs), each group on its own scene."""
    done = {}
    for flag in (False, True):
        group = [v for v in variants if v.ablation == flag]
        if group:
            t0 = _time.perf_counter()
            for v, r in zip(group, _run_scene(rec, coords, mjcf, cfg, group, run, protocol, flag, t0)):
                done[id(v)] = r
    return [done[id(v)] for v in variants]


def _run_scene(rec, coords, mjcf, cfg, variants, run: tuple, protocol, ablation, t0) -> list[RolloutResult]:
    """``run``: ``(frame_limit, threads, Stepping)``; wall time from ``t0``."""
    plan, scene, extent = build_replay_scene(rec, coords, mjcf, cfg=cfg, ablation=ablation, protocol=protocol)
    batch = engine_for_scene(scene, variants, threads=run[1], **run[2].engine_options)
    return _finish(rec, plan, scene, extent, cfg, variants, batch, run, t0, protocol)


def _finish(rec, plan, scene, extent, cfg, variants, batch, run: tuple, t_wall0, protocol) -> list[RolloutResult]:
    """Step ``batch`` through the plan and measure every world (wall time s: the batch's)."""
    frame_limit, _, st = run
    t_built = _time.perf_counter()
    common = dict(
        start_frame=plan.start_frame,
        grasp_frame=plan.grasp_frame,
        support="plane" if extent is None else {"table_top_xy": list(extent)},
        object_mass=scene.object_mass,
        hand_mass=scene.hand_mass,
        contact_capacity=scene.contact_capacity,
        resting_contacts=scene.resting_contacts,
        probe_contacts=scene.probe_contacts,
        readback=scene.readback,
        flutter_min_margin=float(min(r["margin"] for r in scene.flutter)),
        flutter=[{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()} for r in scene.flutter],
        finger_damping=sorted({round(float(x), 6) for x in scene.finger_damping}),
        import_warnings=list(getattr(scene.import_report, "warnings", None) or []),
        engine=batch.capabilities.name,
        physics=physics.physics_record(cfg),
        **({"pad_compression": plan.pad} if plan.pad is not None else {}),
    )
    try:
        at = contact_agreement.agreement_frame(plan, float(rec.time[int(rec.grasp_frame)]))
        early = None if st.mid_lift_stop is None else mid_lift_stop(plan, st.mid_lift_stop)
        traces = step_protocol(plan, batch, cfg, frame_limit=frame_limit, early_stop=early, agreement_at=at)
    finally:
        batch.close()
    common.update(batch.result_fields())
    wall = _time.perf_counter() - t_wall0
    out = []
    for i, v in enumerate(variants):
        w = batch.worlds[i]
        metrics = dict(common, ablation=bool(v.ablation), variant=v.to_dict(), variant_readback=w.readback)
        if st.measure is not None:  # a search's own verdict of the world: no poses, no other measures
            metrics.update(st.measure(rec, plan, scene, cfg, traces[i], w), wall_s=wall, batch_worlds=len(variants))
            out.append(RolloutResult(metrics, {}))
            continue
        if v.object_mass is not None:
            metrics["object_mass"] = float(v.object_mass)
        metrics.update(measure_world(rec, plan, scene, cfg=cfg, tr=traces[i], world=w))
        metrics.update(contact_agreement.agreement_fields(plan.touch, traces[i].force_bones))

        metrics.update(wall_s=wall, build_s=t_built - t_wall0, batch_worlds=len(variants))
        metrics["rtf"] = metrics["sim_s"] / wall if wall > 0 else None
        poses = _poses(plan, traces[i], cfg.frame_dt)
        metrics.update(
            protocol.judge(rec, plan, scene, extent=extent, cfg=cfg, trace=traces[i], poses=poses, metrics=metrics)
        )
        out.append(RolloutResult(metrics, poses))
    return out


def _poses(plan: Plan, tr: Trace, frame_dt: float) -> dict:
    """The rollout's npz of one world's ``tr.done`` frames: time s, body names, body positions m and quaternions xyzw
    (F, 17, ...), contact count and force N, phase codes, friction budget kg, wrist error m."""
    done = tr.done
    return dict(
        time=(np.arange(done) * frame_dt).astype(np.float64),
        body_names=np.array(list(HAND_BODY_NAMES) + ["object"]),
        body_pos=tr.body_pos[:done],
        body_quat=tr.body_quat[:done],
        contact_count=tr.ccount[:done],
        phase=plan.phase[:done].astype(np.int32),
        contact_force=tr.normal_force[:done],
        friction_budget_kg=diagnosis.friction_budget_kg(tr.friction_force[:done]),
        wrist_err=tr.wrist_err[:done].astype(np.float64),
    )
