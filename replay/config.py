"""Every knob a replay depends on, with its default, unit and source (``metadata={"unit", "source"}``); written into
every result file, so a result can be reproduced from its JSON. Sources named in short:

* "manosim-in-Newton": the report *manosim in Newton: replaying human grasps from HUG* (2026; Newton branch
  ``eric/manosim-mjcf``, manosim 75c77c0; HUG: arXiv:2606.17054), whose protocol figures are the defaults here;
* "MuJoCo modeling guide": mujoco.readthedocs.io, *Modeling > Contact* (elliptic cones with ``impratio`` about 10 for
  slip-sensitive grasps; friction is a soft constraint that creeps under load)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from replay.errors import DataError
from replay.results import physics_table
from replay.results.config_parts import ContactBudget, LiftSettings, SteelSettings, check_ranges
from replay.results.config_parts import setting as _f
from replay.results.engine_choice import DEVICES, EngineChoice
from replay.results.judge import DEFAULT_JUDGE
from replay.results.legacy_physics import legacy_config
from replay.results.oracle_fields import OracleSettings

#: gravity's magnitude, m/s^2, along world -Z: MuJoCo's default ``opt.gravity`` and Newton's ``ModelBuilder`` default
GRAVITY = 9.81


#: the config's three parts, each field in exactly one (``tests/test_config_layers.py``): physics (a named physics and
#: its departures), engine (timing, solver, contact buffer, Steel), protocol (what every protocol replays and judges)
GROUPS = {
    "physics": tuple("preset physics physics_overrides hand finger_drive".split()),
    "engine": tuple(
        "control_fps substeps solver iterations ls_iterations tolerance engine device steel contact_budget "
        "support_thickness contact_force_min".split()
    ),
    "protocol": tuple(
        "settle_s replay_speed approach_window_s recording_fps object_time_offset_s ablation_clean_mm "
        "max_linear_speed max_angular_speed lift oracle".split()
    ),
}

#: the config's typed parts: field -> its type (each with ``validate(prefix)``; a protocol's named by its class)
PARTS = {"contact_budget": ContactBudget, "steel": SteelSettings, "lift": LiftSettings, "oracle": OracleSettings}


@dataclass
class ReplayConfig:
    """Settings of one replay study in three parts (:data:`GROUPS`); physics values live in the table
    (:mod:`replay.results.physics_table`). SI units (m, s, kg, N, N·m, rad). A typed part (:data:`PARTS`) may be given
    as a dict of its fields."""

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
    physics_overrides: dict = _f(
        dict,
        "-",
        "departures {choice: value} from the named physics (replay.sim.physics; "
        "`run_study.py --physics-set NAME=VALUE`, `--hand-shape` (hand_shape; the dataset's default written by "
        "resolve_hand_variant), the hug-oracle's oracle_contact (contact_mixing), the verdict's conditions, the "
        "bridge), each listed in the rollout's `physics`; the table (replay.results.physics_table) is the one home "
        "of these values: no other config field holds one",
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
    steel: SteelSettings = _f(SteelSettings, "-", "replay.results.config_parts.SteelSettings")

    # --- contact --------------------------------------------------------------------
    contact_budget: ContactBudget = _f(ContactBudget, "-", "replay.results.config_parts.ContactBudget")
    support_thickness: float = _f(0.05, "m", "table-top box thickness below the support height (GRAB tables)")
    contact_force_min: float = _f(1e-6, "N", "a contact 'carries force' above this normal force")

    # --- hand -----------------------------------------------------------------------
    hand: str = _f("capsule", "-", "manosim README: the capsule hand is the one meant for contact")
    finger_drive: str = _f(
        "mjcf",
        "-",
        "finger drive law: mjcf = the MJCF's three position actuators per ball joint (gear e_x, e_y, "
        "e_z; kp (ctrl - rotvec(q)) per axis, non-symmetric away from identity: the flutter bound); quat = "
        "tau = clip(kp log(q^-1 q_target) - kd omega, +-effort) per joint in its own frame, the imported kp/kd, "
        "as joint torque (replay.sim.engine.finger_drive; the manosim-in-Newton report's recommendation)",
    )

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

    # --- success / stability thresholds --------------------------------------------
    ablation_clean_mm: float = _f(
        1.0,
        "mm",
        "contact ablation: without hand-object contact the object must stay put; 1 mm allows its settling on the "
        "support",
    )
    max_linear_speed: float = _f(20.0, "m/s", "runaway: any body faster than this is unstable")
    max_angular_speed: float = _f(400.0, "rad/s", "runaway: any body spinning faster than this is unstable")

    # --- the protocols' parts ----------------------------------------------------------
    lift: LiftSettings = _f(LiftSettings, "-", "replay.results.config_parts.LiftSettings")
    oracle: OracleSettings = _f(OracleSettings, "-", "replay.results.oracle_fields.OracleSettings")

    def __post_init__(self):
        try:
            self.engine = EngineChoice(self.engine)
        except ValueError:
            raise DataError(
                None, "config.engine", f"{self.engine!r} not in {tuple(e.value for e in EngineChoice)}"
            ) from None
        for name, kind in PARTS.items():
            part = getattr(self, name)
            if isinstance(part, dict):
                setattr(self, name, kind(**part))
            elif not isinstance(part, kind):
                raise DataError(None, f"config.{name}", f"needs a {kind.__name__} or a dict of its fields")

    @property
    def frame_dt(self) -> float:
        """Control period, s."""
        return 1.0 / self.control_fps

    @property
    def dt(self) -> float:
        """Physics step, s (1/240 by default)."""
        return 1.0 / (self.control_fps * self.substeps)

    def validate(self) -> ReplayConfig:
        """Check ranges; DataError naming the field (a part's as ``config.<part>.<field>``)."""
        check_ranges(
            self,
            "config",
            positive=("control_fps", "substeps", "iterations", "replay_speed", "max_linear_speed", "max_angular_speed"),
            choices={
                "solver": ("newton", "cg"),
                "device": DEVICES,
                "finger_drive": ("mjcf", "quat"),
                "hand": ("capsule", "mesh"),
            },
        )
        if self.engine is EngineChoice.MUJOCO_C and self.device != "cpu":
            raise DataError(None, "config.device", f"engine mujoco-c runs on cpu (mujoco-warp: {self.device!r})")
        for name in PARTS:
            getattr(self, name).validate(f"config.{name}")
        self._validate_steel()
        self._validate_overrides()
        if self.finger_drive == "quat" and self.engine not in (EngineChoice.MUJOCO_C, EngineChoice.STEEL):
            raise DataError(
                None,
                "config.finger_drive",
                "'quat' runs on the engines mujoco-c and steel only so far; use finger_drive 'mjcf' on this engine",
            )
        if self.recording_fps is not None and not self.recording_fps > 0:
            raise DataError(None, "config.recording_fps", f"must be > 0 Hz or null, got {self.recording_fps!r}")
        over = self.physics_overrides or {}
        edits = (
            over.get("object_density_scale", 1.0) != 1.0
            or over.get("hand_object_friction") is not None
            or over.get("contact_mixing") == "hand"
        )
        if edits and self.engine is not EngineChoice.MUJOCO_C:
            raise DataError(
                None,
                "config.physics_overrides",
                "object contact / density edits (hand_object_friction, object_density_scale, contact_mixing "
                "'hand') run on the engine mujoco-c only",
            )
        return self

    def _validate_overrides(self) -> None:
        """Each ``physics_overrides`` entry a choice of the table with one of its values; DataError naming it."""
        for name, value in (self.physics_overrides or {}).items():
            physics_table.check_value(name, value)

    def _validate_steel(self) -> None:
        """What the Steel backend needs of the rest; DataError naming the field."""
        if self.engine is not EngineChoice.STEEL:
            return
        if self.finger_drive != "quat":
            raise DataError(
                None,
                "config.finger_drive",
                "engine 'steel' drives the finger ball joints with the quaternion drive only: set finger_drive 'quat'",
            )
        if self.steel.friction_mode != "fixed_normal" and self.device != "cuda":
            raise DataError(
                None,
                "config.steel.friction_mode",
                f"{self.steel.friction_mode!r} runs on CUDA only "
                "(SolverSteel raises NotImplementedError on a CPU device); use 'fixed_normal'",
            )

    def replace(self, **changes) -> ReplayConfig:
        """A validated copy with ``changes`` (a part's fields as ``{part: {field: value}}``, merged)."""
        for name, v in list(changes.items()):
            cur = getattr(self, name)
            if dataclasses.is_dataclass(cur) and isinstance(v, dict):
                changes[name] = dataclasses.replace(cur, **v)
        return dataclasses.replace(self, **changes).validate()

    # --- JSON -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["engine"] = self.engine.value
        d["dt"] = self.dt
        return d

    @classmethod
    def from_dict(cls, data: dict, source: str | Path | None = None) -> ReplayConfig:
        """From a dict (a study JSON's ``config``; older fields through ``legacy_physics.legacy_config``). Raises
        DataError: an unknown key or a bad value."""
        data = legacy_config(data, source)
        names = {f.name for f in dataclasses.fields(cls)}
        extra = set(data) - names - {"dt"}
        for name, kind in PARTS.items():
            part = data.get(name)
            if isinstance(part, dict):
                bad = set(part) - {f.name for f in dataclasses.fields(kind)}
                extra |= {f"{name}.{k}" for k in bad}
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


def describe() -> list[dict]:
    """Rows ``{name, default, unit, source, group}`` for every knob, group by group; a part's as ``<part>.<field>``."""
    fields = {f.name: f for f in dataclasses.fields(ReplayConfig)}
    rows = []
    for group, names in GROUPS.items():
        for name in names:
            if name in PARTS:
                got = [dict(r, name=f"{name}.{r['name']}") for r in _rows(PARTS[name])]
            else:
                got = _rows(ReplayConfig, [fields[name]])
            rows += [dict(r, group=group) for r in got]
    return rows


def _rows(cls, fields=None) -> list[dict]:
    out = []
    for f in fields or dataclasses.fields(cls):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        out.append(
            {"name": f.name, "default": default, "unit": f.metadata.get("unit"), "source": f.metadata.get("source")}
        )
    return out
