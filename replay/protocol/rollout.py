"""One replay: settle, approach and closure, lift, hold; and its metrics.

Phases (``phase`` codes in the saved poses):

0. settle: the object rests on the support for ``settle_s`` while the hand holds
   its first replayed pose;
1. approach: the recorded wrist and finger trajectory from ``approach_window_s``
   before the grasp frame up to the grasp frame, at ``replay_speed`` (half speed);
2. lift: the wrist rises ``lift_height`` along world +Z with a quintic min-jerk
   profile over ``lift_s``, fingers held at their grasp-frame targets;
3. hold: ``hold_s`` at the top; success (``lifted``) is judged at its end;
4. shake: only if the object is up at the end of the hold, ``shake_s`` of lateral
   wrist shaking (``shake_amplitude`` along world X at ``shake_hz``, half of it along
   Y at twice the rate, ramped in and out) to expose slip a static hold hides;
   ``shake_held`` and ``shake_slip_mm`` report it. Rollouts that dropped the object
   (and every ablation) end with the hold.

A rollout never raises on physics trouble: non-finite state, runaway velocity,
contact overflow or a solver exception end it as ``unstable`` with the frame and
the reason. Bad input (shapes, missing files) raises :class:`replay.errors.DataError`
before anything is simulated.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from replay.protocol import diagnosis

from replay.protocol import tracking
from replay.config import ReplayConfig
from replay.data.support import support_extent
from replay.data.types import Recording
from replay.sim.engine import Variant, wrist
from replay.sim.engine.mjc import MjcBatch
from replay.sim.engine.newton_step import NewtonStepBatch
from replay.sim.engine.steel import SteelBatch
from replay.errors import AblationMaskError
from replay.kinematics.hand_layout import MANOSIM_HAND, finger_quats, interp_coords, quat_slerp
from replay.protocol.plan import (  # noqa: F401  (phase codes and Plan re-exported: replay.protocol.rollout.PHASE_* as before)
    PHASE_APPROACH,
    PHASE_HOLD,
    PHASE_LIFT,
    PHASE_RECORDED,
    PHASE_SETTLE,
    PHASE_SHAKE,
    PROTOCOLS,
    Plan,
    plan_from_rows,
    replayed_frames,
)
from replay.sim.scene import HAND_BODY_NAMES, build_scene, config_uses_direct_engine
from replay.sim.steel_scene import build_steel_scene

#: ``config.device`` values whose direct engine is mujoco-warp (:mod:`replay.sim.engine.warp_batch`)
WARP_DEVICES = ("cuda", "warp-cpu")

#: indices into HAND_BODY_NAMES of the distal bones (manosim: index, middle, pinky, ring, thumb tips)
FINGERTIP_BODIES = MANOSIM_HAND.fingertip_bodies


def min_jerk(s: np.ndarray | float) -> np.ndarray | float:
    """Quintic min-jerk profile 10 s^3 - 15 s^4 + 6 s^5 on s in [0, 1] (0 velocity/accel at ends)."""
    s = np.clip(s, 0.0, 1.0)
    return 10 * s**3 - 15 * s**4 + 6 * s**5


def hand_frame_slip(wrist_pos: np.ndarray, wrist_quat: np.ndarray, obj_pos: np.ndarray, obj_quat: np.ndarray,
                    ref: int | None) -> tuple[float | None, float | None]:
    """How far the object slid in the hand from lift start to the last frame.

    The object's pose is expressed in the wrist (root body) frame; a secure grasp keeps
    it fixed there while the hand lifts and holds, whatever the world motion (the
    hand-frame slip measure of the grasp-stability studies in ``shared/seeds``).

    Args:
        wrist_pos, obj_pos: (F, 3) world positions, m. wrist_quat, obj_quat: (F, 4) xyzw.
        ref: frame of reference (the last approach frame, i.e. lift start), or None.

    Returns:
        (translation mm, rotation deg) of the object in the wrist frame between ``ref``
        and the last frame; (None, None) without a lift.
    """
    if ref is None or ref < 0 or ref >= len(wrist_pos) - 1:
        return None, None
    w = Rotation.from_quat(np.asarray(wrist_quat[[ref, -1]], dtype=float))
    o = Rotation.from_quat(np.asarray(obj_quat[[ref, -1]], dtype=float))
    p = w.inv().apply(np.asarray(obj_pos[[ref, -1]], dtype=float) - np.asarray(wrist_pos[[ref, -1]], dtype=float))
    rel = (w.inv() * o)
    dtheta = (rel[0].inv() * rel[1]).magnitude()
    return float(np.linalg.norm(p[1] - p[0]) * 1000.0), float(np.degrees(dtheta))


def shake_offset(t: float, duration: float, amplitude: float, hz: float) -> np.ndarray:
    """Lateral wrist offset (x, y), m, at time ``t`` s into a shake of ``duration`` s.

    x = A sin(2 pi f t), y = A/2 sin(4 pi f t), times a min-jerk envelope rising over
    the first and falling over the last quarter period, so that the shake starts and
    ends at rest (no velocity step for the wrist controller).
    """
    ramp = 0.25 / hz
    env = float(min_jerk(min(t, duration - t) / ramp)) if ramp > 0 else 1.0
    w = 2.0 * math.pi * hz * t
    return env * amplitude * np.array([math.sin(w), 0.5 * math.sin(2.0 * w)])


def plan_rollout(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> Plan:
    """Targets for every control frame of the protocol.

    Args:
        rec: the recording (``time``, ``valid``, ``grasp_frame``).
        coords: (T, 67) hand coords per recorded frame (Newton joint_q order).
        cfg: settings.

    Raises:
        DataError: coords shape, or fewer than 2 valid frames before the grasp.
    """
    g = int(rec.grasp_frame)
    times, cc, first = replayed_frames(rec, coords, cfg.approach_window_s, g + 1)
    fdt = cfg.frame_dt
    n_settle = max(1, int(round(cfg.settle_s / fdt)))
    n_app = max(1, int(math.ceil((times[-1] - times[0]) / cfg.replay_speed / fdt)))
    n_lift = max(1, int(round(cfg.lift_s / fdt)))
    n_hold = max(1, int(round(cfg.hold_s / fdt)))
    rows, phase = [], []
    for _ in range(n_settle):
        rows.append(cc[0]); phase.append(PHASE_SETTLE)
    for k in range(1, n_app + 1):
        t = min(times[0] + k * fdt * cfg.replay_speed, times[-1])
        rows.append(interp_coords(cc, times, t)); phase.append(PHASE_APPROACH)
    top = rows[-1].copy()
    if cfg.grip_overshoot > 0:
        # squeeze: finger targets continue the recorded closure past the grasp pose
        # (slerp from the window's first finger pose through the grasp pose to 1 + overshoot)
        q_open = finger_quats(cc[0])
        q_grasp = finger_quats(top)
        top[7:] = quat_slerp(q_open, q_grasp, 1.0 + cfg.grip_overshoot).reshape(-1)
    for k in range(1, n_lift + 1):
        r = top.copy()
        a = k / n_lift
        r[2] += cfg.lift_height * (min_jerk(a) if cfg.lift_profile == "minjerk" else a)
        rows.append(r); phase.append(PHASE_LIFT)
    for _ in range(n_hold):
        r = top.copy(); r[2] += cfg.lift_height
        rows.append(r); phase.append(PHASE_HOLD)
    n_shake = int(round(cfg.shake_s / fdt)) if cfg.shake_amplitude > 0 else 0
    for k in range(1, n_shake + 1):
        r = top.copy(); r[2] += cfg.lift_height
        r[:2] += shake_offset(k * fdt, cfg.shake_s, cfg.shake_amplitude, cfg.shake_hz)
        rows.append(r); phase.append(PHASE_SHAKE)
    return plan_from_rows(rows, phase, fdt, first, g)


@dataclass
class RolloutResult:
    """Metrics of one rollout (JSON-ready via :meth:`to_dict`) and its per-frame poses."""

    metrics: dict
    poses: dict = field(repr=False)

    def to_dict(self) -> dict:
        return dict(self.metrics)


def _object_vertices_world(body_q_row: np.ndarray, verts: np.ndarray) -> np.ndarray:
    return Rotation.from_quat(body_q_row[3:7]).apply(verts) + body_q_row[:3]


def wrist_target_rows(plan: Plan, variant: Variant | None = None) -> np.ndarray:
    """(F, 16) wrist target rows of the engine (:mod:`replay.sim.engine.wrist`) for ``plan``.

    Row: position (3) m, orientation (4) MuJoCo wxyz, velocity (3) m/s, angular
    velocity (3) rad/s, acceleration (3) m/s^2, world frame; moved by the variant's
    wrist perturbation about the wrist at the grasp frame.
    """
    pos, quat, vel, om, acc = plan.coords[:, :3], plan.coords[:, 3:7], plan.vel, plan.omega, plan.acc
    if variant is not None and variant.perturbs_wrist:
        grasp = int(np.flatnonzero(plan.phase == PHASE_APPROACH)[-1])
        pos, quat, vel, om, acc = variant.transform_targets(pos, quat, vel, om, acc, plan.coords[grasp, :3])
    rows = np.zeros((len(plan.coords), wrist.T_SIZE))
    rows[:, wrist.T_POS:wrist.T_POS + 3] = pos
    rows[:, wrist.T_QUAT:wrist.T_QUAT + 4] = np.asarray(quat)[:, [3, 0, 1, 2]]
    rows[:, wrist.T_VEL:wrist.T_VEL + 3] = vel
    rows[:, wrist.T_OMEGA:wrist.T_OMEGA + 3] = om
    rows[:, wrist.T_ACC:wrist.T_ACC + 3] = acc
    return rows


def build_replay_scene(rec: Recording, coords: np.ndarray, mjcf: str | Path, cfg: ReplayConfig,
                       ablation: bool = False, protocol: str = "lift"):
    """``(plan, scene, support_extent)`` for a recording: the protocol's targets and the
    built scene (object at its pose at the approach start, hand at its first target).

    ``protocol``: ``"lift"`` (:func:`plan_rollout`) or ``"recorded"``
    (:func:`replay.protocol.tracking.plan_recorded`).

    Raises:
        DataError: bad input. ValueError: unknown protocol.
    """
    if protocol == "lift":
        plan = plan_rollout(rec, coords, cfg)
    elif protocol == "recorded":
        plan = tracking.plan_recorded(rec, coords, cfg)
    else:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {PROTOCOLS}")
    obj = rec.target_object
    f0 = plan.start_frame
    grasp_coords = plan.coords[plan.phase == PHASE_APPROACH][-1]
    extent = support_extent(rec)
    scene = (build_steel_scene if cfg.solver_backend == "steel" else build_scene)(
        mjcf, obj.asset, obj.pos[f0], obj.quat[f0], rec.support_height, plan.coords[0], grasp_coords,
        finger_quats(plan.coords), cfg, ablation=ablation, support_extent=extent,
    )
    return plan, scene, extent


def run_rollout(
    rec: Recording,
    coords: np.ndarray,
    mjcf: str | Path,
    cfg: ReplayConfig,
    ablation: bool = False,
    frame_limit: int | None = None,
    protocol: str = "lift",
) -> RolloutResult:
    """Run the protocol once (with contact, or the ablation without hand-object contact).

    The one-world case of :func:`run_rollouts` (see there for arguments and metrics).
    """
    return run_rollouts(rec, coords, mjcf, cfg, [Variant(ablation=ablation)], frame_limit=frame_limit,
                        protocol=protocol)[0]


def run_rollouts(
    rec: Recording,
    coords: np.ndarray,
    mjcf: str | Path,
    cfg: ReplayConfig,
    variants: list[Variant],
    frame_limit: int | None = None,
    threads: int = 1,
    protocol: str = "lift",
) -> list[RolloutResult]:
    """Run the protocol on one scene for every variant (one world each), in one batch.

    Args:
        rec: the recording (target object, support height, grasp frame).
        coords: (T, 67) hand coords per recorded frame, Newton joint_q order, xyzw.
        mjcf: manosim hand MJCF path.
        cfg: settings; ``cfg.engine`` and ``cfg.device`` pick the engine: ``"direct"``
            on ``"cpu"`` steps MuJoCo C directly (:class:`replay.sim.engine.mjc.MjcBatch`);
            ``"direct"`` on ``"cuda"`` or ``"warp-cpu"`` steps every variant in one
            mujoco-warp launch (:class:`replay.sim.engine.warp_batch.WarpBatch`; contact and
            ablation variants are two launches); ``"newton"`` steps one world through
            ``SolverMuJoCo.step`` (the reference).
        variants: one :class:`replay.sim.engine.Variant` per world (``Variant(ablation=True)``
            is the contact ablation).
        frame_limit: stop after this many control frames (tests).
        threads: threads stepping the worlds (direct engine).
        protocol: ``"lift"`` (settle, approach, synthetic lift, hold, shake; the
            default) or ``"recorded"``: the recorded wrist and finger motion from the
            approach window to the end of the manipulation, object free, compared per
            frame with the recorded object track (``track_*`` metrics and outcome
            ``tracked`` / ``lost`` / ``unstable``, :func:`replay.protocol.tracking.track_metrics`).

    Returns:
        One :class:`RolloutResult` per variant; ``metrics['outcome']`` in {"lifted",
        "dropped", "unstable"}. Metrics: stable, lifted, unstable_frame, unstable_reason,
        height_end_hold (object z at the end of the hold, m), final_height (object z
        at the last frame, after any shake, m), rise (m, end of hold minus lift start),
        clearance (lowest collision vertex above the support at the end, m),
        contacts_at_lift and contacts_force_at_lift (hand-object contacts / those
        carrying force at lift start), wrist_err_median_mm / wrist_err_max_mm
        (root-body position vs target, over approach, lift and hold),
        max_object_step_mm (largest frame-to-frame object displacement),
        max_object_disp_mm (largest displacement of any collision vertex from its
        settled pose), max_object_rise_mm (highest object origin z above its settled
        z), slip_mm / slip_deg (object motion in the wrist frame from lift start to
        the end of the hold, :func:`hand_frame_slip`; None unless lifted: slip_in_hand),
        separation_mm (the same measure whether held or not), wall_s, sim_s, rtf, contact
        capacity and peak count, flutter margins, read-back values, finger actuator
        force max, the variant and its read-back.

    Raises:
        DataError: bad input (before simulating).
    """
    cfg.validate()
    if not variants:
        raise ValueError("run_rollouts needs at least one variant")
    t_wall0 = _time.perf_counter()
    steel = cfg.solver_backend == "steel"  # SolverSteel (replay.sim.engine.steel): one world per scene
    if not steel and cfg.engine == "direct" and cfg.device in WARP_DEVICES:
        return _run_warp(rec, coords, mjcf, cfg, variants, frame_limit, protocol)
    reference = steel or not config_uses_direct_engine(cfg)
    if reference and len(variants) > 1:
        # the reference engine steps one world per scene (the ablation built into it)
        return [run_rollouts(rec, coords, mjcf, cfg, [v], frame_limit, protocol=protocol)[0] for v in variants]
    plan, scene, extent = build_replay_scene(rec, coords, mjcf, cfg, ablation=reference and variants[0].ablation,
                                             protocol=protocol)
    try:
        batch = (SteelBatch(scene, variants) if steel else NewtonStepBatch(scene, variants) if reference
                 else MjcBatch(scene, variants, threads=threads))
    except AblationMaskError:
        # the compiled collision bits cannot single out hand-object pairs (objects of many
        # parts use them all): the ablation worlds get a scene of their own, built with
        # Newton's hand-object filter pairs, as the reference engine does
        split = [[v for v in variants if not v.ablation], [v for v in variants if v.ablation]]
        done = {}
        for group in split:
            if group:
                for v, r in zip(group, _run_direct_scene(rec, coords, mjcf, cfg, group, frame_limit, threads,
                                                         protocol)):
                    done[id(v)] = r
        return [done[id(v)] for v in variants]
    return _finish(rec, plan, scene, extent, cfg, variants, batch, frame_limit, t_wall0)


def _run_warp(rec, coords, mjcf, cfg, variants, frame_limit, protocol="lift") -> list[RolloutResult]:
    """Every variant on mujoco-warp, one :class:`WarpBatch` launch per ablation flag
    (contact worlds, then ablation worlds built with Newton's collision filter pairs)."""
    from replay.sim.engine.warp_batch import WarpBatch

    done = {}
    for flag in (False, True):
        group = [v for v in variants if v.ablation == flag]
        if not group:
            continue
        t0 = _time.perf_counter()
        plan, scene, extent = build_replay_scene(rec, coords, mjcf, cfg, ablation=flag, protocol=protocol)
        batch = WarpBatch(scene, group)
        for v, r in zip(group, _finish(rec, plan, scene, extent, cfg, group, batch, frame_limit, t0)):
            done[id(v)] = r
    return [done[id(v)] for v in variants]


def _finish(rec, plan, scene, extent, cfg, variants, batch, frame_limit, t_wall0) -> list[RolloutResult]:
    """Step ``batch`` through the plan and measure every world."""
    t_built = _time.perf_counter()
    reference = isinstance(batch, NewtonStepBatch)
    engine = getattr(batch, "engine_name", None) or (
        "newton" if reference else ("warp" if type(batch).__name__ == "WarpBatch" else "direct"))
    common: dict = {"start_frame": plan.start_frame, "grasp_frame": plan.grasp_frame,
                    "support": "plane" if extent is None else {"table_top_xy": list(extent)}}
    common.update(
        object_mass=scene.object_mass, hand_mass=scene.hand_mass, contact_capacity=scene.contact_capacity,
        resting_contacts=scene.resting_contacts, probe_contacts=scene.probe_contacts, readback=scene.readback,
        flutter_min_margin=float(min(r["margin"] for r in scene.flutter)),
        flutter=[{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()} for r in scene.flutter],
        finger_damping=sorted({round(float(x), 6) for x in scene.finger_damping}),
        import_warnings=list(getattr(scene.import_report, "warnings", None) or []),
        engine=engine,
    )
    try:
        traces = step_protocol(plan, batch, cfg, frame_limit)
    finally:
        batch.close()
    common.update(batch.result_fields() if hasattr(batch, "result_fields") else {})
    wall = _time.perf_counter() - t_wall0
    out = []
    for i, v in enumerate(variants):
        w = batch.worlds[i]
        metrics = dict(common, ablation=bool(v.ablation), variant=v.to_dict(), variant_readback=w.readback)
        if v.object_mass is not None:
            metrics["object_mass"] = float(v.object_mass)
        metrics.update(_measure(rec, plan, scene, cfg, traces[i], w))
        # the build is shared by the batch; the stepping wall time is the batch's
        metrics.update(wall_s=wall, build_s=t_built - t_wall0, batch_worlds=len(variants))
        metrics["rtf"] = metrics["sim_s"] / wall if wall > 0 else None
        poses = _poses(plan, traces[i], cfg.frame_dt)
        if plan.kind == "recorded":  # the lift verdict does not apply: judged against the recorded track
            arrays, figures = tracking.track_metrics(rec, plan, poses, cfg, metrics["unstable_frame"])
            metrics.update(figures)
            poses.update(arrays)
        out.append(RolloutResult(metrics, poses))
    return out


def _run_direct_scene(rec, coords, mjcf, cfg, variants, frame_limit, threads, protocol="lift"):
    """The direct engine on a scene of its own whose ablation (if the variants are
    ablation worlds) is built in with Newton's collision filter pairs."""
    t0 = _time.perf_counter()
    plan, scene, extent = build_replay_scene(rec, coords, mjcf, cfg, ablation=variants[0].ablation,
                                             protocol=protocol)
    batch = MjcBatch(scene, variants, threads=threads)
    return _finish(rec, plan, scene, extent, cfg, variants, batch, frame_limit, t0)


@dataclass
class _Trace:
    """What one world recorded, frame by frame."""

    body_pos: np.ndarray
    body_quat: np.ndarray
    ccount: np.ndarray
    wrist_err: np.ndarray
    normal_force: np.ndarray
    friction_force: np.ndarray
    done: int = 0
    fingertip_distance: float | None = None
    bad_frame: int | None = None
    contacts_at_lift: int | None = None
    contacts_force_at_lift: int | None = None


def _fingertip_geoms(batch) -> np.ndarray:
    """Mask of the batch's collision geoms (shapes on Steel) on the fingertip bones."""
    if hasattr(batch, "fingertip_geoms"):
        return batch.fingertip_geoms(FINGERTIP_BODIES)
    tips = batch.layout.hand_bodies[list(FINGERTIP_BODIES)]
    return np.isin(np.asarray(batch.scene.solver.mj_model.geom_bodyid), tips)


def step_protocol(plan: Plan, batch, cfg: ReplayConfig, frame_limit: int | None = None) -> list[_Trace]:
    """Step every world of ``batch`` through ``plan``; one trace per world.

    Per control frame: finger targets and wrist target rows go to the batch, then
    each live world's signals are read. At the end of the hold a world whose object
    did not rise by ``lifted_min_rise`` stops (nothing to shake); a world whose
    signals carry a reason (overflow, runaway, solver error) stops at that frame. In a
    ``recorded`` plan a world whose object is :data:`replay.protocol.tracking.FELL_OFF_M` below the
    support stops (lost; the frames it did not simulate count as outside the tracking
    tolerance).
    """
    N = len(batch.worlds)
    F = len(plan.coords) if frame_limit is None else min(frame_limit, len(plan.coords))
    B = 17
    traces = [_Trace(np.full((F, B, 3), np.nan, np.float32), np.full((F, B, 4), np.nan, np.float32),
                     np.zeros(F, np.int32), np.full(F, np.nan), np.zeros(F), np.zeros(F)) for _ in range(N)]
    lay = batch.layout
    tips = _fingertip_geoms(batch)
    rows = np.stack([wrist_target_rows(plan, w.variant) for w in batch.worlds])  # (N, F, 16)
    hold_idx = np.flatnonzero(plan.phase == PHASE_HOLD)
    hold_end = int(hold_idx[-1]) + 1 if hold_idx.size else len(plan.coords)
    lift_frames = np.flatnonzero(plan.phase == PHASE_LIFT)
    fingers = finger_quats(plan.coords)
    for k in range(F):
        if k == hold_end and lift_frames.size:
            # shake only what is up: object origin risen by the success threshold
            for i, tr in enumerate(traces):
                if batch.worlds[i].alive:
                    z0 = float(tr.body_pos[lift_frames[0] - 1, -1, 2])
                    if not float(tr.body_pos[k - 1, -1, 2]) - z0 >= cfg.lifted_min_rise:
                        batch.stop(i)
        if plan.kind == "recorded" and k:
            # an object fallen off the support is lost for good: stop it (the recorded protocol has
            # no floor below a table top; it would fall until its speed trips the runaway check)
            floor = float(batch.scene.support_height) - tracking.FELL_OFF_M
            for i, tr in enumerate(traces):
                if batch.worlds[i].alive and float(tr.body_pos[k - 1, -1, 2]) < floor:
                    batch.stop(i)
        live = [i for i, w in enumerate(batch.worlds) if w.alive]
        if not live:
            break
        batch.step_frame(np.broadcast_to(fingers[k], (N,) + fingers.shape[1:]), rows[:, max(k - 1, 0)], rows[:, k])
        for i in live:
            tr = traces[i]
            sig = batch.read_frame(i, cfg.contact_force_min, cfg.max_linear_speed, cfg.max_angular_speed)
            tr.body_pos[k] = sig.body_pos
            tr.body_quat[k] = sig.body_quat
            tr.ccount[k] = sig.contacts
            tr.normal_force[k] = sig.normal_force
            tr.friction_force[k] = sig.friction_force
            if plan.phase[k] != PHASE_SETTLE:
                tr.wrist_err[k] = float(np.linalg.norm(sig.body_pos[0] - rows[i, k, :3]))
            if k + 1 < len(plan.phase) and plan.phase[k] == PHASE_APPROACH and plan.phase[k + 1] == PHASE_LIFT:
                tr.contacts_at_lift, tr.contacts_force_at_lift = sig.contacts, sig.contacts_force
                if not sig.reason:
                    tr.fingertip_distance = batch.min_distance(i, tips, lay.object_geoms)
            tr.done = k + 1
            if sig.reason:
                tr.bad_frame = k
    return traces


def _poses(plan: Plan, tr: _Trace, frame_dt: float) -> dict:
    done = tr.done
    return dict(
        time=(np.arange(done) * frame_dt).astype(np.float64),
        body_names=np.array(list(HAND_BODY_NAMES) + ["object"]),
        body_pos=tr.body_pos[:done], body_quat=tr.body_quat[:done],
        contact_count=tr.ccount[:done], phase=plan.phase[:done].astype(np.int32),
        contact_force=tr.normal_force[:done], friction_budget_kg=diagnosis.friction_budget_kg(tr.friction_force[:done]),
        wrist_err=tr.wrist_err[:done].astype(np.float64),
    )


def _measure(rec: Recording, plan: Plan, scene, cfg: ReplayConfig, tr: _Trace, world) -> dict:
    """Metrics of one world's trace (see :func:`run_rollouts`)."""
    done = tr.done
    body_pos, body_quat = tr.body_pos, tr.body_quat
    reason, bad_frame = world.reason, tr.bad_frame
    if bad_frame is None:
        reason = None  # a world stopped by the protocol (nothing left to shake) is not unstable
    sim_s = done * cfg.frame_dt
    verts = scene.object_vertices
    ph = plan.phase[:done]
    opos = body_pos[:done, -1].astype(float)
    settle_end = int(np.flatnonzero(ph == PHASE_SETTLE)[-1]) if np.any(ph == PHASE_SETTLE) else 0
    ref_row = np.concatenate([body_pos[settle_end, -1], body_quat[settle_end, -1]]).astype(float)
    v_ref = _object_vertices_world(ref_row, verts)
    lift_idx = np.flatnonzero(ph == PHASE_LIFT)
    ls = int(lift_idx[0]) - 1 if lift_idx.size else None  # lift start: the last approach frame
    disp = pushed = 0.0
    for k in range(settle_end, done):
        row = np.concatenate([body_pos[k, -1], body_quat[k, -1]]).astype(float)
        disp = max(disp, float(np.max(np.linalg.norm(_object_vertices_world(row, verts) - v_ref, axis=1))))
        if ls is None or k <= ls:
            pushed = disp  # before the lift: what closing the hand did to the object
    max_rise = float(np.max(opos[settle_end:, 2]) - opos[settle_end, 2]) if done > settle_end else 0.0
    steps = np.linalg.norm(np.diff(opos[settle_end:], axis=0), axis=1) if done - settle_end > 1 else np.zeros(1)
    lift_start_z = float(opos[lift_idx[0] - 1, 2]) if lift_idx.size else float("nan")
    hold_idx = np.flatnonzero(plan.phase == PHASE_HOLD)
    hold_end = int(hold_idx[-1]) + 1 if hold_idx.size else len(plan.coords)
    # success window: the end of the hold (the shake after it is reported on its own)
    judge = min(done, hold_end) - 1

    def clearance_at(k: int) -> float:
        row = np.concatenate([body_pos[k, -1], body_quat[k, -1]]).astype(float)
        return float(_object_vertices_world(row, verts)[:, 2].min() - rec.support_height)

    clearance = clearance_at(judge)
    rise = float(opos[judge, 2] - lift_start_z) if lift_idx.size else float("nan")
    completed = done >= hold_end
    stable = reason is None
    lifted = bool(stable and completed and rise >= cfg.lifted_min_rise and clearance >= cfg.lifted_min_clearance)
    shake = {"shake_ran": False, "shake_held": None, "shake_slip_mm": None, "shake_slip_deg": None}
    if lifted and np.any(plan.phase == PHASE_SHAKE):
        shake["shake_ran"] = True
        if done == len(plan.coords):
            smm, sdeg = hand_frame_slip(body_pos[:done, 0], body_quat[:done, 0], body_pos[:done, -1],
                                        body_quat[:done, -1], judge)
            shake.update(shake_slip_mm=smm, shake_slip_deg=sdeg)
            shake["shake_held"] = bool(clearance_at(done - 1) >= cfg.lifted_min_clearance
                                       and smm is not None and smm < cfg.shake_max_slip * 1000.0)
        else:
            shake["shake_held"] = False  # unstable during the shake
    we = tr.wrist_err[:done][np.isfinite(tr.wrist_err[:done])] * 1000.0
    n = judge + 1  # slip over lift and hold (the shake's is shake_slip_mm)
    sep_mm, sep_deg = hand_frame_slip(body_pos[:n, 0], body_quat[:n, 0], body_pos[:n, -1],
                                      body_quat[:n, -1], int(lift_idx[0]) - 1 if lift_idx.size else None)
    # slip is motion of an object *in* the hand: one left on the table has none (its separation
    # from the hand is the lift height, reported as separation_mm)
    slip_mm, slip_deg = (sep_mm, sep_deg) if lifted else (None, None)
    measures = _grasp_measures(tr, ph, cfg, done, ls, judge, lifted, completed, pushed)
    out = dict(
        slip_in_hand=lifted, slip_mm=slip_mm, slip_deg=slip_deg, separation_mm=sep_mm, **shake, **measures,
        outcome="unstable" if not stable else ("lifted" if lifted else "dropped"),
        stable=stable, lifted=lifted, completed=completed,
        unstable_frame=bad_frame, unstable_reason=reason,
        height_end_hold=float(opos[judge, 2]), final_height=float(opos[-1, 2]), rise=rise, clearance=clearance,
        contacts_at_lift=tr.contacts_at_lift, contacts_force_at_lift=tr.contacts_force_at_lift,
        wrist_err_median_mm=float(np.median(we)) if we.size else None,
        wrist_err_max_mm=float(np.max(we)) if we.size else None,
        max_object_step_mm=float(steps.max() * 1000.0) if steps.size else 0.0,
        max_object_disp_mm=disp * 1000.0,
        max_object_rise_mm=max_rise * 1000.0,
        peak_contacts=int(world.peak_contacts), max_hand_object_contacts=int(tr.ccount[:done].max()) if done else 0,
        finger_actuator_force_max=float(world.act_max),
        frames=done, frames_planned=len(plan.coords), sim_s=sim_s,
    )
    v = world.variant
    out["diagnosis"] = diagnosis.diagnose(out, object_mass=float(v.object_mass or scene.object_mass),
                                          effort_limit=float(v.effort_limit or cfg.effort_limit), pushed_mm=pushed * 1000.0,
                                          budget_peak_kg=measures["friction_budget_peak_kg"],
                                          fingertip_distance_mm=measures["fingertip_distance_mm"],
                                          slip_onset_frame=measures["slip_onset_frame"], cfg=cfg)
    return out


def _grasp_measures(tr: _Trace, ph: np.ndarray, cfg: ReplayConfig, done: int, ls: int | None, judge: int,
                    lifted: bool, completed: bool, pushed: float) -> dict:
    """Friction budget (kg: ``sum(mu_i N_i)/g``, :func:`replay.protocol.diagnosis.friction_budget_kg`) at the
    lift start, its peak over lift and hold and its median over the hold; creep in the hand
    frame during the hold (mm/s, lifted only: an object left on the table does not creep in
    the hand); the slip onset frame; ``pushed`` (m, before the lift) in mm; the fingertip
    distance at the lift start (mm). ``ls``: lift-start frame or None; ``judge``: the frame
    the outcome is judged at (end of the hold)."""
    body_pos, body_quat = tr.body_pos, tr.body_quat
    budget = diagnosis.friction_budget_kg(tr.friction_force[:done])
    carry = np.flatnonzero((ph == PHASE_LIFT) | (ph == PHASE_HOLD))
    budget_peak = float(np.max(budget[carry])) if carry.size and np.all(np.isfinite(budget[carry])) else None
    hold = np.flatnonzero(ph == PHASE_HOLD)
    in_hand = diagnosis.object_in_hand(body_pos[:done, 0], body_quat[:done, 0], body_pos[:done, -1])
    creep = diagnosis.creep_rate_mm_s(in_hand[hold], cfg.frame_dt) if lifted and hold.size else None
    onset = diagnosis.slip_onset(in_hand[: judge + 1], ls, cfg.diag_slip_onset_mm / 1000.0) if ls is not None else None
    tip_mm = None if tr.fingertip_distance is None or not np.isfinite(tr.fingertip_distance) \
        else tr.fingertip_distance * 1000.0
    return dict(
        friction_budget_at_lift_kg=float(budget[ls]) if ls is not None and ls < done else None,
        friction_budget_peak_kg=budget_peak,
        friction_budget_hold_kg=float(np.median(budget[hold])) if completed and hold.size else None,
        creep_mm_s=creep, slip_onset_frame=onset, pushed_mm=pushed * 1000.0, fingertip_distance_mm=tip_mm,
    )
