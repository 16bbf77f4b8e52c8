"""One stated precedence (replay.study.config_layers.layered_config): the command line, then the config file (a
preset over it), then the physics table; run_study.py's flags go through it."""

from __future__ import annotations

import json

import pytest

from replay.commands.run_study import build_parser, config_from_args
from replay.config import ReplayConfig
from replay.errors import DataError
from replay.sim import finger_strength, physics
from replay.study.config_layers import layered_config


@pytest.fixture
def config_file(tmp_path):
    """A config file under the physics ``authored``: two choices, the finger effort and two fields of its own."""
    p = tmp_path / "config.json"
    over = {"cone": "elliptic", "impratio": 5.0, "finger_effort_limit": 0.8}
    p.write_text(json.dumps({"config": {"physics": "authored", "physics_overrides": over, "recording_fps": 60.0,
                                        "hand": "mesh"}}))
    return p


def _value(cfg, name):
    return physics.choice_value(cfg, name)


def test_each_value_comes_from_the_first_layer_that_states_it(config_file):
    cfg = layered_config(config_file=config_file, choices={"impratio": 20.0, "finger_effort_limit": 0.3},
                         fields={"recording_fps": 120.0})
    assert _value(cfg, "impratio") == 20.0  # the command line over the file
    assert _value(cfg, "cone") == "elliptic"  # the file over the table (authored: pyramidal)
    assert _value(cfg, "integrator") == physics.PHYSICS["authored"]["integrator"].value == "euler"  # the table
    assert finger_strength.profile(cfg) == 0.3  # --effort over the file's 0.8 over the table's (authored 0.4)
    assert cfg.recording_fps == 120.0 and cfg.hand == "mesh" and cfg.object_time_offset_s == 0.0
    alone = layered_config(config_file=config_file)
    assert (_value(alone, "impratio"), finger_strength.profile(alone), alone.recording_fps) == (5.0, 0.8, 60.0)
    bare = layered_config()
    assert bare == ReplayConfig() and finger_strength.profile(bare) == "human"  # the replay table's
    # the named physics on the command line changes the table under the file's choices, which stay
    other = layered_config(config_file=config_file, physics="replay")
    assert other.physics == "replay" and _value(other, "cone") == "elliptic" and _value(other, "integrator") == (
        "implicitfast"
    )


def test_a_preset_sits_over_the_file_and_under_the_command_line(config_file):
    assert layered_config(config_file=config_file, preset="human-replay").physics == "replay"  # preset over file
    cli = layered_config(config_file=config_file, preset="human-replay", physics="authored")
    assert cli.physics == "authored" and cli.preset.startswith("human-replay@")


def test_run_study_flags_are_the_command_line_layer(config_file):
    a = build_parser().parse_args(["--dataset", "grab", "--config", str(config_file), "--physics-set", "impratio=20",
                                   "--effort", "0.3", "--fps", "120", "--hand-shape", "myhand"])
    cfg = config_from_args(a)
    assert cfg == layered_config(config_file=config_file, fields={"recording_fps": 120.0},
                                 choices={"impratio": 20.0, "finger_effort_limit": 0.3, "hand_shape": "myhand"})
    rec = {r["name"]: r for r in physics.physics_record(cfg)}
    assert rec["finger_effort_limit"]["value"] == 0.3 and "--effort" in rec["finger_effort_limit"]["source"]


def test_a_bad_value_names_its_layer(config_file):
    with pytest.raises(DataError, match="physics_overrides.impratio"):
        layered_config(config_file=config_file, choices={"impratio": -1.0})
    with pytest.raises(DataError, match="recording_fps"):
        layered_config(fields={"recording_fps": -1.0})


def test_the_config_is_three_parts_of_at_most_30_fields():
    """Every field of ReplayConfig is in exactly one of its parts (physics, engine, protocol; issue #55: at most 30
    fields of its own), and --help's table says which."""
    import dataclasses

    from replay.config import GROUPS, PARTS, describe

    names = [f.name for f in dataclasses.fields(ReplayConfig)]
    grouped = [n for g in GROUPS.values() for n in g]
    assert sorted(grouped) == sorted(names) and len(names) <= 30
    assert set(GROUPS) == {"physics", "engine", "protocol"} and set(PARTS) <= set(grouped)
    rows = {r["name"]: r["group"] for r in describe()}
    assert rows["physics_overrides"] == "physics" and rows["steel.iterations"] == "engine"
    assert rows["lift.lift_height"] == "protocol" and rows["oracle.dt"] == "protocol"
