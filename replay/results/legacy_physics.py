"""Results format <= 4 held physics values in ``ReplayConfig`` fields (integrator, cone, impratio, multiccd,
hand_object_contact, hand_variant, finger_damping); format 5 keeps them in the physics table alone
(:mod:`replay.results.physics_table`). :func:`legacy_physics_overrides` reads an older config dict as
physics overrides, so the effective physics of an older file is the one it ran. A config written before
issue #54 (it holds ``effort_profile``) ran with the asset's mass and its effort fields: read as the override
``object_mass_model`` ``asset`` and its effort as set (:func:`_before_54`).
"""

from __future__ import annotations

from pathlib import Path

from replay.errors import DataError
from replay.results import physics_table

#: results format <= 4: config field -> (physics choice, the field's value as the choice's). Format 5 dropped these
#: fields (the physics table, replay.results.physics_table, is the one home of their values)
LEGACY_PHYSICS_FIELDS = {
    "integrator": ("integrator", lambda v: v),
    "cone": ("cone", lambda v: v),
    "impratio": ("impratio", float),
    "multiccd": ("multiccd", bool),
    "hand_variant": ("hand_shape", lambda v: v),
    "hand_object_contact": ("contact_mixing", lambda v: {"compiled": "mujoco", "manosim": "hand"}.get(v, v)),
}


def legacy_physics_overrides(data: dict, source: str | Path | None = None) -> dict:
    """``data`` (a config dict) with the physics fields of results format <= 4 turned into
    ``physics_overrides`` entries: a value that departs from the named physics' table (``physics``,
    default ``replay``) becomes an override (an override already there wins), one equal to the table's is
    dropped; under ``calibrated`` (its table a results file the base cannot read) every value is kept
    as an override. ``finger_damping`` None (as imported) is dropped.

    Raises:
        DataError: ``finger_damping`` a number (no physics choice holds a passive damping value; nothing
        but the format-4 field set one), or a legacy value no choice takes (names the field)."""
    if "effort_profile" in data:
        data = _before_54(data, source)
    if not (set(data) & (set(LEGACY_PHYSICS_FIELDS) | {"finger_damping"})):
        return data
    data = dict(data)
    if data.pop("finger_damping", None) is not None:
        raise DataError(
            source,
            "config.finger_damping",
            "a passive finger damping value (results format <= 4) "
            "is no physics choice; the choice finger_flutter_damping takes as_authored or raised",
        )
    name = data.get("physics", "replay")
    table = {c.name: c.value for c in physics_table.PHYSICS.get(name, {}).values()} if name != "calibrated" else {}
    over = dict(data.get("physics_overrides") or {})
    for key, (choice, conv) in LEGACY_PHYSICS_FIELDS.items():
        if key not in data:
            continue
        value = conv(data.pop(key))
        if choice in physics_table.VALUES and value not in physics_table.VALUES[choice]:
            raise DataError(source, f"config.{key}", f"{value!r} not in {physics_table.VALUES[choice]}")
        if choice not in over and (choice not in table or value != table[choice]):
            over[choice] = value
    data["physics_overrides"] = over
    return data


def _before_54(data: dict, source) -> dict:
    """``data`` (a config written before issue #54) with ``effort_profile`` / ``effort_tip_force`` dropped:
    ``uniform`` keeps ``effort_limit`` as set (a departure, N·m at every joint); ``human`` (the tip force at every
    finger's pad) becomes the overrides ``grip_force_n`` = the tip force and ``finger_force_share`` 1 each, its
    ``effort_limit`` unset; and ``object_mass_model`` ``asset`` (those files weighed the asset) unless overridden.

    Raises:
        DataError: ``human`` under ``authored`` (that physics has no human strength to depart from)."""
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
