"""Named physics: every choice a replay's physics depends on that the input files do not fix.

"As authored" means the manosim hand MJCF and the object files as written plus MuJoCo's own
defaults for whatever they leave unset (MuJoCo XML reference, ``option`` and ``geom``: Euler
integrator, pyramidal cone, impratio 1, no noslip, tolerance 1e-8; contact parameters mixed by
``solmix`` between geoms of equal priority, ``mj_contactParam``). Every other value is a
declared choice. :data:`PHYSICS` is the one table of them: per named physics (``authored``,
``replay``) every :class:`Choice` with its value, source and why. ``ReplayConfig.physics``
names one, ``ReplayConfig.physics_overrides`` ``{choice: value}`` departs from it (the verdict
envelope, the bridge, a user's ``--physics-set``); :func:`apply_physics` writes the choices that
are ``ReplayConfig`` fields (integrator, cone, impratio, contact, hand shape, finger damping),
:func:`choice_value` is how the engines read the others (the wrist law, its gravity
compensation, the object margin, the closure profile, the object's visual geoms), and
:func:`physics_record` is the list ``[{name, value, source, why}]`` written into every rollout.
:data:`SHARED` rows are alike in both physics: the step and the finger effort limit, which the
protocol's config sets (:data:`CONFIG_SET`: the record holds the value the rollout ran with; no
override), and the contact values MuJoCo makes of the files and the support box per pair class
(finger-object, palm-object, object-support, hand-support), with the priorities and the support's
own values (``tests/test_physics_table.py`` reads each back from compiled scenes).

Units: m, s, mm where named; the wrist law's frames are in :mod:`replay.sim.engine.wrist`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from replay.config import ReplayConfig
from replay.errors import DataError


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
    "object_free_joint": None, "wrist_target_offset_mm": None, "timestep": None, "finger_effort_limit": None,
    "support_contact": None, "contact_priority": None, "contact_finger_object": None, "contact_palm_object": None,
    "contact_object_support": None, "contact_hand_support": None,
}

#: choices the protocol's config fields set, not the physics table (their value in effect: read from the config
#: a rollout runs with, after :func:`replay.protocol.oracle_plan.oracle_config`; not an override)
CONFIG_SET = {"timestep": ("dt", "config.control_fps x config.substeps (hug-oracle: oracle_dt)"),
              "finger_effort_limit": ("effort_limit", "config.effort_limit (--effort; hug-oracle: oracle_effort_limit)")}

#: the values each choice may take
VALUES = {
    "wrist_law": ("authored_actuators", "wrench"), "wrist_gravity_compensation": (False, True),
    "integrator": ("euler", "implicitfast", "implicit", "rk4"), "cone": ("pyramidal", "elliptic"),
    "contact_mixing": ("mujoco", "hand"), "object_margin": ("asset", "zero"),
    "finger_flutter_damping": ("as_authored", "raised"), "closure_profile": ("linear", "minjerk"),
    "hand_shape": (None, "myhand", "zerohand"), "multiccd": (False, True),
    "wrist_target_interpolation": ("held", "per_step"), "object_visual_geoms": ("inert", "as_written"),
    "support_geometry": ("box",), "object_free_joint": ("freejoint",),
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
    _c("object_visual_geoms", "inert", "our choice: object_sim's *_visual geoms (class grab) set no contype/"
       "conaffinity/density, so MuJoCo as written collides their hulls and weighs them at 1000 kg/m^3 (MuJoCo's "
       "default density); as_written runs that (replay.sim.object_visual)", "meant for display (object_col's group "
       "3 marks the collision parts); measured: docs/results/grab-oracle-authored-visual.json (the hug-oracle as "
       "authored with them as written) beside docs/results/grab-oracle-authored.json (inert)"),
    _c("support_geometry", "box", "our choice (no other implemented): a box of support_thickness at the table top",
       "the GRAB table's collision part is a slab; its top is the recorded support height"),
    _c("object_free_joint", "freejoint", "our choice (no other implemented): the object body has no joint as written; "
       "MuJoCo's <freejoint/> takes no class defaults", "a <joint type=free> would take the grab class's armature and "
       "frictionloss 0.001 (benchmarks/authored_crosscheck.py --set object_joint=grab runs it)"),
)

_FILES = "GRAB common.xml object_col (TACO / HUG meshes: the same values, replay.data.objects)"
_MIX = "MuJoCo mj_contactParam: a higher priority's condim and friction win outright; at equal priority the " \
    "larger condim and, per component, the larger friction"

#: choices fixed alike in every named physics: the protocol's config (:data:`CONFIG_SET`) or the contact values MuJoCo
#: makes of the files and the support box, per pair class (``tests/test_physics_table.py`` reads them back from the
#: compiled model: condim and friction (sliding, torsional m, rolling m) of every pair of the class)
SHARED = (
    _c("timestep", {"lift": 1 / 240, "hug-oracle": 0.002}, "not authored (the MJCF has no <option>; MuJoCo's "
       "default 0.002 s); lift: control_fps 30 Hz x substeps 8 (manosim-in-Newton report); hug-oracle: oracle_dt "
       "(HUG arXiv:2606.17054: 2 ms, 50 Hz x 10)", "set by the protocol's config: " + CONFIG_SET["timestep"][1]),
    _c("finger_effort_limit", {"lift": 0.4, "hug-oracle": None}, "lift: 0.4 N·m (manosim-in-Newton report; Makefile "
       "EFFORT, effort_profile uniform); hug-oracle: None = manosim's actuators as authored (no forcerange; "
       "implemented as +-1000 N·m, which kp 30 x pi never reaches)", "set by the protocol's config: "
       + CONFIG_SET["finger_effort_limit"][1]),
    _c("support_contact", {"condim": 3, "friction": [1.0, 0.005, 0.0001], "margin": 0.0}, "our choice (no other "
       "implemented): Newton 1.8.0's defaults for the support box (ShapeConfig mu = support_friction 1, mu_torsional "
       "0.005, mu_rolling 0.0001, margin 0; SolverMuJoCo condim 3); the GRAB table asset's contact part "
       "(object_col) writes condim 4, friction (1, 0.5, 0.01), margin 0.0005 m", "what reaches a pair is what "
       "counts: the rows contact_object_support and contact_hand_support"),
    _c("contact_priority", {"palm": 1, "fingers": 0, "object": 0, "support": 0}, _HAND + ": the palm geom's "
       "priority=\"1\"; the object files and the support set none (0)", "as authored: palm contacts take the palm's "
       "values outright (contact_palm_object)"),
    _c("contact_finger_object", {"condim": 4, "friction": [1.0, 0.5, 0.01]}, _MIX + ": " + _FILES + " condim 4, "
       "friction (1, 0.5, 0.01) over the finger capsules' MuJoCo defaults (condim 3, (1, 0.005, 0.0001))",
       "as authored: object_col's torsional friction 0.5 m (100x MuJoCo's default) and rolling 0.01 m reach every "
       "finger contact through condim 4"),
    _c("contact_palm_object", {"condim": 3, "friction": [1.0, 0.005, 0.0001]}, _MIX + ": the palm's priority 1 "
       "(contact_priority): its MuJoCo defaults, condim 3, (1, 0.005, 0.0001), and its solref / solimp",
       "as authored: no torsional or rolling resistance beyond MuJoCo's defaults at the palm"),
    _c("contact_object_support", {"condim": 4, "friction": [1.0, 0.5, 0.01]}, _MIX + ": the object's (" + _FILES
       + ") over the support box's (support_contact)", "the GRAB table asset's own values would give the same pair "
       "values (they equal the object's)"),
    _c("contact_hand_support", {"condim": 3, "friction": [1.0, 0.005, 0.0001]}, _MIX + ": the hand's and the "
       "support box's MuJoCo / Newton defaults (support_contact)", "the GRAB table asset as written would give "
       "condim 4, friction (1, 0.5, 0.01), margin 0.0005 m"),
)

REPLAY = (
    _c("wrist_law", "wrench", "our choice (replay.sim.engine.wrist)", "the MJCF's gains as a geodesic 6-DOF PD wrench "
       "with velocity and acceleration feed-forward: tracks a moving target without lag"),
    _c("wrist_gravity_compensation", True, "our choice", "+M g at the hand's COM: the wrist holds its target height; a "
       "replayed wrist is a recorded pose, not a weight the arm carries"),
    _c("integrator", "implicitfast", "manosim-in-Newton report; Newton 1.8.0 SolverMuJoCo default (solver_mujoco.py)",
       "MuJoCo's recommended integrator for position actuators (implicit in their damping)"),
    _c("cone", "elliptic", "our choice, on the MuJoCo modeling guide's advice (Modeling, Contact: elliptic cones, "
       "with impratio, for grasping); manosim-in-Newton report; not Newton's default (Newton 1.8.0 SolverMuJoCo: "
       "pyramidal, solver_mujoco.py)", "the elliptic cone is Coulomb's friction cone itself, the pyramidal one "
       "approximates it by facets (MuJoCo documentation, Computation: friction cones)"),
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
       "landmark IK fits GRAB's hands best with zerohand (replay.datasets: the measurement)"),
    _c("wrist_target_offset_mm", (0.0, 0.0, 0.0), "the recording", "the recorded wrist pose"),
    _c("wrist_target_interpolation", "per_step", "our choice (replay.config wrist_substep_interp)",
       "the wrist target interpolated per physics step: no step in the target at each control frame"),
    _c("object_visual_geoms", "inert", "our choice", "the collision parts alone collide and weigh (authored "
       "physics: its row)"),
    _c("support_geometry", "box", "our choice (no other implemented)", "a box of support_thickness at the table top"),
    _c("object_free_joint", "freejoint", "our choice (no other implemented)", "no joint damping, armature or "
       "frictionloss on the object"),
)

#: named physics -> {choice name: Choice}
PHYSICS = {"authored": {c.name: c for c in AUTHORED + SHARED}, "replay": {c.name: c for c in REPLAY + SHARED}}


def table(name: str) -> dict:
    """The choices of the named physics ``name`` ({choice: :class:`Choice`}); DataError if unknown."""
    if name not in PHYSICS:
        raise DataError(None, "config.physics", f"{name!r} not in {tuple(PHYSICS)}")
    return PHYSICS[name]


def _check_value(name: str, value) -> object:
    if name not in FIELD_OF:
        raise DataError(None, "config.physics_overrides", f"unknown physics choice {name!r}; known: {sorted(FIELD_OF)}")
    if name == "impratio":
        if not float(value) > 0:
            raise DataError(None, "config.physics_overrides.impratio", f"must be > 0, got {value!r}")
        return float(value)
    if name in CONFIG_SET:
        fixed = next(c.value for c in SHARED if c.name == name)
        if value != fixed:
            raise DataError(None, f"config.physics_overrides.{name}", f"not a physics override: set by "
                            f"{CONFIG_SET[name][1]}")
        return value
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
    if name in CONFIG_SET:
        return getattr(cfg, CONFIG_SET[name][0])
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
    ``cfg`` (a rollout's ``physics`` field). ``source`` and ``why`` always describe the value in effect:
    the table's where it is the table's; where it departs, the departure names itself (a user's
    ``--physics-set``: source ``--physics-set (user)``; a config field set apart from the physics:
    ``config.<field>``) and its why says what it departs from (``departs from 'authored': 'pyramidal'
    (<the table's source>)``), never the table's why."""
    tab = table(cfg.physics)
    over = cfg.physics_overrides or {}
    out = []
    for k, c in tab.items():
        v, src, why = _in_effect(cfg, k, c, over)
        out.append({"name": k, "value": list(v) if isinstance(v, tuple) else v, "source": src, "why": why})
    return out


def _departure(cfg: ReplayConfig, c: Choice, v, source: str, why: str | None = None) -> tuple:
    """(value, source, why) of a value ``v`` set apart from the table's ``c`` (by ``source``): the
    table's own source and why where ``v`` equals the table's value, else ``why`` (default: what it
    departs from)."""
    same = (list(v) if isinstance(v, tuple) else v) == (list(c.value) if isinstance(c.value, tuple) else c.value)
    if same:
        return v, f"{source}, the same as {cfg.physics!r}: {c.source}", c.why
    return v, source, why or f"departs from {cfg.physics!r}: {c.value!r} ({c.source})"


def _in_effect(cfg: ReplayConfig, k: str, c: Choice, over: dict) -> tuple:
    """(value, source, why) of choice ``k`` for ``cfg`` (:func:`physics_record`)."""
    if k in CONFIG_SET:  # the protocol's config sets it: the value it runs with
        return getattr(cfg, CONFIG_SET[k][0]), CONFIG_SET[k][1], c.source
    if k in over:
        return _departure(cfg, c, _check_value(k, over[k]), "--physics-set (user)")
    if k == "hand_shape":
        if cfg.hand_variant is not None and cfg.hand_variant != c.value:
            return _departure(cfg, c, cfg.hand_variant, "config.hand_variant (--hand-shape, or the dataset's default)")
        return c.value if cfg.hand_variant is None else cfg.hand_variant, c.source, c.why
    if k == "contact_mixing":
        v = "mujoco" if cfg.hand_object_contact == "compiled" else "hand"
        if v != c.value:
            return _departure(cfg, c, v, f"config.hand_object_contact {cfg.hand_object_contact!r} (oracle_contact)",
                              f"the hug-oracle protocol's contact as authored by manosim; departs from "
                              f"{cfg.physics!r}: {c.value!r} ({c.source})")
        return v, c.source, c.why
    if k == "wrist_target_interpolation":
        v = "per_step" if cfg.wrist_substep_interp else "held"
        return _departure(cfg, c, v, "config.wrist_substep_interp") if v != c.value else (v, c.source, c.why)
    f = FIELD_OF[k]
    if f is not None and getattr(cfg, f) != c.value:
        return _departure(cfg, c, getattr(cfg, f), f"config.{f}")
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


def _shown(value) -> str:
    """``repr(value)`` with floats to 6 significant digits (1/240 s as 0.00416667), inside dicts and lists too."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_shown(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_shown(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


def physics_markdown() -> str:
    """The table of every named physics' choices as Markdown (``docs/physics.md`` holds it;
    ``tests/test_physics_authored.py`` checks the page is current): one row per choice, its value,
    source and why under ``authored`` and under ``replay``."""
    a, r = PHYSICS["authored"], PHYSICS["replay"]
    lines = ["| choice | authored | source | replay | source, why |", "|---|---|---|---|---|"]
    for k in a:
        same = a[k].value == r[k].value
        rv = "same" if same else f"`{_shown(r[k].value)}`"
        lines.append(f"| `{k}` | `{_shown(a[k].value)}` | {a[k].source}; {a[k].why} | {rv} | "
                     f"{'' if same else r[k].source + '; ' + r[k].why} |")
    return "\n".join(lines) + "\n"
