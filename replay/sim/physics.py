"""Named physics (docs/physics.md): ``ReplayConfig.physics`` names a table of :mod:`replay.results.physics_table`
(re-exported), ``physics_overrides`` departs from it; :func:`choice_value` is how every reader asks."""

from __future__ import annotations

import dataclasses

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.results.engine_choice import EngineChoice
from replay.results.physics_table import (
    CONFIG_SET,
    NAMES,
    PHYSICS,
    VALUE_SOURCES,
    Choice,
    check_value,
)
from replay.sim import calibration_file


def table(name: str) -> dict:
    """{choice: :class:`Choice`} of the named physics. Raises DataError: unknown, or ``calibrated``'s file bad."""
    if name == "calibrated":
        return _calibrated()
    if name not in PHYSICS:
        raise DataError(None, "config.physics", f"{name!r} not in {NAMES}")
    return PHYSICS[name]


def _calibrated() -> dict:
    """The ``calibrated`` table: its base's choices, calibrated ones replaced by the fitted value (file as source)."""
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
            v = check_value(k, tuple(v) if isinstance(v, list) else v)
        except DataError as e:
            raise DataError(path, f"choice.overrides.{k}", e.message) from None
        tab[k] = Choice(k, v, src, f"chosen among the declared candidates (replay.study.calibration): {ch.get('name')}")
    return tab


def calibrated_centres(cfg: ReplayConfig) -> dict:
    """{variable: centre} of the sampled distributions: the calibration's under ``calibrated``, else {}."""
    return dict(calibration_file.read_calibration()["choice"]["centres"]) if cfg.physics == "calibrated" else {}


def _merged(table_value, over_value):
    """An override of a dict-valued choice given as a dict: its keys over the table's; else the override."""
    if isinstance(table_value, dict) and isinstance(over_value, dict):
        return {**table_value, **over_value}
    return over_value


def choice_value(cfg: ReplayConfig, name: str):
    """The value of choice ``name``: ``cfg.physics_overrides`` first (a dict over a dict choice, key by key), then the
    table of ``cfg.physics``. Raises DataError: an unknown physics or choice."""
    if name in CONFIG_SET:
        return getattr(cfg, CONFIG_SET[name][0])
    over = cfg.physics_overrides or {}
    if name in over:
        return _merged(table(cfg.physics)[name].value, check_value(name, over[name]))
    return table(cfg.physics)[name].value


def apply_physics(cfg: ReplayConfig, name: str | None = None, overrides: dict | None = None) -> ReplayConfig:
    """``cfg`` under physics ``name`` (default ``cfg.physics``), ``overrides`` over ``cfg.physics_overrides``; under
    ``authored`` or a contact_mixing override also ``oracle.contact``. Raises DataError naming the field."""
    name = cfg.physics if name is None else name
    tab = table(name)
    over = dict(cfg.physics_overrides or {})
    over.update({k: check_value(k, v) for k, v in (overrides or {}).items()})
    for k, v in over.items():
        check_value(k, v)
    val = {k: over.get(k, c.value) for k, c in tab.items()}
    kw = dict(physics=name, physics_overrides=over)
    if name == "authored" or "contact_mixing" in over:
        contact = "compiled" if val["contact_mixing"] == "mujoco" else "manosim"
        kw["oracle"] = dataclasses.replace(cfg.oracle, contact=contact)
    return dataclasses.replace(cfg, **kw).validate()


def physics_record(cfg: ReplayConfig) -> list[dict]:
    """``[{name, value, source, why}]``: every choice as in effect for ``cfg`` (a rollout's ``physics``); a departure
    names who set it (``--physics-set (user)``, ``config.<field>``) and what it departs from."""
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
    """(value, source, why) of ``v`` set by ``source``: the table's where equal to ``c``, else ``why``."""
    same = (list(v) if isinstance(v, tuple) else v) == (list(c.value) if isinstance(c.value, tuple) else c.value)
    if same:
        return v, f"{source}, the same as {cfg.physics!r}: {c.source}", c.why
    return v, source, why or f"departs from {cfg.physics!r}: {c.value!r} ({c.source})"


def _in_effect(cfg: ReplayConfig, k: str, c: Choice, over: dict) -> tuple:
    """(value, source, why) of choice ``k`` for ``cfg`` (:func:`physics_record`)."""
    if k in CONFIG_SET:  # the protocol's config sets it: the value it runs with
        return getattr(cfg, CONFIG_SET[k][0]), CONFIG_SET[k][1], c.source
    if k in over:
        v = _merged(c.value, check_value(k, over[k]))
        source = _OVERRIDE_SOURCE.get(k, "--physics-set (user)")
        if (k, v) in VALUE_SOURCES:
            source = f"{source}; {v!r}: {VALUE_SOURCES[(k, v)]}"
        return _departure(cfg, c, v, source)
    return c.value, c.source, c.why


#: who else writes an override besides a user's ``--physics-set``
_OVERRIDE_SOURCE = {
    "hand_shape": "physics_overrides.hand_shape (--hand-shape, else the named physics or the dataset's default: "
    "replay.sim.hand_assets.resolve_hand_variant)",
    "contact_mixing": "physics_overrides.contact_mixing (--physics-set, or the hug-oracle's oracle_contact 'manosim': "
    "replay.protocol.oracle_plan.oracle_config)",
    "finger_effort_limit": "physics_overrides.finger_effort_limit (--effort: every finger joint this, N·m; the "
    "hug-oracle: its entry, None = manosim's actuators as authored, replay.protocol.oracle_plan.oracle_config)",
    "pad_compression": "physics_overrides.pad_compression (--physics-set; the hug-oracle: 0, replay.protocol."
    "oracle_plan.oracle_config)",
}


def wrist_interpolated(cfg: ReplayConfig) -> bool:
    """Whether the wrist target is interpolated per physics step (the choice ``wrist_target_interpolation``)."""
    return choice_value(cfg, "wrist_target_interpolation") == "per_step"


def wrist_law_kwargs(cfg: ReplayConfig) -> dict:
    """``{law, gravity_compensation}`` of :func:`replay.sim.engine.wrist.wrist_params` under ``cfg``'s physics."""
    return {
        "law": choice_value(cfg, "wrist_law"),
        "gravity_compensation": bool(choice_value(cfg, "wrist_gravity_compensation")),
    }


def refuse_unsupported(cfg: ReplayConfig) -> None:
    """Raise a one-line DataError where ``cfg``'s engine cannot run a choice: Steel and the Newton reference only drive
    the gravity-compensated wrench; only MuJoCo C takes the object margin (mujoco-warp under MULTICCD, newton #2106)."""
    direct_c = cfg.engine is EngineChoice.MUJOCO_C
    direct = cfg.engine in (EngineChoice.MUJOCO_C, EngineChoice.MUJOCO_WARP)
    if not direct and (
        choice_value(cfg, "wrist_law") != "wrench" or not choice_value(cfg, "wrist_gravity_compensation")
    ):
        raise DataError(
            None,
            "config.physics",
            "this engine drives the wrist with the gravity-compensated wrench only; "
            "run the physics choices wrist_law / wrist_gravity_compensation on the direct engine "
            "(MuJoCo C or mujoco-warp), or run --physics replay (its wrist compensated)",
        )
    if not direct_c and choice_value(cfg, "object_margin") == "asset":
        raise DataError(
            None,
            "config.physics",
            "object_margin 'asset' edits the compiled model: direct MuJoCo C "
            "engine (device cpu) only; set --physics-set object_margin=zero on this engine",
        )


def parse_setting(text: str) -> tuple[str, object]:
    """``"choice=value"`` as ``(choice, value)``: ``true``/``false`` bools, ``none`` None, ``a,b,c`` a float tuple, a
    number a float, else the string. Raises DataError: no ``=``, or an unknown choice or value."""
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
    return name.strip(), check_value(name.strip(), value)
