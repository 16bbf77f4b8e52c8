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

from replay import diagnostics
from replay.config import ReplayConfig
from replay.control import HandController, finger_actuator_force_max, interp_coords, quat_slerp
from replay.data.types import Recording
from replay.errors import DataError
from replay.scene import HAND_BODY_NAMES, build_scene, support_extent

PHASE_SETTLE, PHASE_APPROACH, PHASE_LIFT, PHASE_HOLD, PHASE_SHAKE = 0, 1, 2, 3, 4


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


@dataclass
class Plan:
    """Per control frame targets for a rollout.

    Attributes:
        coords: (F, 67) hand coords targets (free pos/quat used as wrist target).
        vel: (F, 3) wrist linear velocity target, m/s. omega: (F, 3) rad/s, world.
        acc: (F, 3) wrist linear acceleration target, m/s^2.
        phase: (F,) int phase codes.
        start_frame / grasp_frame: recording frames the approach spans.
    """

    coords: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    acc: np.ndarray
    phase: np.ndarray
    start_frame: int
    grasp_frame: int


def plan_rollout(rec: Recording, coords: np.ndarray, cfg: ReplayConfig) -> Plan:
    """Targets for every control frame of the protocol.

    Args:
        rec: the recording (``time``, ``valid``, ``grasp_frame``).
        coords: (T, 67) hand coords per recorded frame (Newton joint_q order).
        cfg: settings.

    Raises:
        DataError: coords shape, or fewer than 2 valid frames before the grasp.
    """
    T = rec.num_frames
    if coords.shape != (T, 67) or not np.all(np.isfinite(coords[rec.valid])):
        raise DataError(rec.source, "hand_coords", f"expected finite (T={T}, 67), got {coords.shape}")
    g = int(rec.grasp_frame)
    t_g = float(rec.time[g])
    t_s = 0.0 if cfg.approach_window_s is None else max(float(rec.time[0]), t_g - cfg.approach_window_s)
    s = int(np.searchsorted(rec.time, t_s))
    sel = np.flatnonzero(rec.valid[s : g + 1]) + s
    if sel.size < 2:
        raise DataError(rec.source, "valid", f"fewer than 2 tracked frames between {s} and grasp frame {g}")
    times, cc = rec.time[sel], coords[sel]
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
        from replay.control import quat_slerp

        q_open = cc[0, 7:].reshape(15, 4)
        q_grasp = top[7:].reshape(15, 4)
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
    C = np.asarray(rows)
    vel = np.gradient(C[:, :3], fdt, axis=0)
    rot = Rotation.from_quat(C[:, 3:7])
    omega = np.zeros((len(C), 3))
    omega[1:] = (rot[1:] * rot[:-1].inv()).as_rotvec() / fdt
    ph = np.asarray(phase, dtype=np.int32)
    vel[ph == PHASE_SETTLE] = 0.0
    omega[ph == PHASE_SETTLE] = 0.0
    acc = np.gradient(vel, fdt, axis=0)
    acc[ph == PHASE_SETTLE] = 0.0
    return Plan(C, vel, omega, acc, ph, int(sel[0]), g)


@dataclass
class RolloutResult:
    """Metrics of one rollout (JSON-ready via :meth:`to_dict`) and its per-frame poses."""

    metrics: dict
    poses: dict = field(repr=False)

    def to_dict(self) -> dict:
        return dict(self.metrics)


def _object_vertices_world(body_q_row: np.ndarray, verts: np.ndarray) -> np.ndarray:
    return Rotation.from_quat(body_q_row[3:7]).apply(verts) + body_q_row[:3]


def run_rollout(
    rec: Recording,
    coords: np.ndarray,
    mjcf: str | Path,
    cfg: ReplayConfig,
    ablation: bool = False,
    frame_limit: int | None = None,
) -> RolloutResult:
    """Run the protocol once (with contact, or the ablation without hand-object contact).

    Args:
        rec: the recording (target object, support height, grasp frame).
        coords: (T, 67) hand coords per recorded frame, Newton joint_q order, xyzw.
        mjcf: manosim hand MJCF path.
        cfg: settings.
        ablation: filter hand-object contact pairs.
        frame_limit: stop after this many control frames (tests).

    Returns:
        :class:`RolloutResult`; ``metrics['outcome']`` in {"lifted", "dropped", "unstable"}.
        Metrics: stable, lifted, unstable_frame, unstable_reason, final_height (object
        z at the end, m), rise (m, end of hold minus lift start), clearance (lowest
        collision vertex above the support at the end, m), contacts_at_lift and
        contacts_force_at_lift (hand-object contacts / those carrying force at lift
        start), wrist_err_median_mm / wrist_err_max_mm (root-body position vs target,
        over approach, lift and hold), max_object_step_mm (largest frame-to-frame
        object displacement), max_object_disp_mm (largest displacement of any
        collision vertex from its settled pose), max_object_rise_mm (highest object
        origin z above its settled z), slip_mm / slip_deg (object motion in the wrist
        frame from lift start to the end of the hold, :func:`hand_frame_slip`), wall_s, sim_s, rtf, contact capacity
        and peak count, flutter margins, read-back values, finger actuator force max.

    Raises:
        DataError: bad input (before simulating).
    """

    cfg.validate()
    plan = plan_rollout(rec, coords, cfg)
    obj = rec.target_object
    f0 = plan.start_frame
    t_wall0 = _time.perf_counter()
    metrics: dict = {"ablation": bool(ablation), "start_frame": f0, "grasp_frame": plan.grasp_frame}

    grasp_coords = plan.coords[plan.phase == PHASE_APPROACH][-1]
    extent = support_extent(rec)
    metrics["support"] = "plane" if extent is None else {"table_top_xy": list(extent)}
    try:
        scene = build_scene(
            mjcf, obj.asset, obj.pos[f0], obj.quat[f0], rec.support_height, plan.coords[0], grasp_coords,
            plan.coords[:, 7:].reshape(-1, 15, 4), cfg, ablation=ablation, support_extent=extent,
        )
    except DataError:
        raise
    model, solver = scene.model, scene.solver
    s0, s1 = model.state(), model.state()
    control = model.control()
    ctl = HandController(scene, control)
    mon = diagnostics.OverflowMonitor(solver, scene.contact_capacity)
    metrics.update(
        object_mass=scene.object_mass, hand_mass=scene.hand_mass, contact_capacity=scene.contact_capacity,
        resting_contacts=scene.resting_contacts, probe_contacts=scene.probe_contacts, readback=scene.readback,
        flutter_min_margin=float(min(r["margin"] for r in scene.flutter)),
        flutter=[{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()} for r in scene.flutter],
        finger_damping=sorted({round(float(x), 6) for x in scene.finger_damping}),
        import_warnings=list(getattr(scene.import_report, "warnings", None) or []),
    )

    F = len(plan.coords) if frame_limit is None else min(frame_limit, len(plan.coords))
    bodies = list(scene.hand_bodies) + [scene.object_body]
    B = len(bodies)
    body_pos = np.full((F, B, 3), np.nan, np.float32)
    body_quat = np.full((F, B, 4), np.nan, np.float32)
    ccount = np.zeros(F, np.int32)
    wrist_err = np.full(F, np.nan)
    dt = cfg.dt
    reason, bad_frame = None, None
    contacts_at_lift = contacts_force_at_lift = None
    act_max = 0.0
    done = 0
    hold_idx = np.flatnonzero(plan.phase == PHASE_HOLD)
    hold_end = int(hold_idx[-1]) + 1 if hold_idx.size else len(plan.coords)
    lift_frames = np.flatnonzero(plan.phase == PHASE_LIFT)
    for k in range(F):
        if k == hold_end and k < F and lift_frames.size:
            # shake only what is up: object origin risen by the success threshold
            z0 = float(body_pos[lift_frames[0] - 1, -1, 2])
            if not float(body_pos[k - 1, -1, 2]) - z0 >= cfg.lifted_min_rise:
                break
        c = plan.coords[k]
        cp = plan.coords[max(k - 1, 0)]
        ctl.set_finger_targets(c[7:].reshape(15, 4))
        try:
            for j in range(cfg.substeps):
                # wrist target interpolated within the control frame (reaches c at its end)
                a = (j + 1) / cfg.substeps if cfg.wrist_substep_interp else 1.0
                pos = (1 - a) * cp[:3] + a * c[:3]
                quat = quat_slerp(cp[3:7], c[3:7], a)
                ctl.apply_wrist(s0, pos, quat, plan.vel[k], plan.omega[k], plan.acc[k])
                solver.step(s0, s1, control, None, dt, observables=mon.observables)
                s0, s1 = s1, s0
                reason = mon.check()
                if reason:
                    break
                act_max = max(act_max, finger_actuator_force_max(scene))
        except Exception as e:  # physics trouble never crashes the study
            reason = f"solver exception: {type(e).__name__}: {e}"
        if reason is None:
            reason = diagnostics.state_problem(s0, cfg.max_linear_speed, cfg.max_angular_speed)
        bq = s0.body_q.numpy()
        body_pos[k] = bq[bodies, :3]
        body_quat[k] = bq[bodies, 3:7]
        n_ho, n_force = diagnostics.hand_object_contacts(solver, scene.hand_shapes, scene.object_shapes,
                                                         cfg.contact_force_min)
        ccount[k] = n_ho
        if plan.phase[k] != PHASE_SETTLE:
            wrist_err[k] = float(np.linalg.norm(bq[scene.hand_bodies[0], :3] - c[:3]))
        if k + 1 < len(plan.phase) and plan.phase[k] == PHASE_APPROACH and plan.phase[k + 1] == PHASE_LIFT:
            contacts_at_lift, contacts_force_at_lift = n_ho, n_force
        done = k + 1
        if reason:
            bad_frame = k
            break

    wall = _time.perf_counter() - t_wall0
    sim_s = done * cfg.frame_dt
    # --- metrics -----------------------------------------------------------------------
    verts = scene.object_vertices
    ph = plan.phase[:done]
    opos = body_pos[:done, -1].astype(float)
    settle_end = int(np.flatnonzero(ph == PHASE_SETTLE)[-1]) if np.any(ph == PHASE_SETTLE) else 0
    ref_row = np.concatenate([body_pos[settle_end, -1], body_quat[settle_end, -1]]).astype(float)
    v_ref = _object_vertices_world(ref_row, verts)
    disp = 0.0
    for k in range(settle_end, done):
        row = np.concatenate([body_pos[k, -1], body_quat[k, -1]]).astype(float)
        disp = max(disp, float(np.max(np.linalg.norm(_object_vertices_world(row, verts) - v_ref, axis=1))))
    max_rise = float(np.max(opos[settle_end:, 2]) - opos[settle_end, 2]) if done > settle_end else 0.0
    steps = np.linalg.norm(np.diff(opos[settle_end:], axis=0), axis=1) if done - settle_end > 1 else np.zeros(1)
    lift_idx = np.flatnonzero(ph == PHASE_LIFT)
    lift_start_z = float(opos[lift_idx[0] - 1, 2]) if lift_idx.size else float("nan")
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
    we = wrist_err[:done][np.isfinite(wrist_err[:done])] * 1000.0
    n = judge + 1  # slip over lift and hold (the shake's is shake_slip_mm)
    slip_mm, slip_deg = hand_frame_slip(body_pos[:n, 0], body_quat[:n, 0], body_pos[:n, -1],
                                        body_quat[:n, -1], int(lift_idx[0]) - 1 if lift_idx.size else None)
    metrics.update(
        slip_mm=slip_mm, slip_deg=slip_deg, **shake,
        outcome="unstable" if not stable else ("lifted" if lifted else "dropped"),
        stable=stable, lifted=lifted, completed=completed,
        unstable_frame=bad_frame, unstable_reason=reason,
        final_height=float(opos[-1, 2]), rise=rise, clearance=clearance,
        contacts_at_lift=contacts_at_lift, contacts_force_at_lift=contacts_force_at_lift,
        wrist_err_median_mm=float(np.median(we)) if we.size else None,
        wrist_err_max_mm=float(np.max(we)) if we.size else None,
        max_object_step_mm=float(steps.max() * 1000.0) if steps.size else 0.0,
        max_object_disp_mm=disp * 1000.0,
        max_object_rise_mm=max_rise * 1000.0,
        peak_contacts=int(mon.peak), max_hand_object_contacts=int(ccount[:done].max()) if done else 0,
        finger_actuator_force_max=act_max,
        frames=done, frames_planned=len(plan.coords), sim_s=sim_s, wall_s=wall,
        rtf=sim_s / wall if wall > 0 else None,
    )
    poses = dict(
        time=(np.arange(done) * cfg.frame_dt).astype(np.float64),
        body_names=np.array(list(HAND_BODY_NAMES) + ["object"]),
        body_pos=body_pos[:done], body_quat=body_quat[:done],
        contact_count=ccount[:done], phase=plan.phase[:done].astype(np.int32),
    )
    return RolloutResult(metrics, poses)
