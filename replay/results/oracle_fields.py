"""The hug-oracle protocol's settings (``config.oracle``), one field per element of the HUG authors' grasp oracle, read
by :mod:`replay.protocol.oracle_plan` and :mod:`replay.protocol.oracle_success`. Sources in short: HUG = *Human
Universal Grasping*, arXiv:2606.17054 (app. E.1/E.2, tables 2 and 7); manosim = ``config/myhand.yaml`` and ``README.md``
at c96e2d5; a value HUG does not state says so. Units SI (m, s, rad, N·m) unless named (deg)."""

from __future__ import annotations

from dataclasses import dataclass

from replay.errors import DataError
from replay.results.config_parts import check_ranges
from replay.results.config_parts import setting as _f

#: finger force range standing for "no force range" (manosim's authored actuators): kp 30 N·m/rad
#: times the largest possible joint error (pi rad) is 94 N·m, so a +-1000 N·m range never binds
ORACLE_NO_LIMIT_NM = 1000.0
#: control rate of the oracle's 2 ms step (50 Hz x 10 substeps), Hz
ORACLE_CONTROL_FPS = 50.0

#: ``start``'s choices: the synthetic start (HUG's), the recorded approach
START_SYNTHETIC, START_RECORDED = "synthetic", "recorded"
#: ``contact``'s: contact as manosim authored it, our compiled pairs
CONTACT_MANOSIM, CONTACT_COMPILED = "manosim", "compiled"
#: ``success``'s: HUG's off-the-table test, the lift protocol's rise and clearance test
SUCCESS_OFF_TABLE, SUCCESS_LIFT = "off_table", "lift"

_CHOICES = {
    "start": (START_SYNTHETIC, START_RECORDED),
    "contact": (CONTACT_MANOSIM, CONTACT_COMPILED),
    "success": (SUCCESS_OFF_TABLE, SUCCESS_LIFT),
}


@dataclass
class OracleSettings:
    """``config.oracle``, read only by ``--protocol hug-oracle``."""

    start: str = _f(
        "synthetic",
        "-",
        "HUG app. E.1: synthetic = start at the recording's terminal grasp (hand pose relative to "
        "the object at the grasp frame, object at rest), wrist backed off offset_m along its own +x and +y "
        "(right hand: away from fingers and palm; manosim README wrist frame), fingers flat, thumb base pre-bent; "
        "recorded = the lift protocol's recorded approach at replay_speed",
    )
    offset_m: float = _f(0.03, "m", "HUG app. E.1: wrist placed 3 cm back along each of its own +x and +y")
    thumb_prebend_rad: float = _f(
        1.0,
        "rad",
        "HUG app. E.1: thumb base pre-bent 1.0 rad; axis not stated: the axis of the recorded thumb-base "
        "rotation at the grasp (so the pre-bend is toward the recorded thumb; our choice)",
    )
    closure_s: float = _f(
        1.0,
        "s",
        "closure: wrist on a straight line to the grasp, fingers slerped to the recorded angles (HUG app. "
        "E.1); duration not stated: 1 s (a human reach-to-grasp closure is ~0.5-1 s, Jeannerod 1984), min-jerk timed",
    )
    extra_flexion_deg: float = _f(
        5.0,
        "deg",
        "HUG app. E.1 'small extra flexion', size not stated: each finger joint turned this far beyond "
        "its recorded grasp rotation about that rotation's own axis (joints under 5 deg left as recorded); our "
        "choice, of the scale of the landmark IK's error (scripts/bridge.py sweeps it)",
    )
    contact: str = _f(
        "manosim",
        "-",
        "manosim = contact as authored (solref 0.04 1, solimp 0.5 0.95 0.001 on every finger pair, "
        "priority-1 palm solimp 0.005 0.9 0.025; manosim myhand.yaml default_geom/palm_contact): the protocol's "
        "physics departure contact_mixing 'hand' (replay.protocol.oracle_plan.oracle_config); compiled = our mixed "
        "pairs (contact_mixing as the physics has it)",
    )
    dt: float | None = _f(
        0.002,
        "s",
        "HUG: physics step 2 ms (control 50 Hz x 10 substeps); None = the lift protocol's "
        "control_fps x substeps (1/240 s)",
    )
    lift_height: float = _f(0.5, "m", "HUG app. E.2: the wrist rises 0.5 m")
    lift_s: float = _f(2.0, "s", "not stated by HUG: 0.5 m min-jerk over 2 s (0.25 m/s mean, 0.47 m/s peak)")
    hold_s: float = _f(
        0.5,
        "s",
        "not stated by HUG: after the rise the wrist holds; off_table success needs no object-support "
        "contact at any control frame of this hold (and the object above its rest height)",
    )
    success: str = _f(
        "off_table",
        "-",
        "off_table = HUG app. E.2: the object no longer touches the table (replay.protocol."
        "oracle_success); lift = the lift protocol's lift_height / lift_s / hold_s and rise + clearance test",
    )

    def validate(self, prefix: str = "config.oracle") -> OracleSettings:
        """:class:`DataError` naming a field out of range or choices."""
        check_ranges(
            self,
            prefix,
            positive=("closure_s", "lift_height", "lift_s", "hold_s"),
            nonneg=("offset_m", "thumb_prebend_rad", "extra_flexion_deg"),
            choices=_CHOICES,
        )
        if self.dt is not None and not self.dt > 0:
            raise DataError(None, f"{prefix}.dt", f"must be > 0 or null, got {self.dt!r}")
        if (
            self.dt is not None
            and abs(round(1.0 / (ORACLE_CONTROL_FPS * self.dt)) * self.dt * ORACLE_CONTROL_FPS - 1.0) > 1e-9
        ):
            raise DataError(
                None,
                f"{prefix}.dt",
                f"{self.dt!r} s does not divide the oracle's {1.0 / ORACLE_CONTROL_FPS} s control period",
            )
        return self
