"""The rows of the bridge from the hug-oracle protocol to the lift protocol (``scripts/bridge.py``).

Each row is ``{"id", "path", "element", "value", "protocol", "config": {ReplayConfig
overrides}, "count"}``: ``path`` is ``oracle`` (the oracle with one element switched toward
the lift protocol), ``cumulative`` (the elements switched one after another, in the order of
:data:`ELEMENTS`), or ``lift`` (the oracle with every element switched, i.e. the lift protocol
without shake and release, with one element switched back toward the oracle). ``count``
says what a row counts as lifted: ``lifted`` (the protocol's own test), ``hold`` (the lift
protocol's rise + clearance at the end of the hold, whatever came later), ``shake`` (that and
held through the shake) or ``release`` (that and not stuck after the release: the lift
protocol's ``lifted`` with ``shake_held``). The three lift-protocol rows are one run of
``--protocol lift`` with its defaults.

The elements and their two ends (oracle -> lift; fields of :mod:`replay.results.oracle_fields`):
start (synthetic 3 cm -> recorded approach), extra flexion (5 -> 0 deg; swept 0, 10, 15 on the
oracle), drive (no force range -> 0.4 N·m; 1 N·m too), contact (manosim as authored -> our
mixed pairs), step (2 ms -> 1/240 s), success (off the table after 0.5 m -> rise + clearance
after the lift protocol's 18 cm lift and hold; then + shake; then + release).
"""

from __future__ import annotations

#: (element, the field, the lift protocol's value, label oracle -> lift); in the cumulative order
ELEMENTS = (
    ("start", {"oracle_start": "recorded"}, "synthetic 3 cm -> recorded approach"),
    ("extra flexion", {"oracle_extra_flexion_deg": 0.0}, "5 -> 0 deg"),
    ("drive", {"oracle_effort_limit": 0.4}, "no force range -> 0.4 N·m"),
    ("contact", {"oracle_contact": "compiled"}, "manosim as authored -> ours (mixed pairs)"),
    ("step", {"oracle_dt": None}, "2 ms -> 1/240 s"),
    ("success", {"oracle_success": "lift"}, "off the table (0.5 m) -> rise + clearance + hold (18 cm)"),
)
#: extra rows on the oracle: values beside the two ends
EXTRA = (
    ("extra flexion", {"oracle_extra_flexion_deg": 10.0}, "10 deg"),
    ("extra flexion", {"oracle_extra_flexion_deg": 15.0}, "15 deg"),
    ("drive", {"oracle_effort_limit": 1.0}, "1 N·m"),
)
ORACLE = "hug-oracle"


def bridge_rows() -> list[dict]:
    """Every row of the bridge, in table order (module doc)."""
    rows = [dict(id="oracle", path="oracle", element="-", value="hug-oracle as configured", protocol=ORACLE,
                 config={}, count="lifted")]
    for name, cfg, label in ELEMENTS:
        rows.append(dict(id=f"oracle/{name}", path="oracle", element=name, value=label, protocol=ORACLE,
                         config=dict(cfg), count="lifted"))
    for name, cfg, label in EXTRA:
        rows.append(dict(id=f"oracle/{name}/{label}", path="oracle", element=name, value=label, protocol=ORACLE,
                         config=dict(cfg), count="lifted"))
    acc: dict = {}
    for name, cfg, label in ELEMENTS:
        acc = {**acc, **cfg}
        rows.append(dict(id=f"cumulative/{name}", path="cumulative", element=f"+ {name}", value=label,
                         protocol=ORACLE, config=dict(acc), count="lifted"))
    for count, label in (("hold", "the lift protocol, judged at the end of the hold"),
                         ("shake", "+ held through the shake"), ("release", "+ falls after the release (lift)")):
        rows.append(dict(id=f"cumulative/lift/{count}", path="cumulative", element=f"lift protocol ({count})",
                         value=label, protocol="lift", config={}, count=count))
    full = dict(acc)
    for name, cfg, label in ELEMENTS:
        back = {k: v for k, v in full.items() if k not in cfg}
        rows.append(dict(id=f"lift/{name}", path="lift", element=name, value=label.split(" -> ")[0] + " (oracle's)",
                         protocol=ORACLE, config=back, count="lifted"))
    return rows


def counted(row: dict, m: dict, cfg) -> bool:
    """Whether rollout metrics ``m`` count as lifted under ``row['count']`` (module doc);
    ``cfg``: the config it ran with (``lifted_min_rise`` m, ``lifted_min_clearance`` m)."""
    if row["count"] == "lifted":
        return bool(m["lifted"])
    hold = bool(m["stable"] and m["completed"] and m["rise"] >= cfg.lifted_min_rise
                and m["clearance"] >= cfg.lifted_min_clearance)
    if row["count"] == "hold":
        return hold
    if row["count"] == "shake":
        return hold and bool(m.get("shake_held"))
    return bool(m["lifted"]) and bool(m.get("shake_held"))
