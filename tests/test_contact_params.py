"""The contact parameters MuJoCo really uses (importer_patches.contact_params,
replay.sim.contact_table) against the solver's own contact rows, ``d.contact``."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from importer_patches.contact_params import contact_row_params, pair_params, solmix_weight

# Four boxes resting on a floor, each pair of (box, floor) exercising one rule:
# priority (box a wins), priority (floor wins over box b), equal priority with solmix
# weights 3:1 and a standard solref, equal priority with a direct (negative) solref.
_XML = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" friction="0.7 0.02 0.003" solref="0.02 1"
          solimp="0.9 0.95 0.001 0.5 2" priority="1" condim="3" solmix="1"/>
    <body pos="0 0 0.049"><freejoint/>
      <geom name="a" type="box" size="0.05 0.05 0.05" priority="2" friction="1.5 0.01 0.001"
            solref="0.04 1" solimp="0.5 0.95 0.001 0.5 2" condim="4"/></body>
    <body pos="0.3 0 0.049"><freejoint/>
      <geom name="b" type="box" size="0.05 0.05 0.05" priority="0" friction="2 0.05 0.005"
            solref="0.005 2" condim="6"/></body>
  </worldbody>
</mujoco>
"""
_XML_EQUAL = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" friction="0.7 0.02 0.003" solref="0.02 1"
          solimp="0.9 0.95 0.001 0.5 2" condim="3" solmix="1"/>
    <body pos="0 0 0.049"><freejoint/>
      <geom name="c" type="box" size="0.05 0.05 0.05" friction="0.4 0.05 0.0001" solref="0.04 0.5"
            solimp="0.5 0.9 0.002 0.4 3" condim="4" solmix="3"/></body>
    <body pos="0.3 0 0.049"><freejoint/>
      <geom name="d" type="box" size="0.05 0.05 0.05" friction="1.2 0.001 0.01" solref="-1000 -20"
            solimp="0.6 0.8 0.003 0.5 2" condim="1" solmix="0"/></body>
  </worldbody>
</mujoco>
"""


def _rows(xml):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert d.ncon >= 8, d.ncon  # every box touches the floor (4 corners each)
    return m, d


@pytest.mark.parametrize("xml", [_XML, _XML_EQUAL], ids=["priority", "equal"])
def test_pair_params_equal_mujoco_contact_rows(xml):
    m, d = _rows(xml)
    rules = set()
    for i in range(d.ncon):
        row = contact_row_params(d, i)
        p = pair_params(m, row["geom1"], row["geom2"])
        rules.add(p.rule)
        assert p.condim == row["condim"]
        np.testing.assert_allclose(p.friction, row["friction"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(p.solref, row["solref"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(p.solimp, row["solimp"], rtol=0, atol=1e-12)
    assert rules == ({"priority"} if xml is _XML else {"mixed"})


def test_rules_by_hand():
    """The values the rules give, worked out from the XML above by hand."""
    m = mujoco.MjModel.from_xml_string(_XML_EQUAL)
    g = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, i): i for i in range(m.ngeom)}
    c = pair_params(m, g["c"], g["floor"])  # solmix 3 : 1 -> weight 0.75 on c
    np.testing.assert_allclose(c.solref, [0.75 * 0.04 + 0.25 * 0.02, 0.75 * 0.5 + 0.25 * 1.0])
    np.testing.assert_allclose(c.solimp[:3], [0.75 * 0.5 + 0.25 * 0.9, 0.75 * 0.9 + 0.25 * 0.95, 0.002 * 0.75 + 0.001 * 0.25])
    assert c.friction == (0.7, 0.05, 0.003) and c.condim == 4
    dd = pair_params(m, g["d"], g["floor"])  # a direct solref: element-wise minimum; solmix 0 -> floor's weight 1
    assert dd.solref == (-1000.0, -20.0)
    np.testing.assert_allclose(dd.solimp, m.geom_solimp[g["floor"]])
    assert solmix_weight(0, 0) == 0.5 and solmix_weight(0, 1) == 0.0 and solmix_weight(2, 0) == 1.0
    m2 = mujoco.MjModel.from_xml_string(_XML)
    g2 = {mujoco.mj_id2name(m2, mujoco.mjtObj.mjOBJ_GEOM, i): i for i in range(m2.ngeom)}
    a = pair_params(m2, g2["floor"], g2["a"])
    assert a.rule == "priority" and a.winner == g2["a"] and a.friction == (1.5, 0.01, 0.001) and a.condim == 4
    b = pair_params(m2, g2["b"], g2["floor"])
    assert b.winner == g2["floor"] and b.solref == (0.02, 1.0) and b.condim == 3


def test_replay_scene_table_matches_its_contacts(grab_dir, capsule_rhand):
    """In the replay's own scene, with the hand put at its grasp pose, every hand-object
    contact MuJoCo makes carries what the table says for its (bone, part) pair."""
    from replay.config import ReplayConfig
    from replay.protocol.rollout import build_replay_scene
    from replay.sim.contact_table import BONE_NAMES, hand_object_table
    from replay.sim.solver_view import SolverView
    from short_window import SHORT, short_window

    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT)
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    table = hand_object_table(scene)
    view = SolverView(scene.solver)
    m, d = view.mj_model, scene.solver.mj_data
    # the hand at the last approach target, kinematically (joint_q order = MuJoCo qpos order here)
    q = scene.model.joint_q.numpy().copy()
    q[scene.hand_q_start: scene.hand_q_start + coords.shape[1]] = plan.coords[plan.phase == 1][-1]
    scene.solver.mj_data.qpos[:] = 0  # refilled below from Newton's coordinates
    scene.model.joint_q.assign(q)
    state = scene.model.state()
    scene.solver._update_mjc_data(scene.solver.mj_data, scene.model, state)
    mujoco.mj_forward(m, d)
    g2s = view.to_newton("mjc_geom_to_newton_shape")
    hand, obj = set(map(int, scene.hand_shapes)), set(map(int, scene.object_shapes))
    shape_body = scene.model.shape_body.numpy()
    bone = {int(b): BONE_NAMES[k] for k, b in enumerate(scene.hand_bodies)}
    obj_geoms = [g for g in range(m.ngeom) if int(g2s[g]) in obj]
    checked = 0
    for i in range(d.ncon):
        row = contact_row_params(d, i)
        g1, g2 = row["geom1"], row["geom2"]
        hg, og = (g1, g2) if int(g2s[g1]) in hand else (g2, g1)
        if int(g2s[hg]) not in hand or int(g2s[og]) not in obj:
            continue
        name, part = bone[int(shape_body[g2s[hg]])], obj_geoms.index(og)
        hit = [r for r in table["pairs"] if r["hand"] == name and part in r["object_parts"]]
        assert len(hit) >= 1
        assert any(np.allclose(r["solref"], row["solref"]) and np.allclose(r["solimp"], row["solimp"])
                   and np.allclose(r["friction"], row["friction"]) and r["condim"] == row["condim"] for r in hit)
        checked += 1
    assert checked >= 2, "the grasp pose should touch the cube"
    palm = [r for r in table["pairs"] if r["hand"] == "palm"]
    assert palm and all(r["rule"] == "priority" and r["taken_from"] == "hand" for r in palm)  # manosim palm priority 1


def test_inspect_contacts_cli(capsule_rhand, capsys):
    """``python -m importer_patches.inspect_import MJCF --contacts --json``: the palm's own values
    win any pair (priority 1); a finger capsule and a geom that sets nothing mix half and
    half (both solmix 1): manosim's solref 0.04 with MuJoCo's 0.02, solimp 0.5 with 0.9."""
    import json

    from importer_patches.inspect_import import main

    assert main([str(capsule_rhand), "--contacts", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["geoms"]
    assert len(rows) == 16
    palm = [r for r in rows if r["body"] == "mano_body_0"]
    assert palm and all(r["with_default_geom"]["rule"] == "priority" for r in palm)
    finger = [r["with_default_geom"] for r in rows if r["body"] != "mano_body_0"]
    assert len(finger) == 15 and all(f["rule"] == "mixed" for f in finger)
    np.testing.assert_allclose([f["solref"][0] for f in finger], (0.04 + 0.02) / 2, atol=1e-6)
    np.testing.assert_allclose([f["solimp"][0] for f in finger], (0.5 + 0.9) / 2, atol=1e-6)


def test_palm_priority_discards_the_object_condim_flagged(grab_dir, capsule_rhand):
    """GRAB's object parts carry condim 4 and solref 0.02 (MuJoCo's default); the manosim palm
    (priority 1) replaces them with its own condim 3 and solref 0.04 in every palm contact:
    the table says so in a flag, and the fingers (priority 0) keep condim 4."""
    from replay.config import ReplayConfig
    from replay.protocol.rollout import build_replay_scene
    from replay.sim.contact_table import hand_object_table
    from short_window import SHORT, short_window

    rec, coords = short_window(grab_dir, capsule_rhand)
    _, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT))
    table = hand_object_table(scene)
    assert any(f.startswith("palm") and "condim 4 -> 3" in f and "solref 0.02 1 -> 0.04 1" in f
               for f in table["flags"]), table["flags"]
    fingers = [r for r in table["pairs"] if r["hand"] != "palm"]
    assert fingers and all(r["condim"] == 4 and r["rule"] == "mixed" for r in fingers)


def test_as_dict_is_every_field_in_order_as_plain_floats():
    """``PairParams.as_dict`` (written out by hand for speed) holds every field, in declaration order, the
    tuples as lists of Python floats: what ``dataclasses.asdict`` gave."""
    import dataclasses

    m = mujoco.MjModel.from_xml_string(_XML)
    p = pair_params(m, 0, 1)
    d = p.as_dict()
    assert list(d) == [f.name for f in dataclasses.fields(p)]
    expect = dataclasses.asdict(p)
    for k in ("friction", "solref", "solimp"):
        expect[k] = [float(x) for x in expect[k]]
        assert all(type(x) is float for x in d[k])
    assert d == expect
