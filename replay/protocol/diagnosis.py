"""Why a grasp failed, from measured signals only (docs/fidelity.md, "Why a grasp fails"): friction budget ``sum(mu_i
N_i) / g``, creep and slip in the hand frame, the first :data:`CLASSES` entry that applies. World frame, Z up;
positions m, quaternions xyzw, forces N."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import GRAVITY

CLASSES = (
    "unstable",
    "stuck_after_release",
    "no_contact",
    "pushed_away",
    "too_heavy",
    "never_gripped",
    "slid_out",
    "shaken_loose",
)


def friction_budget_kg(friction_force: np.ndarray) -> np.ndarray:
    """(F,) supported mass by friction alone, kg, from per-frame ``sum(mu_i N_i)`` (F,) N."""
    return np.asarray(friction_force, float) / GRAVITY


def object_in_hand(wrist_pos, wrist_quat, obj_pos) -> np.ndarray:
    """(F, 3) object origin in the wrist (root body) frame, m, from (F, 3) positions and (F, 4) xyzw."""
    r = Rotation.from_quat(np.asarray(wrist_quat, float))
    return r.inv().apply(np.asarray(obj_pos, float) - np.asarray(wrist_pos, float))


def creep_rate_mm_s(in_hand: np.ndarray, frame_dt: float) -> float | None:
    """Least-squares speed, mm/s, of (F, 3) hand-frame positions, m, every ``frame_dt`` s; None under 3 frames."""
    x = np.asarray(in_hand, float)
    if len(x) < 3 or not np.all(np.isfinite(x)):
        return None
    t = np.arange(len(x)) * frame_dt
    v = np.polyfit(t, x, 1)[0]  # (3,) m/s
    return float(np.linalg.norm(v) * 1000.0)


def slip_onset(in_hand: np.ndarray, ref: int, threshold_m: float) -> int | None:
    """First frame after ``ref`` with the object over ``threshold_m`` m from its hand-frame position then; None."""
    d = np.linalg.norm(np.asarray(in_hand, float)[ref:] - in_hand[ref], axis=1)
    hit = np.flatnonzero(d > threshold_m)
    return int(ref + hit[0]) if hit.size else None


def peak_rise_mm(obj_z: np.ndarray, phase: np.ndarray, lift_start: int | None, *, phases) -> float | None:
    """Largest object-origin rise, mm, over the frames whose phase is in ``phases`` above its height at ``lift_start``;
    ``obj_z`` (F,) world z, m. None without a lift or with non-finite heights."""
    if lift_start is None:
        return None
    idx = np.flatnonzero(np.isin(np.asarray(phase), phases))
    z = np.asarray(obj_z, float)
    if not idx.size or not np.all(np.isfinite(z[idx])):
        return None
    return float((np.max(z[idx]) - z[lift_start]) * 1000.0)


def diagnose(
    m: dict,
    *,
    object_mass: float,
    effort_limit: float,
    pushed_mm: float,
    budget_peak_kg: float | None,
    fingertip_distance_mm: float | None,
    slip_onset_frame: int | None,
    cfg,
    peak_rise: float | None = None,
) -> dict | None:
    """``{"class": one of CLASSES, "figure": {...}}`` of metrics ``m``, None if lifted and held. ``too_heavy``: budget
    below the mass but at least one fingertip's ``effort_limit`` (N·m) ``/ diag_grip_lever_m / g`` kg."""
    if m["outcome"] == "unstable":
        return {"class": "unstable", "figure": {"reason": m["unstable_reason"], "frame": m["unstable_frame"]}}
    if m.get("stuck_after_release"):  # the hand opened and the object stayed: something else held it
        return {
            "class": "stuck_after_release",
            "figure": {
                "release_fall_m": m.get("release_fall_m"),
                "release_fall_needed_m": m.get("release_fall_needed_m"),
            },
        }
    if m["lifted"]:
        if m.get("shake_held") is False:
            return {"class": "shaken_loose", "figure": {"shake_slip_mm": m.get("shake_slip_mm")}}
        return None
    if not m.get("contacts_force_at_lift"):
        return {
            "class": "no_contact",
            "figure": {"fingertip_distance_mm": fingertip_distance_mm, "contacts_at_lift": m.get("contacts_at_lift")},
        }
    if pushed_mm > cfg.lift.diag_push_mm:
        return {"class": "pushed_away", "figure": {"pushed_mm": pushed_mm, "threshold_mm": cfg.lift.diag_push_mm}}
    one_tip_kg = effort_limit / cfg.lift.diag_grip_lever_m / GRAVITY
    if budget_peak_kg is not None and one_tip_kg <= budget_peak_kg < object_mass:
        return {
            "class": "too_heavy",
            "figure": {
                "friction_budget_kg": budget_peak_kg,
                "object_mass_kg": object_mass,
                "one_fingertip_kg": one_tip_kg,
                "peak_rise_mm": peak_rise,
            },
        }
    return _lost(m, peak_rise, budget_peak_kg, one_tip_kg, object_mass, slip_onset_frame, cfg)


def _lost(m: dict, peak_rise, budget_peak_kg, one_tip_kg, object_mass, slip_onset_frame, cfg) -> dict:
    """``never_gripped`` (peak rise below ``diag_never_rose_mm``) or ``slid_out`` (it rose, then fell)."""
    rise = m.get("rise")
    end_mm = None if rise is None or not np.isfinite(rise) else float(rise) * 1000.0
    light = None if budget_peak_kg is None else bool(budget_peak_kg < one_tip_kg)
    fig = {
        "peak_rise_mm": peak_rise,
        "end_rise_mm": end_mm,
        "threshold_mm": cfg.lift.diag_never_rose_mm,
        "friction_budget_kg": budget_peak_kg,
        "object_mass_kg": object_mass,
        "light_grip": light,
    }
    if peak_rise is None or peak_rise < cfg.lift.diag_never_rose_mm:
        return {"class": "never_gripped", "figure": fig}
    # held, then lost: how far it ended from where the hand held it, and when it began to slide
    fig.update(slip_mm=m.get("separation_mm", m.get("slip_mm")), onset_frame=slip_onset_frame)
    return {"class": "slid_out", "figure": fig}
