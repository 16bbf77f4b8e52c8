"""Per-world measures of a rollout (fields: docs/results.md): lifted at the end of the hold when rise >=
``lifted_min_rise`` and the lowest collision vertex >= ``lifted_min_clearance`` above the support; shake and release
apart. Positions m, world frame (Z up), quaternions xyzw; mm and deg where named."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import ReplayConfig
from replay.data.types import Recording
from replay.protocol import diagnosis, release
from replay.protocol.plan import PHASE_HOLD, PHASE_LIFT, PHASE_SETTLE, PHASE_SHAKE, Plan, hold_end, lift_start
from replay.sim import finger_strength
from replay.sim.engine.spans import FrameRows


@dataclass
class Trace(FrameRows):
    """One world's record (F frames, B = 17 bodies, the object last): ``body_pos`` (F, B, 3) float32 m world (NaN past
    ``done``), ``body_quat`` (F, B, 4) xyzw, ``ccount`` (F,) contacts, ``wrist_err`` (F,) m (NaN while settling),
    ``normal_force`` / ``friction_force`` (F,) N, ``fingertip_distance`` m at lift start, ``force_bones`` (0-15)."""

    done: int = 0
    fingertip_distance: float | None = None
    bad_frame: int | None = None
    contacts_at_lift: int | None = None
    contacts_force_at_lift: int | None = None
    force_bones: list | None = None  # bones 0-15 carrying hand-object force at the agreement frame


def object_vertices_world(body_q_row: np.ndarray, verts: np.ndarray) -> np.ndarray:
    """(V, 3) world m of object-frame ``verts`` (V, 3) at pose ``body_q_row`` (7,): m, xyzw."""
    return Rotation.from_quat(body_q_row[3:7]).apply(verts) + body_q_row[:3]


def hand_frame_slip(
    wrist_pos: np.ndarray, wrist_quat: np.ndarray, obj_pos: np.ndarray, *, obj_quat: np.ndarray, ref: int | None
) -> tuple[float | None, float | None]:
    """``(mm, deg)`` the object moved in the wrist frame from frame ``ref`` (lift start) to the last; (None, None)
    without a lift. Positions (F, 3) m world, quaternions (F, 4) xyzw."""
    if ref is None or ref < 0 or ref >= len(wrist_pos) - 1:
        return None, None
    w = Rotation.from_quat(np.asarray(wrist_quat[[ref, -1]], dtype=float))
    o = Rotation.from_quat(np.asarray(obj_quat[[ref, -1]], dtype=float))
    p = w.inv().apply(np.asarray(obj_pos[[ref, -1]], dtype=float) - np.asarray(wrist_pos[[ref, -1]], dtype=float))
    rel = w.inv() * o
    dtheta = (rel[0].inv() * rel[1]).magnitude()
    return float(np.linalg.norm(p[1] - p[0]) * 1000.0), float(np.degrees(dtheta))


def object_row(tr: Trace, k: int) -> np.ndarray:
    """(7,) object pose at frame ``k``: position m, quaternion xyzw (float64)."""
    return np.concatenate([tr.body_pos[k, -1], tr.body_quat[k, -1]]).astype(float)


def object_clearance(tr: Trace, k: int, verts: np.ndarray, *, support_height: float) -> float:
    """Lowest object collision vertex above the support at frame ``k``, m."""
    return float(object_vertices_world(object_row(tr, k), verts)[:, 2].min() - support_height)


#: frames whose object vertices :func:`_largest_displacement` places at once (scratch ~24 B x vertices x this)
_FRAMES_PER_CHUNK = 128


def _largest_displacement(tr: Trace, verts: np.ndarray, v_ref: np.ndarray, start: int, stop: int) -> np.ndarray:
    """(stop - start,) largest displacement, m, of ``verts`` (V, 3, object frame) from ``v_ref`` (V, 3, world)."""
    out = np.zeros(max(0, stop - start))
    for a in range(start, stop, _FRAMES_PER_CHUNK):
        b = min(stop, a + _FRAMES_PER_CHUNK)
        rot = Rotation.from_quat(tr.body_quat[a:b, -1].astype(float)).as_matrix()  # (F, 3, 3)
        world = np.einsum("fij,vj->fvi", rot, verts) + tr.body_pos[a:b, -1].astype(float)[:, None, :]
        out[a - start : b - start] = np.linalg.norm(world - v_ref, axis=2).max(axis=1)
    return out


def _object_motion(tr: Trace, verts: np.ndarray, settle_end: int, ls: int | None, end: int) -> tuple[dict, float]:
    """Object motion mm from settling to the release (frame ``end``), and ``pushed`` m up to lift start ``ls``."""
    done = min(tr.done, end)
    opos = tr.body_pos[:done, -1].astype(float)
    v_ref = object_vertices_world(object_row(tr, settle_end), verts)
    step = _largest_displacement(tr, verts, v_ref, settle_end, done)  # (done - settle_end,) m, per frame
    disp = float(step.max()) if step.size else 0.0
    last = done if ls is None else min(done, ls + 1)  # before the lift: what closing the hand did to the object
    pushed = float(step[: last - settle_end].max()) if last > settle_end else 0.0
    max_rise = float(np.max(opos[settle_end:, 2]) - opos[settle_end, 2]) if done > settle_end else 0.0
    steps = np.linalg.norm(np.diff(opos[settle_end:], axis=0), axis=1) if done - settle_end > 1 else np.zeros(1)
    return dict(
        max_object_step_mm=float(steps.max() * 1000.0) if steps.size else 0.0,
        max_object_disp_mm=disp * 1000.0,
        max_object_rise_mm=max_rise * 1000.0,
    ), pushed


def _shake_measures(
    rec: Recording, plan: Plan, cfg: ReplayConfig, tr: Trace, verts: np.ndarray, judge: int, lifted: bool
) -> dict:
    """Shake figures: held when the object stayed above the support and slid less than ``shake_max_slip`` in the
    hand."""
    done, end = tr.done, release.pre_release_end(plan.phase)  # the shake ends where the release begins
    shake = {"shake_ran": False, "shake_held": None, "shake_slip_mm": None, "shake_slip_deg": None}
    if lifted and np.any(plan.phase == PHASE_SHAKE):
        shake["shake_ran"] = True
        if done >= end:
            bp, bq = tr.body_pos, tr.body_quat
            smm, sdeg = hand_frame_slip(bp[:end, 0], bq[:end, 0], bp[:end, -1], obj_quat=bq[:end, -1], ref=judge)
            shake.update(shake_slip_mm=smm, shake_slip_deg=sdeg)
            shake["shake_held"] = bool(
                object_clearance(tr, end - 1, verts, support_height=rec.support_height) >= cfg.lift.lifted_min_clearance
                and smm is not None
                and smm < cfg.lift.shake_max_slip * 1000.0
            )
        else:
            shake["shake_held"] = False  # unstable during the shake
    return shake


def _wrist_error(tr: Trace, phase: np.ndarray) -> dict:
    """``wrist_err_median_mm`` / ``_max_mm`` after settling, ``_peak_mm`` over lift and hold (None: no frame)."""
    err = tr.wrist_err[: tr.done] * 1000.0
    ok = np.isfinite(err)
    we, lh = err[ok], err[ok & np.isin(phase[: tr.done], (PHASE_LIFT, PHASE_HOLD))]
    return dict(
        wrist_err_median_mm=float(np.median(we)) if we.size else None,
        wrist_err_max_mm=float(np.max(we)) if we.size else None,
        wrist_err_peak_mm=float(np.max(lh)) if lh.size else None,
    )


def measure_world(rec: Recording, plan: Plan, scene, *, cfg: ReplayConfig, tr: Trace, world) -> dict:
    """Metrics of one world's :class:`Trace`; ``world``: its :class:`replay.sim.engine.world.WorldStatus`."""
    done = tr.done
    reason, bad_frame = world.reason, tr.bad_frame
    if bad_frame is None:
        reason = None  # a world stopped by the protocol (nothing left to shake) is not unstable
    release_trouble = None
    if bad_frame is not None and bad_frame >= release.pre_release_end(plan.phase):
        # trouble after the hand opened: the lift, hold and shake before it stand; said in the results
        release_trouble, reason, bad_frame = f"frame {bad_frame}: {reason}", None, None
    verts = scene.object_vertices
    ph = plan.phase[:done]
    opos = tr.body_pos[:done, -1].astype(float)
    settle_end = int(np.flatnonzero(ph == PHASE_SETTLE)[-1]) if np.any(ph == PHASE_SETTLE) else 0
    ls = lift_start(ph)  # the last approach frame
    motion, pushed = _object_motion(tr, verts, settle_end, ls, release.pre_release_end(plan.phase))
    end_hold = hold_end(plan.phase)
    judge = min(done, end_hold) - 1  # success window: the end of the hold (the shake is reported on its own)
    clearance = object_clearance(tr, judge, verts, support_height=rec.support_height)
    rise = float(opos[judge, 2] - float(opos[ls, 2])) if ls is not None else float("nan")
    completed, stable = done >= end_hold, reason is None
    lifted = bool(
        stable and completed and rise >= cfg.lift.lifted_min_rise and clearance >= cfg.lift.lifted_min_clearance
    )
    shake = _shake_measures(rec, plan, cfg, tr, verts, judge, lifted)
    n = judge + 1  # slip over lift and hold (the shake's is shake_slip_mm)
    bp, bq = tr.body_pos, tr.body_quat
    sep_mm, sep_deg = hand_frame_slip(bp[:n, 0], bq[:n, 0], bp[:n, -1], obj_quat=bq[:n, -1], ref=ls)
    # slip only for a lifted object; separation blank where it never left the table
    slip_mm, slip_deg = (sep_mm, sep_deg) if lifted else (None, None)
    peak = diagnosis.peak_rise_mm(opos[:, 2], ph, ls, phases=(PHASE_LIFT, PHASE_HOLD))
    if not lifted and (peak is None or peak < cfg.lift.diag_never_rose_mm):
        sep_mm = None
    measures = grasp_measures(
        tr, ph, cfg, done=done, ls=ls, judge=judge, lifted=lifted, completed=completed, pushed=pushed
    )
    rel, end = _release(plan, tr, verts, opos, lifted, shake, cut=release_trouble is not None)
    out = dict(
        slip_in_hand=lifted,
        slip_mm=slip_mm,
        slip_deg=slip_deg,
        separation_mm=sep_mm,
        **shake,
        **measures,
        outcome="unstable"
        if not stable
        else ("stuck" if rel["stuck_after_release"] else ("lifted" if lifted else "not_lifted")),
        stable=stable,
        lifted=bool(lifted and not rel["stuck_after_release"]),
        completed=completed,
        unstable_frame=bad_frame,
        unstable_reason=reason,
        height_end_hold=float(opos[judge, 2]),
        final_height=float(opos[end - 1, 2]),
        rise=rise,
        clearance=clearance,
        contacts_at_lift=tr.contacts_at_lift,
        contacts_force_at_lift=tr.contacts_force_at_lift,
        **_wrist_error(tr, plan.phase),
        **motion,
        peak_contacts=int(world.peak_contacts),
        max_hand_object_contacts=int(tr.ccount[:done].max()) if done else 0,
        finger_actuator_force_max=float(world.act_max),
        frames=done,
        frames_planned=len(plan.coords),
        sim_s=done * cfg.frame_dt,
        **rel,
        release_unstable=release_trouble,
    )
    out["diagnosis"] = _diagnose(out, measures, world, scene, cfg, pushed, peak)
    return out


def _release(
    plan: Plan, tr: Trace, verts: np.ndarray, opos: np.ndarray, lifted: bool, shake: dict, cut: bool = False
) -> tuple[dict, int]:
    """(release metrics, frames before the release); ``cut``: physics trouble stopped the world in the release."""
    end = min(tr.done, release.pre_release_end(plan.phase))
    held = shake["shake_held"] if shake["shake_ran"] else lifted
    height = float(np.ptp(object_vertices_world(object_row(tr, end - 1), verts)[:, 2]))
    ls = lift_start(plan.phase)
    rest_z = float(opos[ls, 2]) if ls is not None and 0 <= ls < len(opos) else None  # on the support
    rel = release.release_metrics(
        plan.phase, opos[:, 2], tr.done, lifted=lifted, height=height, held=held, rest_z=rest_z, cut=cut
    )
    rel.pop("lifted_after_release")  # that is ``lifted`` in the metrics
    return rel, end


def _diagnose(
    out: dict, measures: dict, world, scene, cfg: ReplayConfig, pushed: float, peak_rise: float | None
) -> dict | None:
    """The diagnosis of one world's metrics under its variant's object mass (kg) and effort limit (N·m)."""
    v = world.variant
    effort = one_tip_effort(cfg, v.effort_scale or 1.0)
    mass = v.object_mass or scene.object_mass
    return diagnosis.diagnose(
        out,
        object_mass=float(mass * (v.object_mass_scale or 1.0)),
        effort_limit=float(v.effort_limit or effort),
        pushed_mm=pushed * 1000.0,
        budget_peak_kg=measures["friction_budget_peak_kg"],
        fingertip_distance_mm=measures["fingertip_distance_mm"],
        slip_onset_frame=measures["slip_onset_frame"],
        cfg=cfg,
        peak_rise=peak_rise,
    )


def one_tip_effort(cfg: ReplayConfig, scale: float = 1.0) -> float:
    """One fingertip's effort, N·m over ``diag_grip_lever_m`` (human strength: the index's pad force times that lever;
    else the uniform limit), times ``scale``."""
    forces = finger_strength.tip_forces(cfg)
    one = float(finger_strength.profile(cfg)) if forces is None else float(forces[0]) * cfg.lift.diag_grip_lever_m
    return one * scale


def grasp_measures(
    tr: Trace,
    ph: np.ndarray,
    cfg: ReplayConfig,
    *,
    done: int,
    ls: int | None,
    judge: int,
    lifted: bool,
    completed: bool,
    pushed: float,
) -> dict:
    """Friction budget kg at lift start, peak over lift and hold, median over the hold; hand-frame creep mm/s (lifted
    only); slip onset frame; ``pushed`` and fingertip distance mm. ``ls`` None: no lift; ``ph`` (done,) phases."""
    body_pos, body_quat = tr.body_pos, tr.body_quat
    budget = diagnosis.friction_budget_kg(tr.friction_force[:done])
    carry = np.flatnonzero((ph == PHASE_LIFT) | (ph == PHASE_HOLD))
    budget_peak = float(np.max(budget[carry])) if carry.size and np.all(np.isfinite(budget[carry])) else None
    hold = np.flatnonzero(ph == PHASE_HOLD)
    in_hand = diagnosis.object_in_hand(body_pos[:done, 0], body_quat[:done, 0], body_pos[:done, -1])
    creep = diagnosis.creep_rate_mm_s(in_hand[hold], cfg.frame_dt) if lifted and hold.size else None
    onset = (
        diagnosis.slip_onset(in_hand[: judge + 1], ls, cfg.lift.diag_slip_onset_mm / 1000.0) if ls is not None else None
    )
    tip_mm = (
        None
        if tr.fingertip_distance is None or not np.isfinite(tr.fingertip_distance)
        else tr.fingertip_distance * 1000.0
    )
    return dict(
        friction_budget_at_lift_kg=float(budget[ls]) if ls is not None and ls < done else None,
        friction_budget_peak_kg=budget_peak,
        friction_budget_hold_kg=float(np.median(budget[hold])) if completed and hold.size else None,
        creep_mm_s=creep,
        slip_onset_frame=onset,
        pushed_mm=pushed * 1000.0,
        fingertip_distance_mm=tip_mm,
    )
