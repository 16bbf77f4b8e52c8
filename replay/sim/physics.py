"""Named physics: every choice a replay's physics depends on that the input files do not fix.

"As authored" means the manosim hand MJCF and the object files as written plus MuJoCo's own
defaults for whatever they leave unset (MuJoCo XML reference, ``option`` and ``geom``: Euler
integrator, pyramidal cone, impratio 1, no noslip, tolerance 1e-8; contact parameters mixed by
``solmix`` between geoms of equal priority, ``mj_contactParam``). Every other value is a
declared choice. :data:`PHYSICS` is the one table of them: per named physics (``authored``,
``replay``) every :class:`Choice` with its value, source and why; ``calibrated`` is ``replay`` with
the choices fitted once by ``scripts/calibrate.py`` (:func:`table`, :func:`calibrated_centres`). ``ReplayConfig.physics``
names one, ``ReplayConfig.physics_overrides`` ``{choice: value}`` departs from it (the verdict
envelope, the bridge, a user's ``--physics-set``, ``--hand-shape``, the hug-oracle's ``oracle_contact``).
The table is the one home of these values: no config field holds one (results format 5 dropped
``ReplayConfig``'s integrator, cone, impratio, multiccd, hand_object_contact, hand_variant and
finger_damping; older files read them as overrides,
:func:`replay.results.legacy_physics.legacy_physics_overrides`).
:func:`choice_value` is how every reader asks (the engines: integrator, cone, impratio, multi-CCD, the
contact mixing, the hand shape, the finger damping, the wrist law, ...), :func:`apply_physics` names a
physics and its overrides, and :func:`physics_record` is the list ``[{name, value, source, why}]``
written into every rollout. :data:`SHARED` rows (the table itself is :mod:`replay.results.physics_table`) are
alike in both physics: the step, which the protocol's config sets (:data:`CONFIG_SET`: the record holds the
value the rollout ran with; no override), the parameters of human strength and of printed objects (read where
a physics' choice calls for them), and the contact values MuJoCo makes of the files and the support box per
pair class (finger-object, palm-object, object-support, hand-support), with the priorities and the support's
own values (``tests/test_physics_table.py`` reads each back from compiled scenes). The config's effort
limit and pad depth, where set (not None), depart from ``finger_effort_limit`` and ``pad_compression``
before any override (:data:`CONFIG_DEPARTURE`: ``--effort``, the hug-oracle's own limit).

Units: m, s, mm where named; the wrist law's frames are in :mod:`replay.sim.engine.wrist`.
"""

from __future__ import annotations

import dataclasses

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.results.physics_table import (  # noqa: F401  (the table, re-exported: physics.PHYSICS etc.)
    AUTHORED,
    CHOICES,
    CONFIG_DEPARTURE,
    CONFIG_SET,
    NAMES,
    PHYSICS,
    REPLAY,
    SHARED,
    VALUE_SOURCES,
    VALUES,
    Choice,
    _c,
)
from replay.sim import calibration_file


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
    src = (
        f"fitted once: {path.name} (scripts/calibrate.py, commit {doc.get('commit', '?')}: balanced accuracy "
        f"{ch.get('balanced_accuracy', float('nan')):.2f} of real vs corrupted on {len(doc.get('recordings') or [])} "
        "recordings)"
    )
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
    if name not in CHOICES:
        raise DataError(None, "config.physics_overrides", f"unknown physics choice {name!r}; known: {sorted(CHOICES)}")
    if name == "impratio":
        if not float(value) > 0:
            raise DataError(None, "config.physics_overrides.impratio", f"must be > 0, got {value!r}")
        return float(value)
    if name in CONFIG_SET:
        fixed = next(c.value for c in SHARED if c.name == name)
        if value != fixed:
            raise DataError(
                None, f"config.physics_overrides.{name}", f"not a physics override: set by {CONFIG_SET[name][1]}"
            )
        return value
    if name == "pad_compression":
        if not float(value) >= 0:
            raise DataError(None, "config.physics_overrides.pad_compression", f"must be >= 0 mm, got {value!r}")
        return float(value)
    if name == "finger_effort_limit":
        lift = value.get("lift") if isinstance(value, dict) else None
        if not (lift == "human" or (isinstance(lift, (int, float)) and lift > 0)):
            raise DataError(
                None,
                "config.physics_overrides.finger_effort_limit",
                f"needs {{'lift': 'human' or N·m > 0, 'hug-oracle': ...}}, got {value!r}",
            )
        return dict(value)
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
    if name in CONFIG_DEPARTURE and getattr(cfg, CONFIG_DEPARTURE[name][0]) is not None:
        return getattr(cfg, CONFIG_DEPARTURE[name][0])
    over = cfg.physics_overrides or {}
    if name in over:
        return _check_value(name, over[name])
    return table(cfg.physics)[name].value


def apply_physics(cfg: ReplayConfig, name: str | None = None, overrides: dict | None = None) -> ReplayConfig:
    """``cfg`` under the named physics ``name`` (default ``cfg.physics``) with ``overrides``
    ({choice: value}, merged over ``cfg.physics_overrides``; read by :func:`choice_value`). Also sets
    the two config fields a choice stands for: ``wrist_substep_interp`` (wrist_target_interpolation) and,
    under ``authored`` or a contact_mixing override, the hug-oracle's ``oracle_contact`` (``mujoco``:
    compiled, ``hand``: manosim).

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
    kw = dict(
        physics=name, physics_overrides=over, wrist_substep_interp=val["wrist_target_interpolation"] == "per_step"
    )
    if name == "authored" or "contact_mixing" in over:
        kw["oracle_contact"] = "compiled" if val["contact_mixing"] == "mujoco" else "manosim"
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
        out.append({"name": k, "value": _as_json(v), "source": src, "why": why})
    return out


def _as_json(v):
    """``v`` as a results file holds it: tuples as lists, inside dicts and lists too."""
    if isinstance(v, (tuple, list)):
        return [_as_json(x) for x in v]
    if isinstance(v, dict):
        return {k: _as_json(x) for k, x in v.items()}
    return v


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
    if k in CONFIG_DEPARTURE and getattr(cfg, CONFIG_DEPARTURE[k][0]) is not None:
        return _departure(cfg, c, getattr(cfg, CONFIG_DEPARTURE[k][0]), CONFIG_DEPARTURE[k][1])
    if k in over:
        v = _check_value(k, over[k])
        source = _OVERRIDE_SOURCE.get(k, "--physics-set (user)")
        if (k, v) in VALUE_SOURCES:
            source = f"{source}; {v!r}: {VALUE_SOURCES[(k, v)]}"
        return _departure(cfg, c, v, source)
    if k == "wrist_target_interpolation":
        v = "per_step" if cfg.wrist_substep_interp else "held"
        return _departure(cfg, c, v, "config.wrist_substep_interp") if v != c.value else (v, c.source, c.why)
    return c.value, c.source, c.why


#: who else writes an override besides a user's ``--physics-set``
_OVERRIDE_SOURCE = {
    "hand_shape": "physics_overrides.hand_shape (--hand-shape, else the named physics or the dataset's default: replay.sim.hand_assets."
    "resolve_hand_variant)",
    "contact_mixing": "physics_overrides.contact_mixing (--physics-set, or the hug-oracle's oracle_contact 'manosim': "
    "replay.protocol.oracle_plan.oracle_config)",
}


def wrist_law_kwargs(cfg: ReplayConfig) -> dict:
    """``{law, gravity_compensation}`` for :func:`replay.sim.engine.wrist.wrist_params` under ``cfg``'s
    physics (the choices ``wrist_law`` and ``wrist_gravity_compensation``)."""
    return {
        "law": choice_value(cfg, "wrist_law"),
        "gravity_compensation": bool(choice_value(cfg, "wrist_gravity_compensation")),
    }


def refuse_unsupported(cfg: ReplayConfig) -> None:
    """DataError (one line, naming the choice) when ``cfg``'s engine cannot run a choice of its physics:
    Steel and the Newton reference drive the wrist with :class:`replay.sim.control.HandController`'s
    gravity-compensated wrench only; the object margin as the asset writes it is an edit of the compiled
    model that only the direct MuJoCo C engine steps (mujoco-warp rejects margins under MULTICCD, newton #2106)."""
    direct_c = cfg.solver_backend == "mujoco" and cfg.engine == "direct" and cfg.device == "cpu"
    direct = cfg.solver_backend == "mujoco" and cfg.engine == "direct"
    if not direct and (
        choice_value(cfg, "wrist_law") != "wrench" or not choice_value(cfg, "wrist_gravity_compensation")
    ):
        raise DataError(
            None,
            "config.physics",
            "this engine drives the wrist with the gravity-compensated wrench only; "
            "run the physics choices wrist_law / wrist_gravity_compensation on the direct engine "
            "(MuJoCo C or mujoco-warp)",
        )
    if not direct_c and choice_value(cfg, "object_margin") == "asset":
        raise DataError(
            None,
            "config.physics",
            "object_margin 'asset' edits the compiled model: direct MuJoCo C "
            "engine (device cpu) only; set --physics-set object_margin=zero on this engine",
        )


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


def _value_cell(c: Choice) -> str:
    """A table cell: the value, and the range the sampled verdict draws it from where it has one."""
    return f"`{_shown(c.value)}`" + (f" (sampled {_shown(c.spread[0])}-{_shown(c.spread[1])})" if c.spread else "")


def physics_markdown() -> str:
    """The table of every named physics' choices as Markdown (``docs/physics.md`` holds it;
    ``tests/test_physics_authored.py`` checks the page is current): one row per choice, its value,
    source and why under ``authored`` and under ``replay``."""
    a, r = PHYSICS["authored"], PHYSICS["replay"]
    lines = ["| choice | authored | source | replay | source, why |", "|---|---|---|---|---|"]
    for k in a:
        same = (a[k].value, a[k].spread) == (r[k].value, r[k].spread)
        rv = "same" if same else _value_cell(r[k])
        lines.append(
            f"| `{k}` | {_value_cell(a[k])} | {a[k].source}; {a[k].why} | {rv} | "
            f"{'' if same else r[k].source + '; ' + r[k].why} |"
        )
    return "\n".join(lines) + "\n"
