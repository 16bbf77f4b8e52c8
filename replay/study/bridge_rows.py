"""The rows of the bridge from the hug-oracle protocol to the lift protocol (``scripts/bridge.py``, docs/oracle.md).

A row is ``{"id", "path", "element", "value", "protocol", "config": {ReplayConfig overrides}, "count"}``; ``path``:
``oracle`` (one element switched toward lift), ``cumulative`` (switched one after another, :data:`ELEMENTS`'
order) or ``lift`` (lift without shake and release, one element switched back); ``count``: ``lifted``, ``hold``
(rise + clearance at the end of the hold), ``shake`` (and held through the shake) or ``release`` (and not stuck
after the release)."""

from __future__ import annotations

from dataclasses import dataclass

from replay.results.json_record import JsonRecord
from replay.results.records import RolloutRecord

ORACLE = "hug-oracle"


@dataclass(frozen=True)
class BridgeRow(JsonRecord):
    """A row of the bridge (module doc), read from its JSON object."""

    id: str | None = None
    path: str | None = None
    element: str | None = None
    value: str | None = None
    protocol: str | None = None
    config: dict | None = None
    count: str | None = None


def _drive(nm: float) -> dict:
    """The hug-oracle's finger effort limit, N·m: its entry of the physics choice finger_effort_limit."""
    return {"physics_overrides": {"finger_effort_limit": {ORACLE: nm}}}


#: (element, the field, the lift protocol's value, label oracle -> lift); in the cumulative order
ELEMENTS = (
    ("start", {"oracle": {"start": "recorded"}}, "synthetic 3 cm -> recorded approach"),
    ("extra flexion", {"oracle": {"extra_flexion_deg": 0.0}}, "5 -> 0 deg"),
    ("drive", _drive(0.4), "no force range -> 0.4 N·m"),
    ("contact", {"oracle": {"contact": "compiled"}}, "manosim as authored -> ours (mixed pairs)"),
    ("step", {"oracle": {"dt": None}}, "2 ms -> 1/240 s"),
    ("success", {"oracle": {"success": "lift"}}, "off the table (0.5 m) -> rise + clearance + hold (18 cm)"),
)
#: extra rows on the oracle: values beside the two ends
EXTRA = (
    ("extra flexion", {"oracle": {"extra_flexion_deg": 10.0}}, "10 deg"),
    ("extra flexion", {"oracle": {"extra_flexion_deg": 15.0}}, "15 deg"),
    ("drive", _drive(1.0), "1 N·m"),
)

#: ``bridge_rows("authored")``: the oracle under the named physics ``authored`` (replay.sim.physics: the files as
#: written plus MuJoCo's defaults) and each physics choice the lift protocol makes otherwise, as an element of its
#: own (``physics_overrides`` toward the ``replay`` physics), before the protocol's elements. The oracle's contact
#: element is gone: as authored its contact is MuJoCo's mixing, as the lift protocol's is.
PHYSICS_ELEMENTS = (
    ("wrist gravity compensation", {"wrist_gravity_compensation": True}, "off -> +M g"),
    ("wrist law", {"wrist_law": "wrench"}, "the MJCF's actuators -> our wrench (geodesic, feed-forward)"),
    (
        "solver options",
        {"integrator": "implicitfast", "cone": "elliptic", "impratio": 10.0},
        "Euler, pyramidal, impratio 1 -> implicitfast, elliptic, 10",
    ),
    ("object margin", {"object_margin": "zero"}, "0.5 mm (asset) -> 0"),
    ("finger damping", {"finger_flutter_damping": "raised"}, "as authored -> raised to the flutter bound"),
    ("closure profile", {"closure_profile": "minjerk"}, "linear -> min-jerk"),
    ("wrist target", {"wrist_target_interpolation": "per_step"}, "held per control frame -> interpolated per step"),
    ("object mass", {"object_mass_model": "as_made"}, "the MJCF's 1250 kg/m^3 -> weighed as made"),
    ("pad compression", {"pad_compression": 3.0}, "the recorded fingers -> 3 mm"),
    (
        "finger strength",
        {"finger_effort_limit": {"lift": "human"}},
        "0.4 N·m at every joint -> each finger's maximal force",
    ),
)
#: extra rows on the authored oracle
PHYSICS_EXTRA = (
    ("contact", {"contact_mixing": "hand"}, "the hand's values (manosim's oracle contact)"),
    ("solver options", {"cone": "elliptic", "impratio": 10.0}, "elliptic and impratio 10 only"),
)


def _physics(over: dict) -> dict:
    return {"physics_overrides": dict(over)}


def merge_config(acc: dict, cfg: dict) -> dict:
    """``acc`` with ``cfg`` over it, a dict-valued field (a config part, ``physics_overrides``) merged key by key, and
    so a dict-valued physics choice."""
    return (
        {
            k: (merge_config(acc[k], v) if isinstance(v, dict) and isinstance(acc.get(k), dict) else v)
            for k, v in {**acc, **cfg}.items()
        }
        if cfg
        else dict(acc)
    )


def bridge_rows(physics: str = "replay") -> list[dict]:
    """Every row of the bridge, in table order (module doc); ``physics="authored"``: from the oracle as
    authored, the physics elements first (:data:`PHYSICS_ELEMENTS`)."""
    if physics == "authored":
        elements = [(n, _physics(c), lab) for n, c, lab in PHYSICS_ELEMENTS] + [
            e for e in ELEMENTS if e[0] != "contact"
        ]
        extra = [(n, _physics(c), lab) for n, c, lab in PHYSICS_EXTRA] + list(EXTRA)
    else:
        elements, extra = list(ELEMENTS), list(EXTRA)
    rows = [
        dict(
            id="oracle",
            path="oracle",
            element="-",
            value=f"hug-oracle as configured ({physics} physics)",
            protocol=ORACLE,
            config={},
            count="lifted",
        )
    ]
    for name, cfg, label in elements:
        rows.append(
            dict(
                id=f"oracle/{name}",
                path="oracle",
                element=name,
                value=label,
                protocol=ORACLE,
                config=dict(cfg),
                count="lifted",
            )
        )
    for name, cfg, label in extra:
        rows.append(
            dict(
                id=f"oracle/{name}/{label}",
                path="oracle",
                element=name,
                value=label,
                protocol=ORACLE,
                config=dict(cfg),
                count="lifted",
            )
        )
    acc: dict = {}
    for name, cfg, label in elements:
        acc = merge_config(acc, cfg)
        rows.append(
            dict(
                id=f"cumulative/{name}",
                path="cumulative",
                element=f"+ {name}",
                value=label,
                protocol=ORACLE,
                config=dict(acc),
                count="lifted",
            )
        )
    for count, label in (
        ("hold", "the lift protocol, judged at the end of the hold"),
        ("shake", "+ held through the shake"),
        ("release", "+ falls after the release (lift)"),
    ):
        rows.append(
            dict(
                id=f"cumulative/lift/{count}",
                path="cumulative",
                element=f"lift protocol ({count})",
                value=label,
                protocol="lift",
                config=_lift_end(acc),
                count=count,
            )
        )
    full = dict(acc)
    for name, cfg, label in elements:
        back = _without(full, cfg)
        rows.append(
            dict(
                id=f"lift/{name}",
                path="lift",
                element=name,
                value=label.split(" -> ")[0] + " (oracle's)",
                protocol=ORACLE,
                config=back,
                count="lifted",
            )
        )
    return rows


def _lift_end(acc: dict) -> dict:
    """The lift protocol's rows: no oracle field matters there, the physics switched (``acc``'s overrides, without
    the hug-oracle's own entries)."""
    over = _drop(acc.get("physics_overrides", {}), {"finger_effort_limit": {ORACLE: None}})
    return _physics(over) if over else {}


def _without(full: dict, cfg: dict) -> dict:
    """``full`` with the element ``cfg`` set back to the oracle's: its keys removed, a dict-valued one's key by key
    (a part's fields, physics overrides), an emptied one dropped."""
    return _drop(full, cfg)


def _drop(over: dict, keys: dict) -> dict:
    """``over`` without the keys of ``keys`` (of a dict in both: its keys, recursively; emptied: dropped)."""
    out = {}
    for k, v in over.items():
        if k in keys and isinstance(v, dict) and isinstance(keys[k], dict):
            v = _drop(v, keys[k])
            if v:
                out[k] = v
        elif k not in keys:
            out[k] = v
    return out


def counted(row: BridgeRow, r: RolloutRecord, cfg) -> bool:
    """Whether rollout ``r`` counts as lifted under ``row.count`` (module doc); ``cfg``: the config it ran with
    (``lifted_min_rise`` m, ``lifted_min_clearance`` m)."""
    if row.count == "lifted":
        return bool(r.lifted)
    hold = bool(
        r.stable
        and r.completed
        and r.lift.rise >= cfg.lift.lifted_min_rise
        and r.lift.clearance >= cfg.lift.lifted_min_clearance
    )
    if row.count == "hold":
        return hold
    if row.count == "shake":
        return hold and bool(r.lift.shake_held)
    return bool(r.lifted) and bool(r.lift.shake_held)
