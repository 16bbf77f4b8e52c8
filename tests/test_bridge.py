"""The bridge's rows (replay.study.bridge), counting and table (replay.output.bridge_table): no data needed."""

from __future__ import annotations

from replay.config import ReplayConfig
from replay.protocol.oracle_plan import oracle_config
from replay.sim import finger_strength, physics
from replay.output.bridge_table import bridge_markdown
from replay.results.records import RolloutRecord
from replay.study.bridge import ELEMENTS, BridgeRow, bridge_rows, counted, summarize_rows


def _leaves(d: dict, at: str = "") -> dict:
    """A nested config dict's leaves, keyed by their dotted path."""
    out = {}
    for k, v in d.items():
        out.update(_leaves(v, f"{at}{k}.") if isinstance(v, dict) else {f"{at}{k}": v})
    return out


def test_rows_switch_one_element_alone_and_cumulatively():
    rows = {r["id"]: r for r in bridge_rows()}
    names = [e[0] for e in ELEMENTS]
    assert names == ["start", "extra flexion", "drive", "contact", "step", "success"]
    for name, cfg, _ in ELEMENTS:  # alone: exactly that element's field, the oracle's others
        assert rows[f"oracle/{name}"]["config"] == cfg
    full = rows["cumulative/success"]["config"]
    assert full == {"oracle": {"start": "recorded", "extra_flexion_deg": 0.0, "contact": "compiled", "dt": None,
                               "success": "lift"},
                    "physics_overrides": {"finger_effort_limit": {"hug-oracle": 0.4}}}
    # every element switched = the lift protocol's own values (its defaults): its effort limit as the manosim-in-Newton
    # protocol ran it (0.4 N·m at every joint, the physics authored's; the hug-oracle's entry of the same choice)
    d = ReplayConfig()
    drive = oracle_config(ReplayConfig.from_dict(full))
    assert finger_strength.profile(physics.apply_physics(d, "authored")) == finger_strength.profile(drive) == 0.4
    assert physics.choice_value(d, "contact_mixing") == "mujoco"
    for name, cfg, _ in ELEMENTS:  # the lift path: all switched but one
        back = rows[f"lift/{name}"]["config"]
        assert set(_leaves(full)) - set(_leaves(back)) == set(_leaves(cfg))
    for v in ("0", "10", "15"):
        assert any(r["config"].get("oracle", {}).get("extra_flexion_deg") == float(v) for r in rows.values())
    assert {r["count"] for r in rows.values() if r["protocol"] == "lift"} == {"hold", "shake", "release"}


def _m(**kw):
    base = dict(lifted=False, stable=True, completed=True, rise=0.0, clearance=0.0, shake_held=None,
                outcome="not_lifted")
    return RolloutRecord.from_metrics(dict(base, **kw))


def test_counting_modes():
    cfg = ReplayConfig()
    rows = {r["count"]: BridgeRow.from_dict(r) for r in bridge_rows() if r["protocol"] == "lift"}
    held_then_shaken = _m(rise=0.17, clearance=0.15, lifted=False, shake_held=False)  # lifted at hold, fell in shake
    assert counted(rows["hold"], held_then_shaken, cfg) and not counted(rows["shake"], held_then_shaken, cfg)
    stuck = _m(rise=0.17, clearance=0.15, lifted=False, shake_held=True, outcome="stuck")
    assert counted(rows["shake"], stuck, cfg) and not counted(rows["release"], stuck, cfg)
    assert not counted(rows["hold"], _m(rise=0.08, clearance=0.05), cfg)  # rose less than lifted_min_rise 9 cm


def test_summary_and_markdown():
    rows = bridge_rows()[:2]
    per = {"mug_lift": {rows[0]["id"]: {"lifted": True, "outcome": "lifted", "class": None},
                        rows[1]["id"]: {"lifted": False, "outcome": "not_lifted", "class": "never_gripped"}},
           "bowl_lift": {rows[0]["id"]: {"lifted": False, "outcome": "unstable", "class": "unstable"},
                         rows[1]["id"]: {"error": "DataError: x"}}}
    out = summarize_rows(rows, per)
    assert (out[0]["lifted"], out[0]["of"], out[0]["unstable"], out[0]["lifted_names"]) == (1, 2, 1, ["mug"])
    assert (out[1]["lifted"], out[1]["of"], out[1]["errors"], out[1]["diagnosis"]) == (0, 2, 1, {"never_gripped": 1})
    md = bridge_markdown({"rows": out}).splitlines()
    assert md[0].startswith("| path | element | value | lifted | unstable | stuck_after_release | no_contact")
    assert "| 1/2 | 1 |" in md[2] and md[3].split(" | ")[3:5] == ["0/2", "0"]


def test_oracle_fields_are_validated_by_name():
    import pytest

    from replay.errors import DataError
    from replay.protocol.oracle_plan import oracle_config

    for bad, field in ((dict(oracle={"start": "approach"}), "config.oracle.start"), (dict(oracle={"dt": 0.003}), "config.oracle.dt"),
                       (dict(oracle={"lift_s": 0.0}), "config.oracle.lift_s")):
        with pytest.raises(DataError, match=field):
            ReplayConfig(**bad).validate()
    o = oracle_config(ReplayConfig())  # the oracle as run: 2 ms (50 Hz x 10), no force range, manosim contact
    assert (o.control_fps, o.substeps, finger_strength.profile(o), o.lift.shake_s) == (50.0, 10, 1000.0, 0.0)
    # manosim's contact, no force range, no pad compression: the protocol's departures
    assert o.physics_overrides == {"contact_mixing": "hand", "finger_effort_limit": 1000.0, "pad_compression": 0.0}
    assert physics.choice_value(o, "contact_mixing") == "hand"
    assert o.dt == 0.002
    with pytest.raises(DataError, match="config.oracle.contact"):  # contact as authored: MuJoCo C engine only
        oracle_config(ReplayConfig(engine="mujoco-warp", device="cuda"))
    o = oracle_config(ReplayConfig(physics_overrides={"finger_effort_limit": {"hug-oracle": 0.4}}, oracle={"dt": None, "contact": "compiled"}))
    assert o.dt == 1 / 240 and finger_strength.profile(o) == 0.4
