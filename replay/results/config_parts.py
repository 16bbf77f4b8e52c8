"""The parts of :class:`replay.config.ReplayConfig` of one protocol or engine (``config.lift``, ``config.steel``,
``config.contact_budget``); fields carry ``unit`` and ``source`` metadata, none a physics value."""

from __future__ import annotations

from dataclasses import dataclass

from replay.errors import DataError
from replay.results.rollout_parts import described


def setting(default, unit: str, source: str):
    """A config field with ``unit`` and ``source`` metadata (:func:`~replay.results.rollout_parts.described`)."""
    return described(unit, source, default, key="source")


_f = setting


def check_ranges(part, prefix: str, *, positive=(), nonneg=(), choices=None) -> None:
    """DataError naming ``<prefix>.<field>``: not > 0 (``positive``), < 0 (``nonneg``), not in ``choices``."""
    for name in positive:
        if not getattr(part, name) > 0:
            raise DataError(None, f"{prefix}.{name}", f"must be > 0, got {getattr(part, name)!r}")
    for name in nonneg:
        if not getattr(part, name) >= 0:
            raise DataError(None, f"{prefix}.{name}", f"must be >= 0, got {getattr(part, name)!r}")
    for name, ok in (choices or {}).items():
        if getattr(part, name) not in ok:
            raise DataError(None, f"{prefix}.{name}", f"{getattr(part, name)!r} not in {ok}")


@dataclass
class LiftSettings:
    """The lift protocol's plan (lift, hold, shake, release, pad compression's reach), success test and diagnosis
    thresholds. Units SI (m, s) unless named (mm, deg, Hz)."""

    lift_height: float = _f(0.18, "m", "manosim-in-Newton: standardized 18 cm vertical lift")
    lift_s: float = _f(1.2, "s", "manosim-in-Newton: 0.15 m/s mean lift speed (5 mm per 30 fps frame)")
    lift_profile: str = _f("minjerk", "-", "quintic min-jerk s(t)=10t^3-15t^4+6t^5: zero velocity/acceleration at ends")
    hold_s: float = _f(0.6, "s", "manosim-in-Newton: 0.6 s hold")
    grip_overshoot: float = _f(
        0.0,
        "1",
        "during lift and hold the finger targets extrapolate the recorded closure (window start -> grasp) "
        "by this fraction past the grasp pose; 0 = the manosim-in-Newton protocol (targets held at the grasp frame)",
    )
    shake_s: float = _f(
        2.0,
        "s",
        "shake test after the hold, only when the object was lifted (it does not change `lifted`, "
        "which is judged at the end of the hold); 0 = off. Our choice: a cyclic load exposes slip that a static "
        "hold hides",
    )
    shake_amplitude: float = _f(
        0.03, "m", "peak lateral wrist displacement along world X (Y: half of it at twice the rate)"
    )
    shake_hz: float = _f(1.0, "Hz", "shake frequency; amplitude ramps in and out over a quarter period (min-jerk)")
    release_s: float = _f(
        0.5,
        "s",
        "release after the hold and shake of a lifted object: the fingers open to the first replayed "
        "(pre-grasp) pose over this long, wrist held (FET005 grasp_and_lift Opening: 0.5 s); the object must then "
        "fall by max(5 cm, its height) or the rollout is `stuck` (replay.protocol.release); 0 = off",
    )
    release_fall_s: float = _f(
        0.5, "s", "after the release, time for the object to fall (one dropped from the 18 cm lift lands in 0.19 s)"
    )
    lifted_min_rise: float = _f(0.09, "m", "object rose at least half the lift (moved up with the hand)")
    lifted_min_clearance: float = _f(0.01, "m", "lowest collision vertex above the support at the end of the hold")
    shake_max_slip: float = _f(0.02, "m", "held through the shake: object moved less than this in the wrist frame")
    diag_push_mm: float = _f(
        20.0,
        "mm",
        "diagnosis `pushed_away`: the object moved more than this before the lift (any collision "
        "vertex): about a fingertip's width, well above what an object rolling by itself on the GRAB table moves "
        "(the contact ablation); a grasp displaced by more is not the recorded one",
    )
    diag_grip_lever_m: float = _f(
        0.1,
        "m",
        "diagnosis `too_heavy` needs a real squeeze: a peak friction budget of at least one fingertip pressing "
        "at its capacity (replay.sim.finger_strength.one_tip_force: the index finger's pad force, or a uniform "
        "limit over this lever, the manosim finger from knuckle to tip; / g kg at mu = 1); a lighter grip was too "
        "light to blame the mass (`never_gripped` or `slid_out`, light_grip)",
    )
    diag_never_rose_mm: float = _f(
        10.0,
        "mm",
        "diagnosis `never_gripped` vs `slid_out`: an object whose origin never rose this far above its "
        "lift-start height during lift and hold was never gripped (it never left the table); the datasets' "
        "lift-onset threshold (replay.data.adapter_fields.LIFT_THRESHOLD_M), above what a held object moves in the "
        "hand over lift and hold",
    )
    diag_slip_onset_mm: float = _f(
        5.0,
        "mm",
        "diagnosis `slid_out`: slip begins at the first frame after lift start where the object moved "
        "this far in the wrist frame (above what a lifted object moves in the hand over lift and hold)",
    )
    pad_near_mm: float = _f(
        10.0,
        "mm",
        "pad compression closes only fingers whose nearest capsule is within this of "
        "the object at the grasp frame (a fingertip pad's width; landmark IK p90 ~4 mm)",
    )
    pad_max_deg: float = _f(
        30.0,
        "deg",
        "largest pad-compression closure (or opening) per finger; a finger that does not reach "
        "the depth within it is left as recorded (status unreached)",
    )
    pad_blend_s: float = _f(
        0.25,
        "s (recorded)",
        "the closure is blended in (smoothstep) over this much recorded "
        "time before the grasp frame (a step would jerk the finger drives); an opening of deep fingers changes by "
        "at most pad_max_deg per this much recorded time",
    )
    pad_axis: str = _f(
        "recorded",
        "-",
        "recorded: close along each joint's recorded flexion (most open pose in the "
        "window -> grasp); anatomical: about bone x palm normal",
    )

    def validate(self, prefix: str = "config.lift") -> LiftSettings:
        """Check ranges; raise :class:`DataError` naming the field."""
        check_ranges(
            self,
            prefix,
            positive=("lift_s", "hold_s", "shake_hz"),
            nonneg=(
                "shake_s",
                "shake_amplitude",
                "shake_max_slip",
                "release_s",
                "release_fall_s",
                "pad_near_mm",
                "pad_max_deg",
                "pad_blend_s",
            ),
            choices={"lift_profile": ("minjerk", "linear"), "pad_axis": ("recorded", "anatomical")},
        )
        return self


@dataclass
class SteelSettings:
    """The Steel engine's settings (newton.solvers.SolverSteel, :mod:`replay.sim.engine.steel`)."""

    iterations: int = _f(
        20,
        "1",
        "PGS iterations per step (SolverSteel default 12); our choice, above the default",
    )
    friction_mode: str = _f(
        "fixed_normal",
        "-",
        "SolverSteel default and, on a CPU device, its only mode (its docstring: the other modes "
        "raise NotImplementedError there; bisection_desaxce, CUDA only, is point friction)",
    )
    baumgarte: float = _f(
        0.2,
        "1",
        "fraction of a contact's penetration removed per step (SolverSteel default 0.2); a held object's creep "
        "comes from this term",
    )
    row_headroom: float = _f(
        3.0,
        "1",
        "row budgets = this x the rows a watermark probe requested (settle at the first pose, then one "
        "step at the grasp pose set kinematically); a dropped row is a hard failure, never silent",
    )
    rows_min: int = _f(
        64,
        "rows",
        "floor of each measured row budget; SolverSteel's default articulation_constraint_max 32 "
        "is ten 3-row contacts, fewer than a grasp has",
    )
    probe_rows: int = _f(2048, "rows", "row budget of the watermark probe (large enough that it drops none)")
    row_budget: int | None = _f(
        None,
        "rows",
        "explicit budget of each row family (articulation, free body); None = measured by the probe "
        "(steel_row_headroom, steel_rows_min)",
    )
    contact_max: int | None = _f(
        None,
        "contacts",
        "collision pipeline contact buffer; None = Newton's estimate from the model (a full buffer is a hard failure)",
    )
    angular_damping: float = _f(
        0.0,
        "1/s",
        "steel:rigid_body_angular_damping of free bodies and the hand's floating base; SolverSteel's "
        "default 0.05 (PhysX's); 0 = none, as in MuJoCo",
    )

    def validate(self, prefix: str = "config.steel") -> SteelSettings:
        """Check ranges; raise :class:`DataError` naming the field."""
        for name, low in (("iterations", 1), ("row_headroom", 1.0), ("rows_min", 1), ("probe_rows", 1)):
            if not getattr(self, name) >= low:
                raise DataError(None, f"{prefix}.{name}", f"must be >= {low}, got {getattr(self, name)!r}")
        if not 0 <= self.baumgarte <= 1:
            raise DataError(None, f"{prefix}.baumgarte", f"must be in [0, 1], got {self.baumgarte!r}")
        if self.row_budget is not None and not self.row_budget >= 1:
            raise DataError(None, f"{prefix}.row_budget", f"must be >= 1 or None, got {self.row_budget!r}")
        check_ranges(
            self,
            prefix,
            nonneg=("angular_damping",),
            choices={"friction_mode": ("fixed_normal", "bisection", "bisection_desaxce", "coulomb_newton")},
        )
        return self


@dataclass
class ContactBudget:
    """The contact buffer, sized from the resting contacts (:mod:`replay.sim.scene`)."""

    headroom: float = _f(6.0, "1", "manosim-in-Newton: a closing hand makes several times the resting contacts")
    capacity_min: int = _f(64, "contacts", "floor for the measured capacity (scene with few resting contacts)")
    capacity: int | None = _f(None, "contacts", "explicit capacity; None = measured resting count x headroom")

    def validate(self, prefix: str = "config.contact_budget") -> ContactBudget:
        """Check ranges; raise :class:`DataError` naming the field."""
        check_ranges(self, prefix, positive=("headroom",))
        return self
