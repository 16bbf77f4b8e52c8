"""Every knob a replay depends on, with its default, unit and source.

A :class:`ReplayConfig` is written into every result file next to the package
versions and input hashes, so a result can be reproduced from its JSON alone
(:meth:`ReplayConfig.from_dict` reads it back).

Each field carries ``metadata={"unit": ..., "source": ...}``; :func:`describe`
prints the table. Sources named in short:

* "manosim-in-Newton": the report *manosim in Newton: replaying human grasps from HUG*
  (2026; Newton branch ``eric/manosim-mjcf``, manosim 75c77c0; HUG: arXiv:2606.17054), the
  replay of HUG-Bench MANO trajectories with the unmodified manosim MJCF that this
  project rebuilds, whose protocol figures are the defaults here;
* "MuJoCo modeling guide": mujoco.readthedocs.io, *Modeling > Contact* (elliptic cones
  with ``impratio`` about 10 for slip-sensitive grasps; friction is a soft constraint
  that creeps under load).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from replay.errors import DataError
from replay.results import physics_table
from replay.results.engine_choice import DEVICES, EngineChoice, from_legacy
from replay.results.judge import DEFAULT_JUDGE
from replay.results.legacy_physics import legacy_physics_overrides
from replay.results.oracle_fields import OracleFields

#: gravity's magnitude, m/s^2, acting along world -Z: MuJoCo's default ``opt.gravity``
#: (0, 0, -9.81) and Newton's ``ModelBuilder`` default; the one value every module uses
#: (scene gravity, wrist gravity compensation, friction budget in kg).
GRAVITY = 9.81


def _f(default, unit: str, source: str):
    return field(default=default, metadata={"unit": unit, "source": source})


@dataclass
class ReplayConfig(OracleFields):
    """Settings of one replay study. All units SI (m, s, kg, N, N·m, rad). The ``oracle_*``
    fields of the hug-oracle protocol are declared in :class:`replay.results.oracle_fields.OracleFields`."""

    preset: str | None = _f(
        None,
        "-",
        "the named, versioned preset these settings came from (replay.study.presets.PRESETS, "
        "`run_study.py --preset`: name@version); None = set field by field",
    )

    physics: str = _f(
        DEFAULT_JUDGE.physics,
        "-",
        "the named physics (replay.sim.physics.PHYSICS): authored = the hand and object files as written "
        "plus MuJoCo's defaults; replay = the project's declared choices (each with its source in the table); "
        "`run_study.py --physics`; default: the default judge's (replay.results.judge.DEFAULT_JUDGE)",
    )
    physics_overrides: dict = field(
        default_factory=dict,
        metadata={
            "unit": "-",
            "source": "departures {choice: value} from the named physics (replay.sim.physics; "
            "`run_study.py --physics-set NAME=VALUE`, `--hand-shape` (hand_shape; the dataset's default written by "
            "resolve_hand_variant), the hug-oracle's oracle_contact (contact_mixing), the verdict's conditions, the "
            "bridge), each listed in the rollout's `physics`; the table (replay.results.physics_table) is the one home "
            "of these values: no other config field holds one",
        },
    )

    # --- timing -------------------------------------------------------------------
    control_fps: float = _f(30.0, "Hz", "manosim-in-Newton: 30 fps control, poses saved per control frame")
    substeps: int = _f(8, "1", "manosim-in-Newton: 8 substeps per control frame -> dt = 1/240 s")

    # --- solver (newton.solvers.SolverMuJoCo) ----------------------------------------
    solver: str = _f("newton", "-", "manosim-in-Newton: MuJoCo Newton solver")
    iterations: int = _f(100, "1", "MuJoCo default")
    ls_iterations: int = _f(50, "1", "MuJoCo default")
    tolerance: float = _f(1e-8, "1", "MuJoCo default")
    engine: EngineChoice = _f(
        EngineChoice.MUJOCO_C,
        "-",
        "replay.results.engine_choice.EngineChoice: mujoco-c (the compiled MuJoCo model stepped directly, controller "
        "compiled), mujoco-warp (every variant of a recording in one launch, controller as Warp kernels), newton "
        "(every step through SolverMuJoCo.step, the reference), steel (newton.solvers.SolverSteel, Newton 1.8.0: "
        "reduced coordinates, projected Gauss-Seidel hard contact; fingers on the quaternion drive)",
    )
    device: str = _f(
        "cpu",
        "-",
        "Warp device of mujoco-warp, the Newton reference and Steel: cpu (mujoco-warp on Warp's CPU: tests and tiny "
        "benchmarks; the reference on MuJoCo C) or cuda; mujoco-c runs on cpu only",
    )

    # --- SolverSteel (engine steel, replay.sim.engine.steel) -----------------------------
    steel_iterations: int = _f(
        20,
        "1",
        "PGS iterations per step (SolverSteel default 12). shared/seeds 001 (the same solver before it "
        "shipped as SolverSteel): 20 iterations matched SolverMuJoCo's creep on a shaken grasp; below 12 the "
        "result is not monotone in the count",
    )
    steel_friction_mode: str = _f(
        "fixed_normal",
        "-",
        "SolverSteel default and, on a CPU device, its only mode (docstring: the other modes "
        "raise NotImplementedError there); bisection_desaxce (CUDA only; point friction) lowered creep "
        "0.72 -> 0.40 mm in shared/seeds 001",
    )
    steel_baumgarte: float = _f(
        0.2,
        "1",
        "fraction of a contact's penetration removed per step (SolverSteel default 0.2). Measured here "
        "(no hand contact, 3 s on the GRAB table): at 0.2 the camera creeps 0.3-0.6 mm/s, at 0.05 (or 50 "
        "iterations) it rests; shared/seeds 001: every millimetre a held object creeps comes from this term. "
        "30 GRAB lifts: 0.2 lifts 3 (1 held through the shake; slip in hand 7-26 mm; 26 of 30 ablations clean), "
        "0.05 lifts 4 (3 held; slip 0.5-3.7 mm; 28 of 30 clean); SolverMuJoCo with the same finger drive lifts 7",
    )
    steel_row_headroom: float = _f(
        3.0,
        "1",
        "row budgets = this x the rows a watermark probe requested (settle at the first pose, then one "
        "step at the grasp pose set kinematically); a dropped row is a hard failure, never silent",
    )
    steel_rows_min: int = _f(
        64,
        "rows",
        "floor of each measured row budget; SolverSteel's default articulation_constraint_max 32 "
        "is ten 3-row contacts (shared/seeds 001: it silently discards most contacts of a grasp)",
    )
    steel_probe_rows: int = _f(2048, "rows", "row budget of the watermark probe (large enough that it drops none)")
    steel_row_budget: int | None = _f(
        None,
        "rows",
        "explicit budget of each row family (articulation, free body); None = measured by the probe "
        "(steel_row_headroom, steel_rows_min)",
    )
    steel_contact_max: int | None = _f(
        None,
        "contacts",
        "collision pipeline contact buffer; None = Newton's estimate from the model (a full buffer is a hard failure)",
    )
    steel_angular_damping: float = _f(
        0.0,
        "1/s",
        "steel:rigid_body_angular_damping of free bodies and the hand's floating base; SolverSteel's "
        "default 0.05 (PhysX's); 0 = none, as in MuJoCo",
    )

    # --- contact --------------------------------------------------------------------
    contact_headroom: float = _f(6.0, "1", "manosim-in-Newton: a closing hand makes several times the resting contacts")
    contact_capacity_min: int = _f(64, "contacts", "floor for the measured capacity (scene with few resting contacts)")
    contact_capacity: int | None = _f(None, "contacts", "explicit capacity; None = measured resting count x headroom")
    contact_gap: float = _f(
        0.0,
        "m",
        "MuJoCo geom gap; the MJCF's default is 0. Newton's builder default rigid_gap 0.1 makes MuJoCo "
        "detect (and exclude from the solver) every pair within 10 cm: 3-10x the contacts, all inert",
    )
    hand_object_friction: float | None = _f(
        None,
        "1",
        "sliding friction of every hand-object contact (replay.sim.object_contact, set on the hand's and the "
        "object's geoms as a Variant's friction is); None = as built (1.0: GRAB assets and manosim geoms)",
    )
    object_density_scale: float = _f(
        1.0,
        "1",
        "object mass and inertia = this x the mass the physics choice object_mass_model gives (replay.sim.made_mass); "
        "1 = no departure",
    )
    object_ke: float = _f(
        2500.0, "N/m", "manosim-in-Newton: object contact stiffness 2500 (Newton ShapeConfig default)"
    )
    object_kd: float = _f(100.0, "N·s/m", "Newton ShapeConfig default")
    support_thickness: float = _f(0.05, "m", "table-top box thickness below the support height (GRAB tables)")
    support_friction: float = _f(1.0, "1", "MuJoCo default sliding friction")
    contact_force_min: float = _f(1e-6, "N", "a contact 'carries force' above this normal force")

    # --- hand -----------------------------------------------------------------------
    hand: str = _f("capsule", "-", "manosim README: the capsule hand is the one meant for contact")
    effort_limit: float | None = _f(
        None,
        "N·m",
        "every finger joint's effort limit where set (--effort; the hug-oracle's own, oracle_plan.oracle_config); "
        "None = the physics choice finger_effort_limit (replay: human strength per finger, replay.sim.finger_strength)",
    )
    finger_drive: str = _f(
        "mjcf",
        "-",
        "finger drive law: mjcf = the MJCF's three position actuators per ball joint (gear e_x, e_y, "
        "e_z; kp (ctrl - rotvec(q)) per axis, non-symmetric away from identity: the flutter bound); quat = "
        "tau = clip(kp log(q^-1 q_target) - kd omega, +-effort) per joint in its own frame, the imported kp/kd, "
        "as joint torque (replay.sim.engine.finger_drive; the manosim-in-Newton report's recommendation)",
    )
    flutter_safety: float = _f(1.25, "1", "raise damping to this factor x the ball-drive flutter bound where short")
    flutter_discrete_factor: float = _f(
        1.19, "1", "manosim-in-Newton: discrete-time bound 0.137 vs continuous 0.115 N·m·s/rad"
    )
    wrist_substep_interp: bool = _f(
        True, "-", "wrist target interpolated per physics step between control frames (False: held for the frame)"
    )
    wrist_gain_scale: float = _f(1.0, "1", "multiplies the imported wrist kp/kd (MJCF: 300 N/m, 50 N·m/rad)")

    # --- protocol -------------------------------------------------------------------
    settle_s: float = _f(0.5, "s", "object settles on the support before the hand moves")
    replay_speed: float = _f(0.5, "1", "manosim-in-Newton: approach and closure replayed at half speed")
    approach_window_s: float | None = _f(
        2.0, "s (recorded)", "recorded time before the grasp frame that is replayed; None = from the first frame"
    )
    recording_fps: float | None = _f(
        None,
        "Hz",
        "the recordings' frame rate as the user states it (run_study.py --fps; replay.checks.time_base): "
        "replaces the rate the dataset reader assumes; None = the reader's (file or dataset documentation)",
    )
    object_time_offset_s: float = _f(
        0.0,
        "s",
        "the object stream's lag behind the hand's as the user states it (run_study.py "
        "--object-time-offset; < 0: ahead), undone before the input checks; 0 = as recorded",
    )
    grip_overshoot: float = _f(
        0.0,
        "1",
        "during lift and hold the finger targets extrapolate the recorded closure (window start -> grasp) "
        "by this fraction past the grasp pose; 0 = the manosim-in-Newton protocol (targets held at the grasp frame)",
    )
    pad_compression_mm: float | None = _f(
        None,
        "mm",
        "finger pad compression depth where set (0 = the recorded fingers); None = the physics choice pad_compression "
        "(replay.protocol.pad_compression: at the grasp frame each finger within pad_near_mm of the object closes "
        "until its middle or distal capsule is this far inside the object's collision surface; under the physics "
        "choice pad_deep_fingers opened, one deeper is opened to it over the approach)",
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
    lift_height: float = _f(0.18, "m", "manosim-in-Newton: standardized 18 cm vertical lift")
    lift_s: float = _f(1.2, "s", "manosim-in-Newton: 0.15 m/s mean lift speed (5 mm per 30 fps frame)")
    lift_profile: str = _f("minjerk", "-", "quintic min-jerk s(t)=10t^3-15t^4+6t^5: zero velocity/acceleration at ends")
    hold_s: float = _f(0.6, "s", "manosim-in-Newton: 0.6 s hold")
    shake_s: float = _f(
        2.0,
        "s",
        "shake test after the hold, only when the object was lifted (it does not change `lifted`, "
        "which is judged at the end of the hold); 0 = off. Grasp-stability studies (shared/seeds 000) show a "
        "cyclic load exposes slip that a static hold hides",
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

    # --- success / stability thresholds --------------------------------------------
    lifted_min_rise: float = _f(0.09, "m", "object rose at least half the lift (moved up with the hand)")
    lifted_min_clearance: float = _f(0.01, "m", "lowest collision vertex above the support at the end of the hold")
    shake_max_slip: float = _f(0.02, "m", "held through the shake: object moved less than this in the wrist frame")
    ablation_clean_mm: float = _f(
        1.0,
        "mm",
        "contact ablation: without hand-object contact the object must stay put; 1 mm allows its settling on the support",
    )
    diag_push_mm: float = _f(
        20.0,
        "mm",
        "diagnosis `pushed_away`: the object moved more than this before the lift (any collision "
        "vertex). Objects rolling by themselves on the GRAB table move <= 4.6 mm (contact ablation, 30 lifts); "
        "20 mm is about a fingertip's width, a grasp displaced by more is not the recorded one",
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
        "lift-start height during lift and hold was never gripped (it never left the table). 10 mm is the datasets' "
        "lift-onset threshold (replay.data.adapter_fields.LIFT_THRESHOLD_M) and 2x the most a held object moves in the hand "
        "over lift and hold (0.9-4.6 mm, the 7 lifted GRAB rollouts)",
    )
    diag_slip_onset_mm: float = _f(
        5.0,
        "mm",
        "diagnosis `slid_out`: slip begins at the first frame after lift start where the object moved "
        "this far in the wrist frame (lifted objects move 0.9-4.6 mm in the hand over lift and hold)",
    )
    max_linear_speed: float = _f(20.0, "m/s", "runaway: any body faster than this is unstable")
    max_angular_speed: float = _f(400.0, "rad/s", "runaway: any body spinning faster than this is unstable")

    @property
    def frame_dt(self) -> float:
        """Control period, s."""
        return 1.0 / self.control_fps

    @property
    def dt(self) -> float:
        """Physics step, s (1/240 by default)."""
        return 1.0 / (self.control_fps * self.substeps)

    def __post_init__(self) -> None:
        try:
            self.engine = EngineChoice(self.engine)
        except ValueError:
            raise DataError(
                None, "config.engine", f"{self.engine!r} not in {tuple(e.value for e in EngineChoice)}"
            ) from None

    def validate(self) -> ReplayConfig:
        """Check ranges; raise :class:`DataError` naming the field."""
        pos = [
            "control_fps",
            "substeps",
            "iterations",
            "contact_headroom",
            "object_density_scale",
            "replay_speed",
            "lift_s",
            "hold_s",
            "max_linear_speed",
            "max_angular_speed",
            "shake_hz",
        ]
        for name in pos:
            if not getattr(self, name) > 0:
                raise DataError(None, f"config.{name}", f"must be > 0, got {getattr(self, name)!r}")
        for name in (
            "shake_s",
            "shake_amplitude",
            "shake_max_slip",
            "release_s",
            "release_fall_s",
            "pad_near_mm",
            "pad_max_deg",
            "pad_blend_s",
        ):
            if not getattr(self, name) >= 0:
                raise DataError(None, f"config.{name}", f"must be >= 0, got {getattr(self, name)!r}")
        choices = {
            "solver": ("newton", "cg"),
            "device": DEVICES,
            "finger_drive": ("mjcf", "quat"),
            "hand": ("capsule", "mesh"),
            "lift_profile": ("minjerk", "linear"),
            "steel_friction_mode": ("fixed_normal", "bisection", "bisection_desaxce", "coulomb_newton"),
            "pad_axis": ("recorded", "anatomical"),
        }
        for name, ok in choices.items():
            if getattr(self, name) not in ok:
                raise DataError(None, f"config.{name}", f"{getattr(self, name)!r} not in {ok}")
        if self.engine is EngineChoice.MUJOCO_C and self.device != "cpu":
            raise DataError(None, "config.device", f"engine mujoco-c runs on cpu (mujoco-warp: {self.device!r})")
        for name, low in (("effort_limit", 0.0), ("pad_compression_mm", None)):
            v = getattr(self, name)
            if v is not None and not (v > low if low is not None else v >= 0):
                raise DataError(
                    None, f"config.{name}", f"must be {'> 0' if low is not None else '>= 0'} or null, got {v!r}"
                )
        self._validate_steel()
        self._validate_oracle()
        self._validate_overrides()
        if self.finger_drive == "quat" and self.engine not in (EngineChoice.MUJOCO_C, EngineChoice.STEEL):
            raise DataError(
                None,
                "config.finger_drive",
                "'quat' runs on the engines mujoco-c and steel only so far; use finger_drive 'mjcf' on this engine",
            )
        if self.recording_fps is not None and not self.recording_fps > 0:
            raise DataError(None, "config.recording_fps", f"must be > 0 Hz or null, got {self.recording_fps!r}")
        if self.hand_object_friction is not None and not self.hand_object_friction > 0:
            raise DataError(
                None, "config.hand_object_friction", f"must be > 0 or null, got {self.hand_object_friction!r}"
            )
        edits = (
            self.object_density_scale != 1.0
            or self.hand_object_friction is not None
            or (self.physics_overrides or {}).get("contact_mixing") == "hand"
        )
        if edits and self.engine is not EngineChoice.MUJOCO_C:
            raise DataError(
                None,
                "config.object_density_scale",
                "object contact / density edits (contact_mixing 'hand' included) run on the engine mujoco-c only",
            )
        return self

    def _validate_overrides(self) -> None:
        """Each ``physics_overrides`` entry names a choice of the table and takes one of its values
        (replay.results.physics_table.VALUES; impratio > 0): :class:`DataError` naming the choice."""
        for name, value in (self.physics_overrides or {}).items():
            if name not in physics_table.CHOICES:
                raise DataError(None, "config.physics_overrides", f"unknown physics choice {name!r}")
            ok = physics_table.VALUES.get(name)
            if ok is not None and value not in ok:
                raise DataError(None, f"config.physics_overrides.{name}", f"{value!r} not in {ok}")
            if name == "impratio" and not float(value) > 0:
                raise DataError(None, "config.physics_overrides.impratio", f"must be > 0, got {value!r}")

    def _validate_steel(self) -> None:
        """The Steel backend's own settings (:class:`DataError` naming the field)."""
        for name, low in (
            ("steel_iterations", 1),
            ("steel_row_headroom", 1.0),
            ("steel_rows_min", 1),
            ("steel_probe_rows", 1),
        ):
            if not getattr(self, name) >= low:
                raise DataError(None, f"config.{name}", f"must be >= {low}, got {getattr(self, name)!r}")
        if not 0 <= self.steel_baumgarte <= 1:
            raise DataError(None, "config.steel_baumgarte", f"must be in [0, 1], got {self.steel_baumgarte!r}")
        if self.steel_row_budget is not None and not self.steel_row_budget >= 1:
            raise DataError(None, "config.steel_row_budget", f"must be >= 1 or None, got {self.steel_row_budget!r}")
        if not self.steel_angular_damping >= 0:
            raise DataError(None, "config.steel_angular_damping", f"must be >= 0, got {self.steel_angular_damping!r}")
        if self.engine is not EngineChoice.STEEL:
            return
        if self.finger_drive != "quat":
            raise DataError(
                None,
                "config.finger_drive",
                "engine 'steel' drives the finger ball joints with the quaternion drive only: set finger_drive 'quat'",
            )
        if self.steel_friction_mode != "fixed_normal" and self.device != "cuda":
            raise DataError(
                None,
                "config.steel_friction_mode",
                f"{self.steel_friction_mode!r} runs on CUDA only "
                "(SolverSteel raises NotImplementedError on a CPU device); use 'fixed_normal'",
            )

    # --- JSON -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["engine"] = self.engine.value
        d["dt"] = self.dt
        return d

    @classmethod
    def from_dict(cls, data: dict, source: str | Path | None = None) -> ReplayConfig:
        """Build from a dict (e.g. a study JSON's ``config``); unknown keys raise DataError. The physics
        fields of results format <= 4 are read as physics overrides
        (:func:`replay.results.legacy_physics.legacy_physics_overrides`): the effective physics stays the one that file ran."""
        names = {f.name for f in dataclasses.fields(cls)}
        data = _legacy_engine(legacy_physics_overrides(data, source), source)
        extra = set(data) - names - {"dt"}
        if extra:
            raise DataError(source, "config", f"unknown keys {sorted(extra)}")
        return cls(**{k: v for k, v in data.items() if k in names}).validate()

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2))

    @classmethod
    def load(cls, path: str | Path) -> ReplayConfig:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise DataError(path, None, f"cannot read config JSON: {e}") from e
        return cls.from_dict(data.get("config", data), source=path)


def _legacy_engine(data: dict, source) -> dict:
    """``data`` with the engine fields of a config written before :class:`EngineChoice` (``solver_backend``,
    ``engine`` direct / newton, ``device`` warp-cpu) read as ``engine`` and ``device``
    (:func:`replay.results.engine_choice.from_legacy`)."""
    old = "solver_backend" in data or data.get("engine") == "direct" or data.get("device") == "warp-cpu"
    if not old:
        return data
    data = dict(data)
    try:
        engine, device = from_legacy(
            data.pop("solver_backend", "mujoco"), data.get("engine", "direct"), data.get("device", "cpu")
        )
    except DataError as e:
        raise DataError(source, e.field, e.message) from None
    data.update(engine=engine.value, device=device)
    return data


def describe() -> list[dict]:
    """Rows ``{name, default, unit, source}`` for every knob (README / --help)."""
    rows = []
    for f in dataclasses.fields(ReplayConfig):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        rows.append(
            {"name": f.name, "default": default, "unit": f.metadata.get("unit"), "source": f.metadata.get("source")}
        )
    return rows
