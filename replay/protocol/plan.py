"""The per-control-frame targets of a replay (:class:`Plan`) and the phase codes.

Every protocol's plan builder (:mod:`replay.protocol.protocols`) makes one;
:func:`replay.protocol.step_plan.step_protocol` steps any.

Phase codes (``phase`` in the saved poses) are :class:`replay.results.records.Phase`: 0 settle,
1 approach, 2 lift, 3 hold, 4 shake (lift protocol), 5 recorded manipulation after the grasp
(recorded protocol).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from replay.errors import DataError
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.results.records import Phase

PHASE_SETTLE, PHASE_APPROACH, PHASE_LIFT, PHASE_HOLD, PHASE_SHAKE, PHASE_RECORDED, PHASE_RELEASE = (
    int(Phase.SETTLE),
    int(Phase.APPROACH),
    int(Phase.LIFT),
    int(Phase.HOLD),
    int(Phase.SHAKE),
    int(Phase.RECORDED),
    int(Phase.RELEASE),
)


@dataclass
class Plan:
    """Per control frame targets for a rollout.

    Attributes:
        coords: (F, 67) hand coords targets (free pos/quat used as wrist target).
        vel: (F, 3) wrist linear velocity target, m/s. omega: (F, 3) rad/s, world.
        acc: (F, 3) wrist linear acceleration target, m/s^2.
        phase: (F,) int phase codes.
        start_frame / grasp_frame: recording frames the approach spans.
        rec_time: (F,) recording time, s, each control frame replays (recorded plans; else None).
        fell_off_m: m: a world whose object falls this far below the support's top stops (lost); None: never.
        contact_coords: (T, 67) the coords the recorded contact is read from where they are not the
            plan's input (the lift plan's before pad compression); None: the input.
        pad: the pad-compression summary of a lift plan where its depth is > 0.
        pad_plan: its :class:`replay.protocol.pad_compression.PadPlan` (each world's own closure).
        touch: (16,) signed distance, m, of each recorded bone to the object at the grasp frame
            (:func:`replay.protocol.contact_agreement.recorded_bone_distances`), set by the rollout.
    """

    coords: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    acc: np.ndarray
    phase: np.ndarray
    start_frame: int
    grasp_frame: int
    rec_time: np.ndarray | None = None
    fell_off_m: float | None = None
    pad: dict | None = None  # pad compression summary (replay.protocol.pad_compression), lift plans where it ran
    pad_plan: object = None  # replay.protocol.pad_compression.PadPlan, lift plans where it ran
    touch: np.ndarray | None = None  # (16,) m: recorded bone-object distances at the grasp (contact_agreement)
    contact_coords: np.ndarray | None = field(default=None, repr=False)


def plan_from_rows(rows: list, phase: list, fdt: float, start_frame: int, grasp_frame: int, **kw) -> Plan:
    """A :class:`Plan` from per-frame coords rows (67,) and phase codes: wrist velocity,
    angular velocity (world, rad/s) and acceleration by finite differences over ``fdt`` s,
    zero while settling. ``kw``: ``rec_time``, ``fell_off_m``."""
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
    return Plan(C, vel, omega, acc, ph, int(start_frame), int(grasp_frame), **kw)


def replayed_frames(
    rec, coords: np.ndarray, approach_window_s: float | None, stop: int | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """The tracked recorded frames a protocol replays: from ``approach_window_s`` (s) before the
    grasp frame (None: from the first frame) up to ``stop`` (exclusive; None: to the end).

    Args:
        rec: the recording (``time`` (T,) s, ``valid`` (T,) bool, ``grasp_frame``).
        coords: (T, 67) hand coords per recorded frame (Newton joint_q order, xyzw).

    Returns:
        ``(times (K,) s, coords (K, 67), first replayed frame index)``, K >= 2.

    Raises:
        DataError: coords of the wrong shape or non-finite where tracked, or fewer than 2
            tracked frames in the window.
    """
    T = rec.num_frames
    if coords.shape != (T, MANOSIM_HAND.coords) or not np.all(np.isfinite(coords[rec.valid])):
        raise DataError(
            rec.source, "hand_coords", f"expected finite (T={T}, {MANOSIM_HAND.coords}), got {coords.shape}"
        )
    t0 = float(rec.time[0])
    t_s = t0 if approach_window_s is None else max(t0, float(rec.time[int(rec.grasp_frame)]) - approach_window_s)
    s = int(np.searchsorted(rec.time, t_s))
    stop = T if stop is None else stop
    sel = np.flatnonzero(rec.valid[s:stop]) + s
    if sel.size < 2:
        raise DataError(rec.source, "valid", f"fewer than 2 tracked frames between frame {s} and frame {stop - 1}")
    return rec.time[sel], coords[sel], int(sel[0])
