"""The physics table is the one home of physics values (issue #46 item 1): ``ReplayConfig`` holds none of
them, every choice is read through :func:`replay.sim.physics.choice_value`, the CLI's ``--hand-shape`` and the
hug-oracle's contact are physics departures, and a results-format-4 config reads as overrides that keep its
effective physics (``replay.results.legacy_physics``)."""

from __future__ import annotations

import dataclasses

import pytest

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.protocol.oracle_plan import oracle_config
from replay.results import physics_table
from replay.results.legacy_physics import LEGACY_PHYSICS_FIELDS
from replay.sim import physics
from replay.sim.hand_assets import resolve_hand_variant

#: the fields results format 4 held and format 5 dropped
REMOVED = {"integrator", "cone", "impratio", "multiccd", "hand_object_contact", "hand_variant", "finger_damping"}


def test_config_holds_no_physics_value():
    names = {f.name for f in dataclasses.fields(ReplayConfig)}
    assert not names & REMOVED
    assert not names & set(physics_table.CHOICES)  # no field shares a choice's name either
    assert not hasattr(physics_table, "FIELD_OF") and not hasattr(physics, "FIELD_OF")
    assert set(LEGACY_PHYSICS_FIELDS) | {"finger_damping"} == REMOVED


def test_every_choice_is_read_from_the_table_or_its_override():
    cfg = ReplayConfig()
    for name, c in physics.PHYSICS["replay"].items():
        if name not in physics.CONFIG_SET:
            assert physics.choice_value(cfg, name) == c.value, name
    apart = ReplayConfig(physics_overrides={"cone": "pyramidal", "impratio": 1.0})
    assert (physics.choice_value(apart, "cone"), physics.choice_value(apart, "impratio")) == ("pyramidal", 1.0)
    with pytest.raises(DataError, match="config.physics_overrides.cone"):
        ReplayConfig(physics_overrides={"cone": "round"}).validate()
    with pytest.raises(DataError, match="unknown physics choice 'finger_damping'"):
        ReplayConfig(physics_overrides={"finger_damping": 0.3}).validate()


def test_hand_shape_and_the_oracles_contact_are_departures():
    """The dataset's default shape (replay.datasets: zerohand for GRAB) and ``--hand-shape`` are the override
    ``hand_shape``; the hug-oracle's ``oracle_contact`` ``manosim`` is ``contact_mixing`` ``hand``, under
    ``authored`` MuJoCo's mixing (``oracle_contact`` ``compiled``)."""
    grab = resolve_hand_variant(ReplayConfig(), "grab")
    assert grab.physics_overrides == {"hand_shape": "zerohand"}
    mine = ReplayConfig(physics_overrides={"hand_shape": "myhand"})
    assert resolve_hand_variant(mine, "grab") is mine  # a shape set is kept
    oracle = oracle_config(grab)
    assert oracle.physics_overrides == {"hand_shape": "zerohand", "contact_mixing": "hand"}
    assert grab.physics_overrides == {"hand_shape": "zerohand"}  # the lift's own config untouched
    rec = {r["name"]: r for r in physics.physics_record(oracle)}
    assert rec["contact_mixing"]["value"] == "hand" and "oracle_contact" in rec["contact_mixing"]["source"]
    assert rec["hand_shape"]["value"] == "zerohand" and "--hand-shape" in rec["hand_shape"]["source"]
    authored = oracle_config(physics.apply_physics(grab, "authored"))
    assert (
        physics.choice_value(authored, "contact_mixing") == "mujoco"
        and "contact_mixing" not in authored.physics_overrides
    )


def test_run_study_hand_shape_flag_is_an_override():
    from replay.commands.run_study import build_parser, config_from_args

    a = build_parser().parse_args(["--dataset", "grab", "--hand-shape", "myhand", "--physics", "authored"])
    cfg = config_from_args(a)
    assert cfg.physics == "authored" and cfg.physics_overrides == {"hand_shape": "myhand"}
    rec = {r["name"]: r for r in physics.physics_record(cfg)}["hand_shape"]
    assert rec["value"] == "myhand" and rec["why"].startswith("departs from 'authored'")


#: format-4 configs as main wrote them (replay.sim.physics.apply_physics copied the table into the fields;
#: resolve_hand_variant the dataset's shape)
AUTHORED_4 = {
    "physics": "authored",
    "physics_overrides": {},
    "integrator": "euler",
    "cone": "pyramidal",
    "impratio": 1.0,
    "multiccd": True,
    "hand_object_contact": "compiled",
    "hand_variant": "zerohand",
    "finger_damping": None,
}
REPLAY_4 = {
    "physics": "replay",
    "physics_overrides": {"wrist_law": "authored_actuators"},
    "integrator": "implicitfast",
    "cone": "pyramidal",
    "impratio": 10.0,
    "multiccd": False,
    "hand_object_contact": "manosim",
    "hand_variant": None,
    "finger_damping": None,
}


@pytest.mark.parametrize("old", [AUTHORED_4, REPLAY_4], ids=["authored", "replay-departing"])
def test_format_4_config_reads_with_the_same_effective_physics(old):
    new = ReplayConfig.from_dict(old)
    for key, (choice, conv) in LEGACY_PHYSICS_FIELDS.items():
        assert physics.choice_value(new, choice) == conv(old[key]), key
    table = physics.PHYSICS[old["physics"]]
    # an override only where the old value departs from its table: none is lost, none added
    departs = {
        LEGACY_PHYSICS_FIELDS[k][0]
        for k in LEGACY_PHYSICS_FIELDS
        if LEGACY_PHYSICS_FIELDS[k][1](old[k]) != table[LEGACY_PHYSICS_FIELDS[k][0]].value
    }
    assert set(new.physics_overrides) == departs | set(old["physics_overrides"])


def test_format_4_edge_cases():
    assert ReplayConfig.from_dict(AUTHORED_4).physics_overrides == {"hand_shape": "zerohand"}
    assert ReplayConfig.from_dict(REPLAY_4).physics_overrides == {
        "wrist_law": "authored_actuators",
        "cone": "pyramidal",
        "multiccd": False,
        "contact_mixing": "hand",
    }
    # an override already there is what the old rollout ran (apply_physics wrote it into the field)
    both = dict(REPLAY_4, physics_overrides={"cone": "pyramidal"})
    assert ReplayConfig.from_dict(both).physics_overrides["cone"] == "pyramidal"
    # calibrated: its table is a results file the base layer does not read: every value kept
    cal = ReplayConfig.from_dict(dict(AUTHORED_4, physics="calibrated", hand_variant=None))
    assert cal.physics_overrides == {
        "integrator": "euler",
        "cone": "pyramidal",
        "impratio": 1.0,
        "multiccd": True,
        "contact_mixing": "mujoco",
        "hand_shape": None,
    }
    with pytest.raises(DataError, match="config.finger_damping"):  # a number no choice holds: refused, not lost
        ReplayConfig.from_dict(dict(AUTHORED_4, finger_damping=0.3))
    with pytest.raises(DataError, match="config.cone"):
        ReplayConfig.from_dict(dict(AUTHORED_4, cone="round"))
