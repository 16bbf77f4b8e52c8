"""The physics table's rows that MuJoCo's compile decides (replay.sim.physics SHARED), read back from the compiled
models of real scenes: the step, the finger effort limit, the support's contact values, the priorities, and the
condim and friction (sliding, torsional, rolling) every pair of each class uses (MuJoCo's mixing,
replay.sim.engine.pair_audit.pair_classes), under both named physics and both protocols, with the object's visual
geoms inert and as written. Expected values are the table's; the compiled model is the measurement.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.sim import physics

pytestmark = pytest.mark.needs_data

#: the table row of each pair class (the hand split into palm, ``mano_body_0``, and fingers)
ROW_OF_CLASS = {"finger-object": "contact_finger_object", "palm-object": "contact_palm_object",
                "object-support": "contact_object_support", "finger-support": "contact_hand_support",
                "palm-support": "contact_hand_support"}
CASES = [("authored", "hug-oracle", "inert"), ("replay", "lift", "inert"), ("authored", "hug-oracle", "as_written"),
         ("replay", "hug-oracle", "inert")]
#: the solver options a compiled model must carry under each named physics, written out from their sources, not
#: the table (the table's rows must agree): authored = MuJoCo's documented <option> defaults (XML reference: Euler,
#: pyramidal, impratio 1; multi-CCD on: mjDSBL_MULTICCD is a disable flag, unset by default); replay = implicitfast,
#: elliptic, impratio 10 (MuJoCo modeling guide, Contact), multi-CCD on (a hull on the table-top box)
EXPECTED_OPTIONS = {"authored": ("mjINT_EULER", "mjCONE_PYRAMIDAL", 1.0, True),
                    "replay": ("mjINT_IMPLICITFAST", "mjCONE_ELLIPTIC", 10.0, True)}


def _scene(grab_dir, capsule_rhand, physics_name: str, protocol: str, visual: str):
    from replay.protocol.oracle_plan import oracle_config
    from replay.protocol.rollout import build_replay_scene
    from short_window import still_window

    rec, coords = still_window(grab_dir)
    cfg = physics.apply_physics(ReplayConfig(approach_window_s=0.5, settle_s=0.2), physics_name,
                                {"object_visual_geoms": visual})
    if protocol == "hug-oracle":
        cfg = oracle_config(cfg)
    return build_replay_scene(rec, coords, capsule_rhand, cfg=cfg, protocol=protocol)[1], cfg


@pytest.fixture(scope="module", params=CASES, ids=["-".join(c) for c in CASES])
def case(request, grab_dir, capsule_rhand):
    scene, cfg = _scene(grab_dir, capsule_rhand, *request.param)
    return request.param, scene, cfg


def _by_class(scene) -> dict:
    """{class: {(condim, friction (3,) rounded)}} over every colliding geom pair of the compiled model."""
    from replay.sim.engine.layout import MjLayout
    from replay.sim.engine.pair_audit import pair_classes

    m = scene.solver.mj_model
    lay = MjLayout.from_scene(scene)
    palm = set(np.flatnonzero(np.asarray(m.geom_bodyid) == lay.root).tolist())
    out: dict = {}
    for (a, b), (cls, p) in pair_classes(m, lay).items():
        if cls.startswith("hand-") and cls != "hand-hand":
            hand = a if lay.hand_geoms[a] else b
            cls = ("palm" if hand in palm else "finger") + cls[4:]
        out.setdefault(cls, set()).add((int(p[0]), tuple(round(float(x), 7) for x in p[1])))
    return out


def test_every_pair_class_uses_the_tables_condim_and_friction(case):
    (name, _, visual), scene, _ = case
    got = _by_class(scene)
    assert set(ROW_OF_CLASS) <= set(got)
    tab = physics.PHYSICS[name]
    for cls, row in ROW_OF_CLASS.items():
        want = tab[row].value
        if cls == "object-support" and visual == "as_written":
            # the visual geom as written carries MuJoCo's defaults: its support pairs take the max with the box's
            want_vis = tab["contact_hand_support"].value
            assert got[cls] == {(want["condim"], tuple(round(x, 7) for x in np.float32(want["friction"]).tolist())),
                                (want_vis["condim"], tuple(round(x, 7) for x in
                                                           np.float32(want_vis["friction"]).tolist()))}, cls
            continue
        if cls == "finger-object" and visual == "as_written":
            continue  # the finger-visual pairs: MuJoCo's defaults on both sides (asserted below)
        assert got[cls] == {(want["condim"], tuple(round(x, 7) for x in np.float32(want["friction"]).tolist()))}, cls


def test_priorities_support_step_and_effort_are_the_tables(case):
    """The palm's priority, the support box's contact values, the step and the finger actuators' force range of
    the compiled model are the rows ``contact_priority``, ``support_contact``, ``timestep``, ``finger_effort_limit``
    (under the scene's protocol); the rollout record reports the step and limit the config runs with."""
    from replay.results.oracle_fields import ORACLE_NO_LIMIT_NM
    from replay.sim.engine.layout import MjLayout

    (name, protocol, _), scene, cfg = case
    m = scene.solver.mj_model
    lay = MjLayout.from_scene(scene)
    tab = physics.PHYSICS[name]
    pri = tab["contact_priority"].value
    palm = np.asarray(m.geom_bodyid) == lay.root
    hand = np.asarray(lay.hand_geoms, bool)
    assert set(m.geom_priority[palm]) == {pri["palm"]} and set(m.geom_priority[hand & ~palm]) == {pri["fingers"]}
    assert set(m.geom_priority[np.asarray(lay.object_geoms, bool)]) == {pri["object"]}
    sup = next(g for g in range(m.ngeom) if m.geom(g).name.startswith("support"))
    row = tab["support_contact"].value
    assert m.geom_priority[sup] == pri["support"] and m.geom_condim[sup] == row["condim"]
    np.testing.assert_allclose(m.geom_friction[sup], row["friction"], rtol=1e-6)
    assert m.geom_margin[sup] == row["margin"]
    dt = tab["timestep"].value[protocol]
    assert m.opt.timestep == pytest.approx(dt, rel=1e-12) and cfg.dt == pytest.approx(dt, rel=1e-12)
    limit = tab["finger_effort_limit"].value[protocol]
    rec = {r["name"]: r["value"] for r in physics.physics_record(cfg)}
    assert rec["timestep"] == pytest.approx(dt)
    if limit == "human":  # per joint: the finger's pad force x the joint's lever (tests/test_finger_strength.py)
        from replay.sim.finger_strength import joint_limits

        want = joint_limits(cfg, scene.build_inputs["mjcf"])[lay.finger_joint]
        np.testing.assert_allclose(np.abs(m.actuator_forcerange[lay.finger_act]), np.c_[want, want], rtol=1e-6)
        assert rec["finger_effort_limit"] == tab["finger_effort_limit"].value and "finger_effort_limit" not in cfg.physics_overrides
        return
    limit = ORACLE_NO_LIMIT_NM if limit is None else limit
    np.testing.assert_allclose(np.abs(m.actuator_forcerange[lay.finger_act]), limit, rtol=1e-6)
    assert rec["finger_effort_limit"] == pytest.approx(limit)


def test_compiled_options_and_oracle_contact_are_the_expected(case):
    """The compiled model's integrator, cone, impratio and multi-CCD flag are :data:`EXPECTED_OPTIONS` of its
    physics (the hug-oracle's too: the protocol sets no solver option), and the table says the same; the
    hug-oracle's own contact (``oracle_contact`` manosim, the replay physics' default) reaches the model as the
    object geoms' solmix 0 (replay.sim.object_contact: the fingers' solref/solimp outright), while ``authored``
    (MuJoCo's mixing) and the lift protocol leave solmix as built."""
    import mujoco

    from replay.sim.engine.layout import MjLayout

    (name, protocol, _), scene, cfg = case
    m = scene.solver.mj_model
    integ, cone, impratio, multiccd = EXPECTED_OPTIONS[name]
    assert int(m.opt.integrator) == int(getattr(mujoco.mjtIntegrator, integ))
    assert int(m.opt.cone) == int(getattr(mujoco.mjtCone, cone))
    assert float(m.opt.impratio) == impratio
    assert (not int(m.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_MULTICCD)) is multiccd
    tab = physics.PHYSICS[name]
    names = {"mjINT_EULER": "euler", "mjINT_IMPLICITFAST": "implicitfast", "mjCONE_PYRAMIDAL": "pyramidal",
             "mjCONE_ELLIPTIC": "elliptic"}
    assert (tab["integrator"].value, tab["cone"].value) == (names[integ], names[cone])
    assert (tab["impratio"].value, tab["multiccd"].value) == (impratio, multiccd)
    solmix = m.geom_solmix[np.asarray(MjLayout.from_scene(scene).object_geoms, bool)]
    manosim = protocol == "hug-oracle" and name == "replay"
    assert physics.choice_value(cfg, "contact_mixing") == ("hand" if manosim else "mujoco")
    assert np.all(solmix == 0.0) if manosim else np.all(solmix > 0.0)


def test_visual_geoms_as_written_collide_and_weigh(grab_dir, capsule_rhand):
    """``object_visual_geoms`` ``as_written`` adds the cubesmall's visual geom: it collides with the fingers on
    MuJoCo's default contact values (as common.xml's class grab leaves them), and the object weighs more by
    MuJoCo's 1000 kg/m^3 over the visual mesh; ``inert`` leaves it out."""
    inert, _ = _scene(grab_dir, capsule_rhand, "authored", "hug-oracle", "inert")
    written, _ = _scene(grab_dir, capsule_rhand, "authored", "hug-oracle", "as_written")
    from replay.sim.object_visual import mujoco_mass_properties, written_visual_geoms

    geoms = written_visual_geoms(inert.build_inputs["asset"])
    assert [g["name"] for g in geoms] == ["cubesmall_visual"] and geoms[0]["density"] == 1000.0
    extra = mujoco_mass_properties(geoms[0]["mesh"], 1000.0)[0]
    assert written.object_mass == pytest.approx(inert.object_mass + extra, rel=1e-6)
    m = written.solver.mj_model
    vis = [g for g in range(m.ngeom) if m.geom(g).name.startswith("object_visual")]
    assert len(vis) == 1 and m.geom_condim[vis[0]] == 3 and m.geom_margin[vis[0]] == 0.0
    np.testing.assert_allclose(m.geom_friction[vis[0]], [1.0, 0.005, 0.0001], rtol=1e-6)
    got = _by_class(written)
    assert (3, tuple(round(x, 7) for x in np.float32([1.0, 0.005, 0.0001]).tolist())) in got["finger-object"]


def test_protocol_set_rows_are_no_overrides():
    """The step is set by the protocol's config, never through ``physics_overrides``; the effort limit and the
    pad depth are the table's, an override's, or a config field's where it is set (``--effort``: before the
    override); the departure is recorded as such."""
    with pytest.raises(DataError, match="substeps"):
        physics.apply_physics(ReplayConfig(physics="replay"), "replay", {"timestep": 0.002})
    with pytest.raises(DataError, match="physics_overrides.finger_effort_limit"):
        physics.apply_physics(ReplayConfig(physics="replay"), "replay", {"finger_effort_limit": -1.0})
    with pytest.raises(DataError, match="physics_overrides.pad_compression"):
        physics.apply_physics(ReplayConfig(physics="replay"), "replay", {"pad_compression": -1.0})
    over = physics.apply_physics(ReplayConfig(physics="replay"), "authored", {"pad_compression": 2.0})
    assert physics.choice_value(over, "pad_compression") == 2.0
    assert physics.choice_value(physics.apply_physics(over, None, {"pad_compression": 1.0}), "pad_compression") == 1.0
    assert physics.choice_value(ReplayConfig(physics="replay"), "finger_effort_limit")["lift"] == "human"
    assert physics.choice_value(ReplayConfig(physics="replay"), "pad_compression") == 3.0
    over = {"finger_effort_limit": 0.8, "pad_compression": 0.0}
    cfg = physics.apply_physics(ReplayConfig(physics="replay"), None, over)
    assert physics.choice_value(cfg, "finger_effort_limit") == 0.8 and physics.choice_value(cfg, "pad_compression") == 0
    rec = {r["name"]: r for r in physics.physics_record(cfg)}
    assert rec["finger_effort_limit"]["value"] == 0.8 and "--effort" in rec["finger_effort_limit"]["source"]
    assert rec["pad_compression"]["value"] == 0.0 and "departs from 'replay'" in rec["pad_compression"]["why"]
