"""The release (FET005 grasp_and_lift's Opening and Dropping): fingers slerp to the pre-grasp pose over ``release_s``,
then ``fall_s``; a lifted object not fallen by ``max(MIN_FALL_M, its height)`` is ``stuck_after_release``."""

from __future__ import annotations

import math

import numpy as np

from replay.kinematics.hand_layout import MANOSIM_HAND, finger_quats
from replay.kinematics.quat import quat_slerp
from replay.protocol.plan import PHASE_RELEASE, Plan, plan_from_rows

#: FET005 grasp_and_lift Dropping: the centroid falls by at least max(0.05 m, the object's height)
MIN_FALL_M = 0.05


def extend_plan(plan: Plan, pre_grasp: np.ndarray, fdt: float, *, release_s: float, fall_s: float) -> Plan:
    """``plan`` with the release appended (``release_s`` <= 0: unchanged; config ``lift.release_s`` /
    ``release_fall_s``); ``pre_grasp`` (67,) open hand; ``fdt`` s."""
    if release_s <= 0:
        return plan
    last = plan.coords[-1]
    q_grasp, q_open = finger_quats(last), finger_quats(np.asarray(pre_grasp, float))
    n_open = max(1, int(math.ceil(release_s / fdt)))
    n_fall = max(0, int(math.ceil(fall_s / fdt)))
    rows, phase = list(plan.coords), list(plan.phase)
    for k in range(1, n_open + n_fall + 1):
        r = last.copy()
        a = min(k / n_open, 1.0)
        r[MANOSIM_HAND.finger_coord_start :] = quat_slerp(q_grasp, q_open, a).reshape(-1)
        rows.append(r)
        phase.append(PHASE_RELEASE)
    return plan_from_rows(
        rows, phase, fdt, start_frame=plan.start_frame, grasp_frame=plan.grasp_frame, rec_time=plan.rec_time
    )


def opening_fraction(phase: np.ndarray, fdt: float, release_s: float) -> np.ndarray:
    """(F,) how far the fingers have opened per frame, 0-1, as :func:`extend_plan` slerps; all 0 without a release."""
    phase = np.asarray(phase)
    out = np.zeros(len(phase))
    s = pre_release_end(phase)
    if release_s <= 0 or s >= len(phase):
        return out
    n_open = max(1, int(math.ceil(release_s / fdt)))
    out[s:] = np.minimum(np.arange(1, len(phase) - s + 1) / n_open, 1.0)
    return out


def pre_release_end(phase: np.ndarray) -> int:
    """The index of the release's first frame (``len(phase)`` without one): hold and shake measures stop here."""
    idx = np.flatnonzero(np.asarray(phase) == PHASE_RELEASE)
    return int(idx[0]) if idx.size else int(len(phase))


def release_metrics(
    phase: np.ndarray,
    object_z: np.ndarray,
    done: int,
    *,
    lifted: bool,
    height: float,
    held: bool | None = None,
    rest_z: float | None = None,
    cut: bool = False,
) -> dict:
    """``release_ran``, ``release_fall_m`` (z at release start minus the lowest after, m), ``release_fall_needed_m``,
    ``stuck_after_release`` (None: not run), ``lifted_after_release``. ``object_z`` (F,) m world; ``rest_z`` m caps the
    fall needed at half the rise (None: no cap); ``cut``: trouble in the release, judged only if fallen enough."""
    s = pre_release_end(phase)
    need = max(MIN_FALL_M, float(height))
    if rest_z is not None and s - 1 < len(object_z) and np.isfinite(object_z[s - 1]):
        need = min(need, 0.5 * max(float(object_z[s - 1]) - float(rest_z), 0.0))
    ran = bool(lifted and (held is None or held) and s < len(phase) and done > s)
    fall = stuck = None
    if ran:
        z = np.asarray(object_z[:done], float)
        fall = float(z[s - 1] - np.nanmin(z[s:]))
        if not (cut and not fall >= need):  # cut: the trace ends before the object could fall, no verdict
            stuck = not fall >= need
    return dict(
        release_ran=ran,
        release_fall_m=fall,
        release_fall_needed_m=need,
        stuck_after_release=stuck,
        lifted_after_release=bool(lifted and not stuck),
    )
