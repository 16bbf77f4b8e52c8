"""Named physics: every choice a replay's physics depends on that the input files do not fix.

"As authored" means the manosim hand MJCF and the object files as written plus MuJoCo's own
defaults for whatever they leave unset (MuJoCo XML reference, ``option`` and ``geom``: Euler
integrator, pyramidal cone, impratio 1, no noslip, tolerance 1e-8; contact parameters mixed by
``solmix`` between geoms of equal priority, ``mj_contactParam``). Every other value is a
declared choice. :data:`PHYSICS` is the one table of them: per named physics (``authored``,
``replay``) every :class:`Choice` with its value, source and why; ``calibrated`` is ``replay`` with
the choices fitted once by ``scripts/calibrate.py`` (:func:`table`, :func:`calibrated_centres`). ``ReplayConfig.physics``
names one, ``ReplayConfig.physics_overrides`` ``{choice: value}`` departs from it (the verdict
envelope, the bridge, a user's ``--physics-set``); :func:`apply_physics` writes the choices that
are ``ReplayConfig`` fields (integrator, cone, impratio, contact, hand shape, finger damping),
:func:`choice_value` is how the engines read the others (the wrist law, its gravity
compensation, the object margin, the closure profile), and :func:`physics_record` is the list
``[{name, value, source, why}]`` written into every rollout.

Units: m, s, mm where named; the wrist law's frames are in :mod:`replay.sim.engine.wrist`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.sim import calibration_file


@dataclass(frozen=True)
class Choice:
    """One declared physics choice: its ``value``, the ``source`` of that value (MJCF, MuJoCo
    default, paper, or "our choice") and ``why``."""

    name: str
    value: object
    source: str
    why: str


_MJ = "MuJoCo default (the MJCF has no <option>; MuJoCo XML reference, option)"
_HAND = "manosim capsule_hand.xml"


def _c(name, value, source, why) -> Choice:
    return Choice(name, value, source, why)


#: choice name -> the config field it sets (None: read by the engines through :func:`choice_value`)
FIELD_OF = {
    "wrist_law": None, "wrist_gravity_compensation": None, "integrator": "integrator", "cone": "cone",
    "impratio": "impratio", "contact_mixing": None, "object_margin": None, "finger_flutter_damping": None,
    "closure_profile": None, "hand_shape": "hand_variant", "multiccd": "multiccd",
    "wrist_target_interpolation": None, "object_visual_geoms": None, "support_geometry": None,
    "object_free_joint": None, "wrist_target_offset_mm": None,
}

#: the values each choice may take
VALUES = {
    "wrist_law": ("authored_actuators", "wrench"), "wrist_gravity_compensation": (False, True),
    "integrator": ("euler", "implicitfast", "implicit", "rk4"), "cone": ("pyramidal", "elliptic"),
    "contact_mixing": ("mujoco", "hand"), "object_margin": ("asset", "zero"),
    "finger_flutter_damping": ("as_authored", "raised"), "closure_profile": ("linear", "minjerk"),
    "hand_shape": (None, "myhand", "zerohand"), "multiccd": (False, True),
    "wrist_target_interpolation": ("held", "per_step"), "object_visual_geoms": ("inert",), "support_geometry": ("box",),
    "object_free_joint": ("freejoint",),
}

AUTHORED = (
    _c("wrist_law", "authored_actuators", _HAND + ": slide x3 + ball wrist, <position> kp 300 / 50, dampratio 1 / 1.5",
       "the PD law MuJoCo applies to those actuators (kp (ctrl - q) - kv qdot per slide along world axes; per ball "
       "axis in the hand frame on the rotation vector), emulated on the importer's free joint (replay.sim.engine.wrist)"),
    _c("wrist_gravity_compensation", False, _HAND + ": no gravcomp", "the hand hangs below its target by M g / kp"),
    _c("integrator", "euler", _MJ, "as authored"),
    _c("cone", "pyramidal", _MJ, "as authored"),
    _c("impratio", 1.0, _MJ, "as authored"),
    _c("contact_mixing", "mujoco", "MuJoCo mj_contactParam (solmix 1 on both geoms: half-and-half)",
       "as authored: the hand's solref/solimp mixed with the object's for every equal-priority pair"),
    _c("object_margin", "asset", "GRAB object_sim common.xml: object_col margin 0.0005 m", "as authored"),
    _c("multiccd", True, "MuJoCo 3.17 default: multi-CCD on (a disable flag, mjDSBL_MULTICCD, unset)",
       "as authored (Newton's SolverMuJoCo disables it unless asked)"),
    _c("finger_flutter_damping", "as_authored", _HAND + ": finger damping 0.01 N·m·s/rad", "as authored"),
    _c("closure_profile", "linear", "HUG arXiv:2606.17054 app. E.1: the wrist on a straight line; timing not stated",
       "the plainest reading: constant speed"),
    _c("hand_shape", None, "replay.datasets: zerohand for GRAB/TACO, myhand for HUG-Bench",
       "both shapes are authored files; the dataset's default"),
    _c("wrist_target_offset_mm", (0.0, 0.0, 0.0), "the recording", "the recorded wrist pose"),
    _c("wrist_target_interpolation", "held", "MuJoCo: ctrl is set once per control frame and held over its steps",
       "a plain MuJoCo replay writes ctrl per control frame"),
    _c("object_visual_geoms", "inert", "our choice (no other implemented): object_sim's *_visual geoms set no "
       "contype/conaffinity/density, so MuJoCo as written collides their hulls and weighs them at 1000 kg/m^3",
       "meant for display; measured (benchmarks/authored_crosscheck.py): as written cubesmall weighs 0.148 kg, not "
       "0.084, and the oracle lifts 2/30 GRAB lifts, not 9"),
    _c("support_geometry", "box", "our choice (no other implemented): a box of support_thickness at the table top",
       "the GRAB table's collision part is a slab; its top is the recorded support height"),
    _c("object_free_joint", "freejoint", "our choice (no other implemented): the object body has no joint as written; "
       "MuJoCo's <freejoint/> takes no class defaults", "a <joint type=free> would take the grab class's armature and "
       "frictionloss 0.001; measured (benchmarks/authored_crosscheck.py): the same 9/30 either way"),
)

REPLAY = (
    _c("wrist_law", "wrench", "our choice (replay.sim.engine.wrist)", "the MJCF's gains as a geodesic 6-DOF PD wrench "
       "with velocity and acceleration feed-forward: tracks a moving target without lag"),
    _c("wrist_gravity_compensation", True, "our choice", "+M g at the hand's COM: the wrist holds its target height; a "
       "replayed wrist is a recorded pose, not a weight the arm carries"),
    _c("integrator", "implicitfast", "manosim-in-Newton report (Newton SolverMuJoCo default)",
       "MuJoCo's recommended integrator for position actuators (implicit in their damping)"),
    _c("cone", "elliptic", "manosim-in-Newton report (Newton SolverMuJoCo default)",
       "MuJoCo modeling guide, Contact: elliptic cones for grasping"),
    _c("impratio", 10.0, "MuJoCo modeling guide, Contact", "impratio ~10 with an elliptic cone for slip-sensitive grasps"),
    _c("contact_mixing", "mujoco", "MuJoCo mj_contactParam", "as authored (the hug-oracle protocol forces the hand's "
       "values: oracle_contact manosim)"),
    _c("object_margin", "zero", "Newton 1.8.0 SolverMuJoCo (zeroes geom margins under MULTICCD with meshes, newton "
       "#2106)", "kept as Newton compiles it; a 0.5 mm margin acts before the surfaces meet"),
    _c("multiccd", True, "our choice (replay.config multiccd)", "up to 4 contacts per convex pair: a hull on the "
       "table-top box gets 1 without it and rocks"),
    _c("finger_flutter_damping", "raised", "manosim-in-Newton report: discrete-time flutter bound",
       "finger damping raised to 1.25x the ball-drive flutter bound where short (replay.sim.silent_failures)"),
    _c("closure_profile", "minjerk", "our choice", "zero velocity and acceleration at the ends: no jerk on the drives"),
    _c("hand_shape", None, "replay.datasets: zerohand for GRAB/TACO, myhand for HUG-Bench",
       "landmark IK fits GRAB's hands best with zerohand (median 1.92 vs 3.99 mm)"),
    _c("wrist_target_offset_mm", (0.0, 0.0, 0.0), "the recording", "the recorded wrist pose"),
    _c("wrist_target_interpolation", "per_step", "our choice (replay.config wrist_substep_interp)",
       "the wrist target interpolated per physics step: no step in the target at each control frame"),
    _c("object_visual_geoms", "inert", "our choice (no other implemented)", "the collision parts alone collide "
       "and weigh (authored physics: its row)"),
    _c("support_geometry", "box", "our choice (no other implemented)", "a box of support_thickness at the table top"),
    _c("object_free_joint", "freejoint", "our choice (no other implemented)", "no joint damping, armature or "
       "frictionloss on the object"),
)

#: named physics -> {choice name: Choice}
PHYSICS = {"authored": {c.name: c for c in AUTHORED}, "replay": {c.name: c for c in REPLAY}}
#: every named physics: the two tables, and ``calibrated``: its base table with the choices fitted once by
#: scripts/calibrate.py on GRAB's lifts (replay.study.calibration), read from its results file
#: (replay.sim.calibration_file: docs/results/calibration.json)
NAMES = ("authored", "replay", "calibrated")


def table(name: str) -> dict:
    """The choices of the named physics ``name`` ({choice: :class:`Choice`}); DataError if unknown, or
    (``calibrated``) if its results file is missing or bad."""
    if name == "calibrated":
        return _calibrated()
    if name not in PHYSICS:
        raise DataError(None, "config.physics", f"{name!r} not in {NAMES}")
    return PHYSICS[name]


def _calibrated() -> dict:
    """The ``calibrated`` table: its base's choices, each one the calibration set replaced by the
    fitted value with the file and figure it was chosen by as its source."""
    path = calibration_file.calibration_path()
    doc = calibration_file.read_calibration(path)
    ch = doc["choice"]
    src = (f"fitted once: {path.name} (scripts/calibrate.py, commit {doc.get('commit', '?')}: balanced accuracy "
           f"{ch.get('balanced_accuracy', float('nan')):.2f} of real vs corrupted on {len(doc.get('recordings') or [])} "
           "recordings)")
    tab = dict(PHYSICS[doc["base"]])
    for k, v in ch["overrides"].items():
        try:
            v = _check_value(k, tuple(v) if isinstance(v, list) else v)
        except DataError as e:
            raise DataError(path, f"choice.overrides.{k}", e.message) from None
        tab[k] = Choice(k, v, src, f"chosen among the declared candidates (replay.study.calibration): {ch.get('name')}")
    return tab


def calibrated_centres(cfg: ReplayConfig) -> dict:
    """{variable: centre} of the sampled distributions under ``cfg``'s physics: the calibration's
    (replay.study.calibration.centred) for ``calibrated``, else {}."""
    return dict(calibration_file.read_calibration()["choice"]["centres"]) if cfg.physics == "calibrated" else {}


def _check_value(name: str, value) -> object:
    if name not in FIELD_OF:
        raise DataError(None, "config.physics_overrides", f"unknown physics choice {name!r}; known: {sorted(FIELD_OF)}")
    if name == "impratio":
        if not float(value) > 0:
            raise DataError(None, "config.physics_overrides.impratio", f"must be > 0, got {value!r}")
        return float(value)
    if name == "wrist_target_offset_mm":
        v = tuple(float(x) for x in value)
        if len(v) != 3:
            raise DataError(None, "config.physics_overrides.wrist_target_offset_mm", f"needs 3 values, got {value!r}")
        return v
    if name in VALUES and value not in VALUES[name]:
        raise DataError(None, f"config.physics_overrides.{name}", f"{value!r} not in {VALUES[name]}")
    return value


def choice_value(cfg: ReplayConfig, name: str):
    """The value of choice ``name`` in effect for ``cfg``: ``cfg.physics_overrides`` first, then
    the table of ``cfg.physics``. Raises DataError for an unknown physics or choice."""
    over = cfg.physics_overrides or {}
    if name in over:
        return _check_value(name, over[name])
    return table(cfg.physics)[name].value


def apply_physics(cfg: ReplayConfig, name: str | None = None, overrides: dict | None = None) -> ReplayConfig:
    """``cfg`` under the named physics ``name`` (default ``cfg.physics``) with ``overrides``
    ({choice: value}, merged over ``cfg.physics_overrides``): the choices that are config fields
    written into them (integrator, cone, impratio, hand_variant; contact mixing into
    ``hand_object_contact`` and ``oracle_contact``), the rest kept for :func:`choice_value`.

    Raises:
        DataError: unknown physics, choice or value (names the field).
    """
    name = cfg.physics if name is None else name
    tab = table(name)
    over = dict(cfg.physics_overrides or {})
    over.update({k: _check_value(k, v) for k, v in (overrides or {}).items()})
    for k, v in over.items():
        _check_value(k, v)
    val = {k: over.get(k, c.value) for k, c in tab.items()}
    kw = {f: val[k] for k, f in FIELD_OF.items() if f is not None and (f != "hand_variant" or val[k] is not None)}
    mix = "compiled" if val["contact_mixing"] == "mujoco" else "manosim"
    kw.update(hand_object_contact=mix, physics=name, physics_overrides=over,
              wrist_substep_interp=val["wrist_target_interpolation"] == "per_step")
    if name == "authored" or "contact_mixing" in over:
        kw["oracle_contact"] = mix
    return dataclasses.replace(cfg, **kw).validate()


def physics_record(cfg: ReplayConfig) -> list[dict]:
    """``[{name, value, source, why}]``: every choice of ``cfg.physics`` as it is in effect for
    ``cfg`` (a rollout's ``physics`` field). A value that departs from the table (an override, or
    a config field set apart from the physics) says so in its source."""
    tab = table(cfg.physics)
    over = cfg.physics_overrides or {}
    out = []
    for k, c in tab.items():
        v, src, why = _in_effect(cfg, k, c, over)
        out.append({"name": k, "value": list(v) if isinstance(v, tuple) else v, "source": src, "why": why})
    return out


def _in_effect(cfg: ReplayConfig, k: str, c: Choice, over: dict) -> tuple:
    """(value, source, why) of choice ``k`` for ``cfg`` (:func:`physics_record`)."""
    if k in over:
        return _check_value(k, over[k]), f"override of {cfg.physics!r} (physics_overrides)", c.why
    if k == "hand_shape":
        return (cfg.hand_variant if cfg.hand_variant is not None else c.value), c.source, c.why
    if k == "contact_mixing":
        v = "mujoco" if cfg.hand_object_contact == "compiled" else "hand"
        if v != c.value:
            return v, f"config.hand_object_contact {cfg.hand_object_contact!r} (oracle_contact), departs from " \
                      f"{cfg.physics!r} ({c.value!r})", "the hug-oracle protocol's contact as authored by manosim"
        return v, c.source, c.why
    if k == "wrist_target_interpolation":
        v = "per_step" if cfg.wrist_substep_interp else "held"
        if v != c.value:
            return v, f"config.wrist_substep_interp, departs from {cfg.physics!r} ({c.value!r})", "set apart"
        return v, c.source, c.why
    f = FIELD_OF[k]
    if f is not None and getattr(cfg, f) != c.value:
        return getattr(cfg, f), f"config.{f}, departs from {cfg.physics!r} ({c.value!r})", "set apart from the physics"
    return c.value, c.source, c.why


def wrist_law_kwargs(cfg: ReplayConfig) -> dict:
    """``{law, gravity_compensation}`` for :func:`replay.sim.engine.wrist.wrist_params` under ``cfg``'s
    physics (the choices ``wrist_law`` and ``wrist_gravity_compensation``)."""
    return {"law": choice_value(cfg, "wrist_law"),
            "gravity_compensation": bool(choice_value(cfg, "wrist_gravity_compensation"))}


def refuse_unsupported(cfg: ReplayConfig) -> None:
    """DataError (one line, naming the choice) when ``cfg``'s engine cannot run a choice of its physics:
    Steel and the Newton reference drive the wrist with :class:`replay.sim.control.HandController`'s
    gravity-compensated wrench only; the object margin as the asset writes it is an edit of the compiled
    model that only the direct MuJoCo C engine steps (mujoco-warp rejects margins under MULTICCD, newton #2106)."""
    direct_c = cfg.solver_backend == "mujoco" and cfg.engine == "direct" and cfg.device == "cpu"
    direct = cfg.solver_backend == "mujoco" and cfg.engine == "direct"
    if not direct and (choice_value(cfg, "wrist_law") != "wrench" or not choice_value(cfg, "wrist_gravity_compensation")):
        raise DataError(None, "config.physics", "this engine drives the wrist with the gravity-compensated wrench only; "
                        "run the physics choices wrist_law / wrist_gravity_compensation on the direct engine "
                        "(MuJoCo C or mujoco-warp)")
    if not direct_c and choice_value(cfg, "object_margin") == "asset":
        raise DataError(None, "config.physics", "object_margin 'asset' edits the compiled model: direct MuJoCo C "
                        "engine (device cpu) only; set --physics-set object_margin=zero on this engine")


def parse_setting(text: str) -> tuple[str, object]:
    """``"choice=value"`` (``--physics-set``) as ``(choice, value)``: ``true``/``false`` as bools,
    ``none`` as None, ``a,b,c`` as a tuple of floats, a number as a float, else the string.

    Raises:
        DataError: no ``=``, or an unknown choice or value (names the choice)."""
    name, sep, raw = str(text).partition("=")
    if not sep:
        raise DataError(None, "--physics-set", f"{text!r} is not CHOICE=VALUE")
    low = raw.strip().lower()
    if low in ("true", "false"):
        value = low == "true"
    elif low in ("none", "null"):
        value = None
    elif "," in raw:
        value = tuple(float(x) for x in raw.split(","))
    else:
        try:
            value = float(raw)
        except ValueError:
            value = raw.strip()
    return name.strip(), _check_value(name.strip(), value)


def physics_markdown() -> str:
    """The table of every named physics' choices as Markdown (``docs/physics.md`` holds it;
    ``tests/test_physics_authored.py`` checks the page is current): one row per choice, its value,
    source and why under ``authored`` and under ``replay``."""
    a, r = PHYSICS["authored"], PHYSICS["replay"]
    lines = ["| choice | authored | source | replay | source, why |", "|---|---|---|---|---|"]
    for k in a:
        same = a[k].value == r[k].value
        rv = "same" if same else f"`{r[k].value!r}`"
        lines.append(f"| `{k}` | `{a[k].value!r}` | {a[k].source}; {a[k].why} | {rv} | "
                     f"{'' if same else r[k].source + '; ' + r[k].why} |")
    return "\n".join(lines) + "\n"
