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
from replay.results.legacy_physics import LEGACY_PHYSICS_FIELDS, LEGACY_PHYSICS_GROUPS
from replay.sim import physics
from replay.sim.hand_assets import resolve_hand_variant

#: the fields results format 4 held and format 5 dropped
REMOVED = {"integrator", "cone", "impratio", "multiccd", "hand_object_contact", "hand_variant", "finger_damping"}
#: the physics fields results format 6 held and format 7 dropped (issue #55: the table is their one home)
REMOVED_7 = {"hand_object_friction", "object_density_scale", "object_ke", "object_kd", "support_friction", "contact_gap",
             "effort_limit", "oracle_effort_limit", "flutter_safety", "flutter_discrete_factor", "wrist_substep_interp",
             "wrist_gain_scale", "pad_compression_mm"}


def test_config_holds_no_physics_value():
    names = {f.name for f in dataclasses.fields(ReplayConfig)}
    assert not names & (REMOVED | REMOVED_7)
    assert not names & set(physics_table.CHOICES)  # no field shares a choice's name either
    assert not hasattr(physics_table, "FIELD_OF") and not hasattr(physics, "FIELD_OF")
    grouped = {f for g in LEGACY_PHYSICS_GROUPS.values() for f in g}
    assert set(LEGACY_PHYSICS_FIELDS) | grouped | {"finger_damping"} == REMOVED | REMOVED_7


def test_every_choice_is_read_from_the_table_or_its_override():
    cfg = ReplayConfig(physics="replay")
    for name, c in physics.PHYSICS["replay"].items():
        if name not in physics.CONFIG_SET:
            assert physics.choice_value(cfg, name) == c.value, name
    apart = ReplayConfig(physics="replay", physics_overrides={"cone": "pyramidal", "impratio": 1.0})
    assert (physics.choice_value(apart, "cone"), physics.choice_value(apart, "impratio")) == ("pyramidal", 1.0)
    with pytest.raises(DataError, match="config.physics_overrides.cone"):
        ReplayConfig(physics="replay", physics_overrides={"cone": "round"}).validate()
    with pytest.raises(DataError, match="unknown physics choice 'finger_damping'"):
        ReplayConfig(physics="replay", physics_overrides={"finger_damping": 0.3}).validate()


def test_hand_shape_and_the_oracles_contact_are_departures():
    """The dataset's default shape (replay.datasets: zerohand for GRAB) and ``--hand-shape`` are the override
    ``hand_shape``; the hug-oracle's ``oracle_contact`` ``manosim`` is ``contact_mixing`` ``hand``, under
    ``authored`` MuJoCo's mixing (``oracle_contact`` ``compiled``)."""
    grab = resolve_hand_variant(ReplayConfig(physics="replay"), "grab")
    assert grab.physics_overrides == {"hand_shape": "zerohand"}
    mine = ReplayConfig(physics="replay", physics_overrides={"hand_shape": "myhand"})
    assert resolve_hand_variant(mine, "grab") is mine  # a shape set is kept
    oracle = oracle_config(grab)
    assert oracle.physics_overrides == {"hand_shape": "zerohand", "contact_mixing": "hand",
                                        "finger_effort_limit": 1000.0, "pad_compression": 0.0}
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
    fields = {k: c for k, c in LEGACY_PHYSICS_FIELDS.items() if k in old}
    for key, (choice, conv) in fields.items():
        assert physics.choice_value(new, choice) == conv(old[key]), key
    table = physics.PHYSICS[old["physics"]]
    # an override only where the old value departs from its table: none is lost, none added
    departs = {c for k, (c, conv) in fields.items() if conv(old[k]) != table[c].value}
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


#: a format-6 config's physics fields as main wrote them by default (issue #54's main): all the table's values
DEFAULTS_6 = {"physics": "replay", "physics_overrides": {"hand_shape": "zerohand"}, "hand_object_friction": None,
              "object_density_scale": 1.0, "object_ke": 2500.0, "object_kd": 100.0, "support_friction": 1.0,
              "contact_gap": 0.0, "effort_limit": None, "oracle_effort_limit": None, "flutter_safety": 1.25,
              "flutter_discrete_factor": 1.19, "wrist_substep_interp": True, "wrist_gain_scale": 1.0,
              "pad_compression_mm": None}


def test_format_6_physics_fields_read_as_the_physics_they_ran():
    """The defaults depart from nothing (the same config as today's default, so the same study); a set value is the
    choice it stood for, with the same effective value (the hug-oracle's limit its entry; --effort the others')."""
    want = ReplayConfig(physics="replay", physics_overrides={"hand_shape": "zerohand"})
    assert ReplayConfig.from_dict(DEFAULTS_6) == want
    set6 = dict(DEFAULTS_6, hand_object_friction=1.5, object_density_scale=0.4, object_kd=50.0, support_friction=0.8,
                effort_limit=0.4, oracle_effort_limit=2.0, flutter_safety=2.7, wrist_substep_interp=False,
                wrist_gain_scale=3.0, pad_compression_mm=0.0)
    new = ReplayConfig.from_dict(set6)
    v = {k: physics.choice_value(new, k) for k in physics_table.CHOICES if k not in physics.CONFIG_SET}
    assert (v["hand_object_friction"], v["object_density_scale"], v["wrist_gain_scale"]) == (1.5, 0.4, 3.0)
    assert v["object_shape_stiffness"] == {"ke": 2500.0, "kd": 50.0} and v["support_contact"]["friction"][0] == 0.8
    assert v["finger_flutter_bound"] == {"safety": 2.7, "discrete_factor": 1.19}
    assert v["wrist_target_interpolation"] == "held" and v["pad_compression"] == 0.0
    assert v["finger_effort_limit"] == {"lift": 0.4, "hug-oracle": 2.0}
    from replay.sim import finger_strength

    assert finger_strength.profile(new) == 0.4 and finger_strength.profile(oracle_config(new)) == 2.0
    assert ReplayConfig.from_dict(dict(DEFAULTS_6, effort_limit=0.4)).physics_overrides["finger_effort_limit"] == 0.4
    with pytest.raises(DataError, match="config.object_density_scale"):  # a value no choice takes: refused by field
        ReplayConfig.from_dict(dict(DEFAULTS_6, object_density_scale=0.0))


def _format_6(cfg: ReplayConfig) -> dict:
    """``cfg`` as results format 6 wrote it: every part's field flat under its old name, the physics fields too."""
    from replay.results.legacy_physics import LEGACY_PART_FIELDS

    d = cfg.to_dict()
    for old, (part, name) in LEGACY_PART_FIELDS.items():
        d[old] = d[part][name]
    for part in {p for p, _ in LEGACY_PART_FIELDS.values()}:
        del d[part]
    return {**d, **{k: v for k, v in DEFAULTS_6.items() if k not in ("physics", "physics_overrides")}}


def test_a_format_6_config_reads_as_today_and_resume_says_why_it_reruns():
    """The same config in format 6's flat form reads back equal; its study's rollouts (another config hash: the JSON
    changed form) run again, and ``--resume`` says so in one line instead of silently."""
    from replay.study.job import config_hash
    from replay.study.resume import PriorStudy, older_form

    cfg = ReplayConfig(physics="replay", physics_overrides={"hand_shape": "zerohand"}).replace(lift={"hold_s": 0.3})
    old = _format_6(cfg)
    assert "hold_s" in old and "lift" not in old and ReplayConfig.from_dict(old) == cfg
    prior = {"format_version": 6, "config_hash": "0123456789abcdef", "config": old}
    line = older_form(PriorStudy.from_dict(prior), cfg, config_hash(cfg))
    assert "format 6" in line and "run again" in line and "\n" not in line
    hold = cfg.replace(lift={"hold_s": 0.4})
    assert older_form(PriorStudy.from_dict(prior), hold, config_hash(hold)) is None
    assert older_form(PriorStudy.from_dict(dict(prior, config_hash=config_hash(cfg))), cfg, config_hash(cfg)) is None


def test_a_world_departs_by_table_row():
    """A world's physics departure names its table row (Variant.ROWS): every row is a choice of the table, the
    sampled variables and the attribution's world factors are rows a world takes, and no study module sets a
    Variant's physics field by its own name."""
    import ast
    from pathlib import Path

    from replay.sim.engine import variants
    from replay.study import attribution, uncertainty

    assert set(variants.ROWS) <= set(physics_table.CHOICES)
    assert {rv.row for rv in uncertainty.PHYSICS_VARIABLES} <= set(variants.ROWS)
    assert set(attribution.WORLD_ROWS) <= set(variants.ROWS)
    v = variants.Variant.of_rows(
        {"hand_object_friction": 0.7, "grip_force_n": 57.45, "object_density_scale": 0.5, "pad_compression": None},
        {"grip_force_n": 114.9, "object_mass": 0.2},
    )
    assert (v.friction, v.effort_scale, v.object_mass, v.pad_depth_mm) == (0.7, 0.5, 0.1, None)
    physical = {"friction", "torsional_friction", "solref", "solimp", "effort_limit", "effort_scale", "object_mass",
                "object_mass_scale", "pad_depth_mm"}
    soft = physics_table.PHYSICS["replay"]["hand_object_softness"].levels["manosim_soft"]
    made = {f for row, fn in variants.ROWS.items() for f in fn(soft if row == "hand_object_softness" else 1.0,
                                                            {"grip_force_n": 1.0, "object_mass": 1.0})}
    assert made == physical  # each physics field is some row's
    bad = []
    for path in sorted(Path("replay/study").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Variant":
                bad += [f"{path}: {k.arg}" for k in node.keywords if k.arg in physical]
    assert not bad
