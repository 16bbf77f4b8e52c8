"""The one reader of older config dicts (docs/results.md): physics fields as overrides (an older file's physics is
the one it ran), flat part fields nested, engine fields as the engine choice."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from replay.errors import DataError
from replay.results import physics_table
from replay.results.config_parts import ContactBudget, LiftSettings, SteelSettings
from replay.results.engine_choice import from_legacy
from replay.results.oracle_fields import OracleSettings

#: a legacy field's value that departs from nothing (None: "the table's"): dropped
DROP = object()


def _unset(conv):
    """``conv`` for a field whose None meant "no departure"."""
    return lambda v: DROP if v is None else conv(v)


_SUPPORT = physics_table.PHYSICS["replay"]["support_contact"].value
#: config field -> (physics choice, the field's value as the choice's, or :data:`DROP`)
LEGACY_PHYSICS_FIELDS = {
    "integrator": ("integrator", lambda v: v),
    "cone": ("cone", lambda v: v),
    "impratio": ("impratio", float),
    "multiccd": ("multiccd", bool),
    "hand_variant": ("hand_shape", lambda v: v),
    "hand_object_contact": ("contact_mixing", lambda v: {"compiled": "mujoco", "manosim": "hand"}.get(v, v)),
    "hand_object_friction": ("hand_object_friction", _unset(float)),
    "object_density_scale": ("object_density_scale", float),
    "contact_gap": ("contact_gap", float),
    "wrist_gain_scale": ("wrist_gain_scale", float),
    "wrist_substep_interp": ("wrist_target_interpolation", lambda v: "per_step" if v else "held"),
    "pad_compression_mm": ("pad_compression", _unset(float)),
    "support_friction": (
        "support_contact",
        lambda v: {**_SUPPORT, "friction": [float(v), *_SUPPORT["friction"][1:]]},
    ),
}
#: config fields read together as one choice's dict value: choice -> {field: key}
LEGACY_PHYSICS_GROUPS = {
    "object_shape_stiffness": {"object_ke": "ke", "object_kd": "kd"},
    "finger_flutter_bound": {"flutter_safety": "safety", "flutter_discrete_factor": "discrete_factor"},
    "finger_effort_limit": {"effort_limit": "lift", "oracle_effort_limit": "hug-oracle"},
}
#: every legacy physics field (``finger_damping``: refused)
_LEGACY_KEYS = {*LEGACY_PHYSICS_FIELDS, *(f for g in LEGACY_PHYSICS_GROUPS.values() for f in g), "finger_damping"}
#: a group whose only field set is this one departs by its value alone (a single limit, as ``--effort`` writes it)
LEGACY_SINGLE = {"finger_effort_limit": "effort_limit"}


#: results format <= 6 held every setting flat: field -> (its part, its name there) (format 7 nests them:
#: replay.config.PARTS); the lift's under their own names, the others' prefixed
LEGACY_PART_FIELDS = {
    f"{prefix}{f.name}": (part, f.name)
    for part, prefix, cls in (
        ("lift", "", LiftSettings),
        ("steel", "steel_", SteelSettings),
        ("oracle", "oracle_", OracleSettings),
        ("contact_budget", "contact_", ContactBudget),
    )
    for f in dataclasses.fields(cls)
}


def legacy_config(data: dict, source: str | Path | None = None) -> dict:
    """An older config dict (format <= 6) in today's layout; today's is returned as it is."""
    data = legacy_engine(legacy_physics_overrides(data, source), source)
    flat = set(data) & set(LEGACY_PART_FIELDS)
    if not flat:
        return data
    data = dict(data)
    parts: dict = {}
    for key in flat:
        part, name = LEGACY_PART_FIELDS[key]
        parts.setdefault(part, {})[name] = data.pop(key)
    for part, fields in parts.items():
        data[part] = {**fields, **(data.get(part) or {})}
    return data


def legacy_engine(data: dict, source: str | Path | None = None) -> dict:
    """``data`` with ``solver_backend`` / ``engine`` / ``device`` read as ``engine`` and ``device``; DataError for a
    combination no engine ran."""
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


def legacy_physics_overrides(data: dict, source: str | Path | None = None) -> dict:
    """``data`` with legacy physics fields as ``physics_overrides`` entries where they depart from the named physics'
    table (an existing override wins; under ``calibrated`` every set value kept). DataError: a numeric
    ``finger_damping``, or a value no choice takes."""
    if "effort_profile" in data:
        data = _before_54(data, source)
    if not (set(data) & _LEGACY_KEYS):
        return data
    data = dict(data)
    data.setdefault("physics", "replay")  # a file of legacy fields ran under the replay table, not today's default
    if data.pop("finger_damping", None) is not None:
        raise DataError(
            source,
            "config.finger_damping",
            "a passive finger damping value (results format <= 4) "
            "is no physics choice; the choice finger_flutter_damping takes as_authored or raised",
        )
    name = data.get("physics", "replay")
    table = {c.name: c.value for c in physics_table.PHYSICS.get(name, {}).values()} if name != "calibrated" else {}
    found = {}
    for key, (choice, conv) in LEGACY_PHYSICS_FIELDS.items():
        if key in data:
            found[choice] = (key, conv(data.pop(key)))
    for choice, fields in LEGACY_PHYSICS_GROUPS.items():
        part = {k: data.pop(f) for f, k in fields.items() if f in data}
        part = {k: v for k, v in part.items() if v is not None}
        base = table.get(choice)
        if isinstance(base, dict):  # the keys that depart
            part = {k: v for k, v in part.items() if base.get(k) != v}
        single = fields.get(LEGACY_SINGLE.get(choice))
        if single is not None and set(part) == {single}:
            part = part[single]
        if part:
            found[choice] = (next(iter(fields)), part)
    over = dict(data.get("physics_overrides") or {})
    for choice, (key, value) in found.items():
        if value is DROP or choice in over or (choice in table and value == table[choice]):
            continue
        try:
            over[choice] = physics_table.check_value(choice, value)
        except DataError as e:
            raise DataError(source, f"config.{key}", e.message) from None
    data["physics_overrides"] = over
    return data


def _before_54(data: dict, source) -> dict:
    """``data`` without ``effort_profile`` / ``effort_tip_force``: ``uniform`` keeps ``effort_limit`` (N·m); ``human``
    becomes ``grip_force_n`` = the tip force, ``finger_force_share`` 1 each; ``object_mass_model`` ``asset`` unless
    overridden. DataError: ``human`` under ``authored``."""
    data = dict(data)
    profile, tip = data.pop("effort_profile"), data.pop("effort_tip_force", None)
    over = dict(data.get("physics_overrides") or {})
    over.setdefault("object_mass_model", "asset")
    if profile == "human":
        if data.get("physics", "replay") == "authored":
            raise DataError(source, "config.effort_profile", "'human' under physics 'authored' cannot be read back")
        over.setdefault("grip_force_n", float(tip if tip is not None else 10.0))
        over.setdefault("finger_force_share", {f: 1.0 for f in ("index", "middle", "pinky", "ring", "thumb")})
        data["effort_limit"] = None
    data["physics_overrides"] = over
    return data
