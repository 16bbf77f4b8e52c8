"""The per-control-frame targets of a replay (:class:`Plan`) and the phase codes (:class:`replay.results.records.Phase`:
0 settle, 1 approach, 2 lift, 3 hold, 4 shake, 5 recorded, 6 release)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from replay.errors import DataError
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.results.records import Phase

#: the :class:`Phase` codes as plain ints, in its order
PHASE_SETTLE, PHASE_APPROACH, PHASE_LIFT, PHASE_HOLD, PHASE_SHAKE, PHASE_RECORDED, PHASE_RELEASE = map(int, Phase)


@dataclass
class Plan:
    """Per control frame targets: ``coords`` (F, 67) (free joint = wrist target), ``vel`` (F, 3) m/s, ``omega`` (F, 3)
    rad/s world, ``acc`` (F, 3) m/s^2, ``phase`` (F,); ``rec_time`` (F,) s replayed (None: not a recorded plan);
    ``fell_off_m`` m below the support a world stops (None: never); ``contact_coords`` (T, 67) (None: the input);
    ``pad_plan`` (lift, depth > 0); ``touch`` (16,) m bone-object distance at the grasp frame."""

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


def lift_start(phase: np.ndarray) -> int | None:
    """The frame before the lift's first (rises are measured from it); None without a lift."""
    lift = np.flatnonzero(np.asarray(phase) == PHASE_LIFT)
    return int(lift[0]) - 1 if lift.size else None


def hold_end(phase: np.ndarray) -> int:
    """One past the hold's last frame (``len(phase)`` without a hold): the lift is judged before it."""
    hold = np.flatnonzero(np.asarray(phase) == PHASE_HOLD)
    return int(hold[-1]) + 1 if hold.size else len(phase)


def plan_from_rows(rows: list, phase: list, fdt: float, *, start_frame: int, grasp_frame: int, **kw) -> Plan:
    """A :class:`Plan` from coords rows (67,) and phase codes: wrist velocity, angular velocity (world, rad/s) and
    acceleration by finite differences over ``fdt`` s, zero while settling."""
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
    rec, coords: np.ndarray, approach_window_s: float | None, *, stop: int | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(times (K,) s, coords (K, 67), first index)``, K >= 2, of the tracked frames from ``approach_window_s`` s
    before the grasp (None: the first) to ``stop`` (exclusive). Raises DataError (coords not finite (T, 67) where
    tracked, fewer than 2 tracked frames)."""
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
