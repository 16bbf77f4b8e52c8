"""MuJoCo as authored (benchmarks/authored_reference.py) and the compiled-model diff (benchmarks/model_diff.py).

Expected values are re-derived from the files' text (ElementTree on the XML, trimesh on the
STL parts) and from MuJoCo's compile of an empty model (its option defaults), never from the
reference's own output.
"""

from __future__ import annotations

import copy
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest
import trimesh

from replay.data.objects import asset_mass
from replay.sim.made_mass import made_mass

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the model diff and reference live there
from authored_reference import AuthoredSettings, authored_spec, compile_spec, hand_qpos, parse_setting  # noqa: E402
from model_diff import LENGTH_ATOL, diff_models  # noqa: E402

pytestmark = pytest.mark.needs_data


def _reference(capsule_rhand, grab_dir, name: str, **settings) -> mujoco.MjModel:
    objects = grab_dir / "objects"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = authored_spec(capsule_rhand, objects / name, objects / "table", [0.1, 0.2, 0.9], [0, 0, 0, 1],
                             [0.0, 0.0, 0.0], [0, 0, 0, 1], AuthoredSettings(**settings))
        return compile_spec(spec, capsule_rhand)


def _object_col_defaults(grab_dir) -> dict:
    """The ``object_col`` class's geom attributes, read from common.xml's text."""
    root = ET.parse(grab_dir / "objects" / "common.xml").getroot()
    col = next(d for d in root.iter("default") if d.get("class") == "object_col")
    return col.find("geom").attrib


def _geoms(m, body: str, suffix: str = "") -> list[int]:
    b = m.body(body).id
    return [g for g in range(m.ngeom) if m.geom_bodyid[g] == b and suffix in m.geom(g).name]


@pytest.fixture(scope="module")
def mug(capsule_rhand, grab_dir):
    return _reference(capsule_rhand, grab_dir, "mug")


def test_options_are_mujocos_defaults(mug):
    empty = mujoco.MjModel.from_xml_string("<mujoco/>")
    for f in ("integrator", "cone", "impratio", "timestep", "iterations", "ls_iterations", "tolerance",
              "noslip_iterations", "o_margin", "disableflags", "enableflags", "solver", "jacobian"):
        assert getattr(mug.opt, f) == getattr(empty.opt, f), f
    np.testing.assert_array_equal(mug.opt.gravity, empty.opt.gravity)
    assert mug.opt.integrator == mujoco.mjtIntegrator.mjINT_EULER and mug.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL
    assert mug.opt.impratio == 1.0 and mug.opt.timestep == pytest.approx(0.002)


def test_object_geoms_carry_common_xml_values(mug, grab_dir):
    col = _object_col_defaults(grab_dir)
    parts = _geoms(mug, "object", "_contact")
    assert len(parts) == len(list((grab_dir / "objects" / "mug").glob("contact*.stl"))) == 14
    np.testing.assert_allclose(mug.geom_margin[parts], float(col["margin"]), rtol=0, atol=LENGTH_ATOL)
    assert float(col["margin"]) == 0.0005 and int(col["condim"]) == 4
    assert set(mug.geom_condim[parts]) == {int(col["condim"])}
    np.testing.assert_allclose(mug.geom_friction[parts], [[float(x) for x in col["friction"].split()]] * len(parts))
    # the object's free joint takes class grab's joint defaults (common.xml): armature, frictionloss
    root = ET.parse(grab_dir / "objects" / "common.xml").getroot()
    jd = next(d for d in root.iter("default") if d.get("class") == "grab").find("joint").attrib
    j = mug.joint("object/free")
    dofs = slice(j.dofadr[0], j.dofadr[0] + 6)
    np.testing.assert_allclose(mug.dof_armature[dofs], float(jd["armature"]))
    np.testing.assert_allclose(mug.dof_frictionloss[dofs], float(jd["frictionloss"]))


@pytest.mark.parametrize("name", ["cubesmall", "mug"])
def test_object_mass_is_density_times_volume(capsule_rhand, grab_dir, name):
    density = float(_object_col_defaults(grab_dir)["density"])
    parts = sorted((grab_dir / "objects" / name).glob("contact*.stl"))
    v_col = sum(trimesh.load(p).volume for p in parts)
    inert = _reference(capsule_rhand, grab_dir, name, visual="inert")
    assert inert.body_mass[inert.body("object").id] == pytest.approx(density * v_col, rel=1e-6)
    # as shipped the visual mesh (class grab: no density, so MuJoCo's 1000 kg/m^3; contype 1) weighs too:
    # as much as the same mesh alone in an empty model (MuJoCo's mesh volume; for the convex cube, its hull's)
    shipped = _reference(capsule_rhand, grab_dir, name)
    stl = grab_dir / "objects" / name / f"{name}.stl"
    alone = mujoco.MjModel.from_xml_string(f'<mujoco><asset><mesh name="v" file="{stl}"/></asset><worldbody><body>'
                                           '<freejoint/><geom type="mesh" mesh="v"/></body></worldbody></mujoco>')
    visual = float(alone.body_mass[1])
    assert shipped.body_mass[shipped.body("object").id] == pytest.approx(density * v_col + visual, rel=1e-6)
    if name == "cubesmall":
        assert visual == pytest.approx(1000.0 * trimesh.load(stl).convex_hull.volume, rel=1e-6)
    vis = _geoms(shipped, "object", "_visual")
    assert len(vis) == 1 and shipped.geom_contype[vis[0]] == 1 and shipped.geom_conaffinity[vis[0]] == 1
    assert inert.geom_contype[_geoms(inert, "object", "_visual")[0]] == 0


def test_hand_as_written(mug, capsule_rhand):
    root = ET.parse(capsule_rhand).getroot()
    acts = {a.get("name"): a.attrib for a in root.find("actuator")}
    for name in ("wrist_motor_tx", "wrist_motor_rx", "mano_motor_7_y"):
        assert mug.actuator_gainprm[mug.actuator(name).id, 0] == pytest.approx(float(acts[name]["kp"]))
        assert mug.actuator_biasprm[mug.actuator(name).id, 1] == pytest.approx(-float(acts[name]["kp"]))
    assert not np.any(mug.actuator_forcelimited)
    hand = [b for b in range(mug.nbody) if mug.body(b).name.startswith("mano_body_")]
    assert len(hand) == 16 and np.all(mug.body_gravcomp[hand] == 0.0)
    solref = [float(x) for x in root.find("default").find("geom").get("solref").split()]
    fingers = [g for g in range(mug.ngeom) if mug.geom_bodyid[g] in hand[1:]]
    np.testing.assert_allclose(mug.geom_solref[fingers], [solref] * len(fingers))
    palm = _geoms(mug, "mano_body_0")
    assert len(palm) == 1 and mug.geom_priority[palm[0]] == 1
    for k, axis in enumerate("xyz"):
        j = mug.joint(f"wrist_t{axis}")
        assert j.type == mujoco.mjtJoint.mjJNT_SLIDE and mug.dof_damping[j.dofadr[0]] == 5.0
    assert mug.joint("wrist_rot").type == mujoco.mjtJoint.mjJNT_BALL


def test_switches_take(capsule_rhand, grab_dir):
    s = AuthoredSettings()
    for text in ("gravcomp=1", "cone=elliptic", "impratio=10", "integrator=implicitfast", "hand_contact=hand",
                 "object_margin=0"):
        s = parse_setting(s, text)
    m = _reference(capsule_rhand, grab_dir, "cubesmall", **s.changed())
    hand = [b for b in range(m.nbody) if m.body(b).name.startswith("mano_body_")]
    assert np.all(m.body_gravcomp[hand] == 1.0) and m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    assert m.opt.impratio == 10.0 and m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    og = _geoms(m, "object")
    assert np.all(m.geom_solmix[og] == 0.0) and np.all(m.geom_margin[og] == 0.0)
    with pytest.raises(Exception, match="cone"):
        parse_setting(s, "cone=round")


def test_hand_qpos_places_the_wrist(mug):
    coords = np.zeros(67)
    coords[:3] = [0.3, -0.2, 1.1]
    coords[3:7] = [0.0, 0.0, np.sin(0.4), np.cos(0.4)]  # xyzw: 0.8 rad about z
    coords[7::4], coords[10::4] = 0.0, 1.0
    d = mujoco.MjData(mug)
    d.qpos[:] = hand_qpos(mug, coords)
    mujoco.mj_kinematics(mug, d)
    b = mug.body("mano_body_0").id
    np.testing.assert_allclose(d.xpos[b], coords[:3], atol=1e-12)
    np.testing.assert_allclose(d.xquat[b], [np.cos(0.4), 0, 0, np.sin(0.4)], atol=1e-12)


def test_diff_reports_a_planted_change_and_nothing_else(mug):
    diffs, unmatched = diff_models(mug, mug)
    assert diffs == [] and unmatched == []
    other = copy.copy(mug)
    g = _geoms(other, "object", "_contact")[3]
    b = other.body("object").id
    other.geom_margin[g] += 1e-3
    other.opt.impratio = 10.0
    other.body_mass[b] *= 1.01
    other.dof_damping[other.joint("mano_joint_5").dofadr[0]] = 0.5
    other.body_inertia[b] *= 1 + 1e-8  # below the 1e-6 relative tolerance: not reported
    diffs, _ = diff_models(other, mug)
    got = {(d.field, d.where.split(" ")[0]) for d in diffs}
    # the object's 4th contact part is its geom [3]: geoms match in body order with the visual geom last
    assert got == {("opt.impratio", "option"), ("geom_margin", "object[3]"), ("body_mass", "object"),
                   ("dof_damping", "mano_body_5.dof0")}, diffs
    margin = next(d for d in diffs if d.field == "geom_margin")
    assert float(margin.ours) == pytest.approx(0.0015) and float(margin.reference) == pytest.approx(0.0005)


def test_diff_compares_shapes_and_frames_not_raw_arrays(mug):
    """A capsule turned end for end, a body's principal axes listed in another order: the same shape and mass
    distribution, not reported; a capsule 0.1 mm longer, a centre of mass 0.1 mm off, a ball joint given a
    range: reported (benchmarks/model_geometry.py)."""
    other = copy.copy(mug)
    cap = _geoms(other, "mano_body_5")[0]
    w, x, y, z = other.geom_quat[cap]
    other.geom_quat[cap] = [-x, w, z, -y]  # q * (0, 1, 0, 0): a half turn about the capsule's own x axis
    b = other.body("mano_body_7").id
    w, x, y, z = other.body_iquat[b]
    other.body_iquat[b] = [(w - z) / np.sqrt(2), (x + y) / np.sqrt(2), (y - x) / np.sqrt(2), (z + w) / np.sqrt(2)]
    other.body_inertia[b] = other.body_inertia[b][[1, 0, 2]]  # the axes turned a quarter about z, swapped
    diffs, _ = diff_models(other, mug)
    assert [d for d in diffs if d.field != "body_inertia"] == [], diffs
    other.geom_size[cap, 1] += 1e-4
    other.body_ipos[b, 0] += 1e-4
    j = other.joint("mano_joint_2").id
    other.jnt_limited[j], other.jnt_range[j] = 1, [0.0, 1.0]
    got = {(d.field, d.where.split(" ")[0]) for d in diff_models(other, mug)[0] if d.field != "body_inertia"}
    assert got == {("geom_shape", "mano_body_5[0]"), ("body_ipos", "mano_body_7"), ("jnt_limited", "mano_body_2.jnt0")}


def test_diff_matches_newtons_names(mug, capsule_rhand, grab_dir):
    """A model whose bodies carry Newton's path names and whose object lost its visual geom still
    matches body by body; what has no partner is listed."""
    objects = grab_dir / "objects"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = authored_spec(capsule_rhand, objects / "mug", objects / "table", [0.1, 0.2, 0.9], [0, 0, 0, 1],
                             [0.0, 0.0, 0.0], [0, 0, 0, 1])
    for body in spec.bodies:
        if body.name.startswith("mano_body_") and body.name != "mano_body_0":
            body.name = f"mano_hand_worldbody_mano_body_0_{body.name}"
    spec.delete(spec.geom("object/mug_visual"))
    spec.delete(spec.actuator("wrist_motor_tx"))
    renamed = spec.compile()
    diffs, unmatched = diff_models(renamed, mug)
    # the visual's weight: the object's mass, and with it its centre of mass and inertia, and nothing else
    assert {(d.field, d.where) for d in diffs} <= {("body_mass", "object"), ("body_inertia", "object"),
                                                    ("body_ipos", "object"), ("body_inertia_tensor", "object")}
    assert any(d.field == "body_mass" and d.where == "object" for d in diffs)
    assert sorted(unmatched) == ["actuator wrist_tx.x only in reference",
                                 "geom object/mug_visual (object) set aside: visual, reference only"]


@pytest.mark.slow  # ~40 s: landmark IK of the short window and a Newton scene build
def test_diff_against_the_projects_oracle_scene(grab_dir, capsule_rhand):
    """Newton's converted model of the short cubesmall oracle scene matches the reference body by body:
    the options and the object's margin and solmix differ as the oracle sets them, the hand does not."""
    ours, ref, support = _scene_and_reference(grab_dir, capsule_rhand, "replay", "grab")
    diffs, unmatched = diff_models(ours, ref, geom_pairs=[(support, "table/table_contact0")])
    fields = {d.field for d in diffs}
    assert {"opt.integrator", "opt.cone", "opt.impratio", "geom_margin", "geom_solmix"} <= fields
    assert "collides" not in fields  # Newton's group bits let the same pairs collide as MuJoCo's 1/1
    hand = [d for d in diffs if d.where.startswith("mano_body_") and d.field not in ("geom_contype", "geom_conaffinity")
            and (d.field, d.where) != ("jnt_type", "mano_body_0")]  # the free joint of the wrench wrist
    assert hand == []  # shapes, masses, inertias, contact values, joints, dof damping/armature: as authored
    # the object weighed as made (object_mass_model as_made: a GRAB print), the reference as MuJoCo compiles the
    # shipped files (collision parts x 1250 kg/m^3); nothing else's mass differs
    mass = [d for d in diffs if d.field == "body_mass"]
    assert [d.where for d in mass] == ["object"], mass
    asset, cfg = _short_cubesmall_asset_and_config(grab_dir, capsule_rhand, "replay")
    made = made_mass(asset, cfg)
    assert made.model == "printed" and float(mass[0].ours) == pytest.approx(made.centre_kg, rel=1e-5)
    assert float(mass[0].reference) == pytest.approx(asset_mass(asset), rel=1e-5)
    assert made.low_kg < made.centre_kg < made.high_kg < float(mass[0].reference)  # a print weighs less than the solid
    assert sorted(u.split(" only")[0] for u in unmatched) == sorted(
        ["body table", "geom object/cubesmall_visual (object) set aside: visual, reference"] + [f"actuator {a}" for a in ("wrist_rot.x", "wrist_rot.y", "wrist_rot.z", "wrist_tx.x",
                                                    "wrist_ty.x", "wrist_tz.x")])


#: every difference the physics table declares between the project's compile of an authored scene and MuJoCo's
#: compile of the shipped files: (field, what the element's name starts with) -> the row of replay.sim.physics
#: (or the reason) that declares it. Anything else that differs fails the test.
DECLARED = {
    ("geom_condim", "support"): "support_contact", ("geom_friction", "support"): "support_contact",
    ("geom_margin", "support"): "support_contact",
    ("actuator_forcelimited", "mano_joint"): "finger_effort_limit", ("actuator_forcerange", "mano_joint"):
        "finger_effort_limit",
    # Newton writes its collision groups into the bits; what collides is compared pair by pair (`collides`)
    ("geom_contype", ""): "collision bits", ("geom_conaffinity", ""): "collision bits",
    # Newton's parent-child excludes: the pairs MuJoCo's filterparent drops too (`collides` holds pair by pair)
    ("nexclude", "model"): "parent-child excludes",
    ("geom_shape", "support"): "support_geometry",  # a box at the table top, not the table's mesh part
    ("jnt_type", "mano_body_0"): "wrist_law",  # the importer's free joint, driven by the emulated actuators
}
#: what has no partner, declared: (the line's start) -> the row that declares it
DECLARED_UNMATCHED = {"body table only in reference": "support_geometry", "actuator wrist_": "wrist_law",
                      "geom object/": "object_visual_geoms"}


def _declared_by(d) -> str | None:
    return next((row for (field, where), row in DECLARED.items() if d.field == field and d.where.startswith(where)),
                None)


@pytest.mark.parametrize("name,visual", [("cubesmall", "inert"), ("mug", "as_written")])
def test_authored_physics_compiles_as_mujoco_does(grab_dir, capsule_rhand, name, visual):
    """Under ``--physics authored`` the compiled model of a hug-oracle scene equals MuJoCo's own compile of the
    shipped files field by field (options, every geom's contact values and margin, the support's among them,
    masses, inertias, DOF damping/armature/frictionloss, actuators, which geom pairs collide): every difference
    left is declared by name (:data:`DECLARED`, each with its row of replay.sim.physics), and the support's are
    exactly the ``support_contact`` row against the GRAB table asset's text. ``object_visual_geoms`` ``inert``
    is held against MuJoCo's compile with the visual geoms inert, ``as_written`` against the files as shipped
    (the visual mesh collides and weighs); the object's joint is a <freejoint/> (``object_free_joint``).
    ~5 s per object (no landmark IK: the hand hangs still above the object; the pose is no compiled field)."""
    from replay.sim.physics import PHYSICS

    ours, ref, support, un = _authored_pair(grab_dir, capsule_rhand, name, visual)
    diffs, unmatched = diff_models(ours, ref, geom_pairs=[(support, "table/table_contact0")])
    undeclared = [d for d in diffs if _declared_by(d) is None]
    assert undeclared == [], undeclared
    assert not [d for d in diffs if d.field.startswith("opt.") or d.field == "collides"]
    assert all(any(u.startswith(k) for k in DECLARED_UNMATCHED) for u in unmatched), unmatched
    assert any(u.startswith("geom object/") for u in unmatched) == (visual == "inert")
    # the support: ours is the support_contact row, the reference the table asset's object_col class as written
    row = PHYSICS["authored"]["support_contact"].value
    g, t = ours.geom(support).id, ref.geom("table/table_contact0").id
    assert int(ours.geom_condim[g]) == row["condim"] and float(ours.geom_margin[g]) == row["margin"]
    np.testing.assert_allclose(ours.geom_friction[g], row["friction"], rtol=1e-6)
    col = _object_col_defaults(grab_dir)
    assert int(ref.geom_condim[t]) == int(col["condim"]) and ref.geom_margin[t] == pytest.approx(float(col["margin"]))
    np.testing.assert_allclose(ref.geom_friction[t], [float(x) for x in col["friction"].split()])
    support_diffs = {d.field for d in diffs if d.where.startswith("support")} - {"geom_contype", "geom_conaffinity"}
    assert support_diffs == {"geom_condim", "geom_friction", "geom_margin", "geom_shape"}  # the last: support_geometry
    assert un == ("as_written" if visual == "as_written" else "inert")


def _authored_pair(grab_dir, capsule_rhand, name: str, visual: str):
    """(our compiled MjModel of the hug-oracle scene of ``<name>_lift`` under ``--physics authored`` with
    ``object_visual_geoms`` = ``visual``, MuJoCo's compile of the shipped files, our support geom's name, the
    visual choice read back from the rollout config). The hand: short_window.still_window's (no IK)."""
    from replay.config import ReplayConfig
    from replay.protocol.oracle_plan import oracle_config
    from replay.sim.physics import apply_physics, choice_value
    from short_window import still_window

    rec, coords = still_window(grab_dir, name)
    cfg = oracle_config(apply_physics(ReplayConfig(approach_window_s=0.5, settle_s=0.2, oracle={"closure_s": 0.5, "lift_s": 0.6, "lift_height": 0.2, "hold_s": 0.2}),
                                      "authored", {"object_visual_geoms": visual}))
    ours, ref, support = _compile_both(grab_dir, capsule_rhand, rec, coords, cfg,
                                       AuthoredSettings(visual="shipped" if visual == "as_written" else "inert",
                                                        object_joint="plain"))
    return ours, ref, support, choice_value(cfg, "object_visual_geoms")


def _compile_both(grab_dir, capsule_rhand, rec, coords, cfg, settings):
    """(our compiled MjModel of ``rec``'s hug-oracle scene under ``cfg``, MuJoCo's compile of the shipped files
    at the same start poses under ``settings``, our support geom's name)."""
    from replay.protocol.rollout import build_replay_scene

    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg, protocol="hug-oracle")
    ours = scene.solver.mj_model
    obj, table = rec.target_object, rec.meta["table"]
    f0 = plan.start_frame
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = compile_spec(authored_spec(capsule_rhand, grab_dir / "objects" / obj.asset.name, grab_dir / "objects" /
                                         "table", obj.pos[f0], obj.quat[f0], table["pos"], table["quat"], settings),
                           capsule_rhand)
    support = next(ours.geom(k).name for k in range(ours.ngeom) if ours.geom(k).name.startswith("support"))
    return ours, ref, support


def _short_cubesmall_asset_and_config(grab_dir, capsule_rhand, physics_name: str):
    """(the short cubesmall window's object asset, the hug-oracle config under the named physics)."""
    from replay.config import ReplayConfig
    from replay.protocol.oracle_plan import oracle_config
    from replay.sim.physics import apply_physics
    from short_window import short_window

    rec, _ = short_window(grab_dir, capsule_rhand)
    cfg = oracle_config(apply_physics(ReplayConfig(approach_window_s=0.5, settle_s=0.2, oracle={"closure_s": 0.5, "lift_s": 0.6, "lift_height": 0.2, "hold_s": 0.2}),
                                      physics_name))
    return rec.target_object.asset, cfg


def _scene_and_reference(grab_dir, capsule_rhand, physics_name: str, object_joint: str):
    """(our compiled MjModel, MuJoCo's compile of the shipped files, our support geom's name) for the short
    cubesmall hug-oracle scene under the named physics."""
    from replay.config import ReplayConfig
    from replay.protocol.oracle_plan import oracle_config
    from replay.sim.physics import apply_physics
    from short_window import short_window

    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = oracle_config(apply_physics(ReplayConfig(approach_window_s=0.5, settle_s=0.2, oracle={"closure_s": 0.5, "lift_s": 0.6, "lift_height": 0.2, "hold_s": 0.2}),
                                      physics_name))
    return _compile_both(grab_dir, capsule_rhand, rec, coords, cfg,
                         AuthoredSettings(visual="inert", object_joint=object_joint))
