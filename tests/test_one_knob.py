"""One knob, one change: every attribution factor (replay.study.attribution_factors) and every
preset setting (replay.study.presets) compiled on the short cubesmall window and compared with the
defaults' compiled model, array by array (model_diff here) and contact
pair class by class (what MuJoCo uses for hand-object, object-support, hand-support, hand-hand).

What each knob may change is written below from its name, not read from the output:
finger effort the finger actuators' force range (and, set as a config, the finger joints'
inactive jnt_actfrcrange); object density the object's mass and inertia
and the constants MuJoCo derives from them (mj_setConst: subtree mass, invweight0, dof_M0 of the
object's free joint); the quaternion finger drive the finger actuators' gain and bias (switched
off); contact softness the object geoms' solmix, so that only hand-object pairs change (the
object-support pairs keep their parameters, checked); protocol factors nothing in the model.
Hand-object friction changes hand-object pairs and never object-support ones; MuJoCo has no
per-pair value without an explicit <pair>, so with the manosim palm (priority 1) the hand's
geoms carry it and hand-support and hand-hand pairs take it too: that side effect must be the
one the edit reports (readback ``friction_side_effects``), never silent.
"""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.protocol.rollout import build_replay_scene
from replay.sim.engine import pair_audit
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.mujoco_c.mjc import MjcBatch
from replay.sim.engine.variants import Variant
from replay.sim.hand_assets import hand_mjcf_path
from replay.study.attribution import Factor, factor_config, factor_variant, factor_world
from replay.study.attribution_factors import FACTORS
from replay.study.presets import PRESETS

pytestmark = pytest.mark.needs_data

#: knobs that act on the protocol (targets, timing, wrist wrench gains), never on the compiled model
PROTOCOL_KEYS = {"wrist_gain_scale", "replay_speed", "lift_s", "lift_height", "lifted_min_rise", "pad_compression"}
#: fields MuJoCo's mj_setConst derives from a body's mass and inertia
MASS_FIELDS = {"body_mass", "body_inertia", "body_invweight0", "body_subtreemass", "dof_M0", "dof_invweight0"}
HAND_KEYS = {"hand", "hand_shape"}
#: the hand shape of the ``capsule_rhand`` fixture the other knobs are compared on
BASE_SHAPE = "myhand"


def model_diff(a: mujoco.MjModel, b: mujoco.MjModel) -> dict:
    """``{field: sorted row indices that differ}`` over every array field of two compiled
    models of the same sizes (``opt`` fields as ``opt.<name>``, rows ``[0]``); a field whose
    shape differs is listed with ``[-1]``."""
    out: dict = {}
    for name in dir(a):
        if name.startswith("_"):
            continue
        va = getattr(a, name, None)
        if not isinstance(va, np.ndarray):
            continue
        vb = np.asarray(getattr(b, name))
        if va.shape != vb.shape:
            out[name] = [-1]
            continue
        if va.size and not np.array_equal(va, vb, equal_nan=va.dtype.kind == "f"):
            diff = va != vb if va.ndim < 2 else np.any((va != vb).reshape(len(va), -1), axis=1)
            out[name] = [int(i) for i in np.flatnonzero(np.atleast_1d(diff))]
    for name in dir(a.opt):
        if not name.startswith("_") and not callable(getattr(a.opt, name)):
            x, y = np.asarray(getattr(a.opt, name)), np.asarray(getattr(b.opt, name))
            if x.shape != y.shape or not np.array_equal(x, y):
                out[f"opt.{name}"] = [0]
    return out


@pytest.fixture(scope="module")
def base(grab_dir, capsule_rhand):
    rec, coords = short_window(grab_dir, capsule_rhand)
    _, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT))
    m = MjcBatch(scene, [Variant()]).worlds[0].m
    lay = MjLayout.from_scene(scene)
    return rec, coords, m, lay, pair_audit.pair_classes(m, lay), float(m.body_mass[lay.object_body])


def _names(config: dict) -> set:
    """The knobs a factor's config sets: its fields (a part's, ``{part: {field: value}}``, by their own names) and
    its physics choices (``physics_overrides``)."""
    return {n for k, v in config.items() for n in (v if isinstance(v, dict) else (k,))}


def _knobs() -> list[tuple[str, dict, dict]]:
    """(id, config overrides, variant) per factor and per preset setting (hand factors apart)."""
    out = [(f"{f.name}={f.value}", factor_config(f), factor_world(f)) for f in map(Factor.from_dict, FACTORS)
           if not HAND_KEYS & _names(factor_config(f))]
    for name, p in PRESETS.items():
        out += [(f"preset {name}: {k}", {k: v}, {}) for k, v in p["settings"].items()]
    return out


def _allowed(knobs: set, lay: MjLayout, m) -> tuple[dict, set]:
    """({field: allowed rows}, allowed pair classes) for a set of knob names (module doc)."""
    fa, hg, og = set(lay.finger_act.tolist()), set(np.flatnonzero(lay.hand_geoms)), set(np.flatnonzero(lay.object_geoms))
    b = lay.object_body
    dofs = set(range(int(m.body_dofadr[b]), int(m.body_dofadr[b]) + int(m.body_dofnum[b])))
    fields, classes = {}, set()
    if knobs & {"finger_effort_limit"}:  # one limit at every joint instead of the per-joint strength: the same fields
        fields["actuator_forcerange"] = fa
        # the config's effort is also Newton's joint effort limit, written to the finger ball joints'
        # jnt_actfrcrange; inactive (jnt_actfrclimited false, asserted in the test)
        fields["jnt_actfrcrange"] = {int(j) for j in np.flatnonzero(np.asarray(m.jnt_type) == 1)}
    if knobs & {"mass_scale", "object_density_scale"}:
        fields.update({f: ({b, 0} if f.startswith("body") else dofs) for f in MASS_FIELDS})
    if knobs & {"friction", "hand_object_friction"}:
        fields["geom_friction"] = hg | og
        classes |= {"hand-object", "hand-support", "hand-hand"}  # the last two: reported side effects (module doc)
    if knobs & {"contact_mixing"}:
        fields["geom_solmix"] = og
        classes.add("hand-object")
    if knobs & {"finger_drive"}:
        fields.update(actuator_gainprm=fa, actuator_biasprm=fa)
    return fields, classes


@pytest.mark.parametrize("name,config,variant", _knobs(), ids=[k[0] for k in _knobs()])
def test_each_knob_changes_only_what_its_name_says(base, capsule_rhand, name, config, variant):
    rec, coords, m0, lay, pc0, mass = base
    # "physics": a preset naming the default physics (replay.study.presets) changes nothing
    unknown = _names(config) - PROTOCOL_KEYS - {"finger_effort_limit", "object_density_scale", "hand_object_friction",
                                             "contact_mixing", "finger_drive", "physics"}
    assert not unknown, f"{name}: no rule for {unknown}: say what the knob may change before adding it"
    _, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT).replace(**config))
    w = MjcBatch(scene, [factor_variant(Factor(name=name, choices=variant), mass)]).worlds[0]
    diff = model_diff(m0, w.m)
    fields, classes = _allowed(_names(config) | set(variant), lay, m0)
    assert set(diff) <= set(fields), f"{name} changed {sorted(set(diff) - set(fields))}"
    for f, rows in diff.items():
        assert set(rows) <= fields[f], f"{name}: {f} rows {sorted(set(rows) - fields[f])}"
    if "jnt_actfrcrange" in diff:
        assert not np.any(w.m.jnt_actfrclimited)
    changed = pair_audit.changed_classes(pc0, pair_audit.pair_classes(w.m, lay))
    assert set(changed) <= classes, f"{name} changed the {sorted(set(changed) - classes)} contacts"
    assert "object-support" not in changed
    if {"friction", "hand_object_friction"} & (set(config) | set(variant)):
        rb = w.readback if "hand_object_friction" in variant else scene.readback["object_contact"]["friction"]
        side = {c: n for c, n in changed.items() if c != "hand-object"}
        assert rb["friction_side_effects"] == side  # said, not silent
        assert changed["hand-object"] == sum(c == "hand-object" for c, _ in pc0.values())  # every one of them
    if (set(config) | set(variant)) <= PROTOCOL_KEYS:
        assert not diff  # the protocol factors (and the defaults) leave the compiled model bit for bit


def test_friction_reaches_every_hand_object_pair_and_spares_the_object_support_one(base):
    """1.5 (the preset's skin friction): each hand-object pair uses 1.5; the object-table pair keeps
    MuJoCo's max of the object's and the table's 1.0 as built (the max rule made it 1.5 before)."""
    m0, lay, pc0 = base[2:5]
    m = copy.copy(m0)
    got = pair_audit.set_hand_object_friction(m, lay, float(np.float32(1.5)))
    after = pair_audit.pair_classes(m, lay)
    assert got["contact_friction"] == pytest.approx(1.5) and got["friction_geoms"] == "hand"
    assert all(p[1][0] == pytest.approx(1.5) for c, p in after.values() if c == "hand-object")
    os_before = [p[1] for c, p in pc0.values() if c == "object-support"]
    assert os_before and os_before == [p[1] for c, p in after.values() if c == "object-support"]
    assert os_before[0][0] == pytest.approx(1.0)
    assert np.all(m.geom_friction[lay.object_geoms] == m0.geom_friction[lay.object_geoms])


@pytest.mark.parametrize("config", [{"physics_overrides": {"hand_shape": "zerohand"}}, {"hand": "mesh"}],
                         ids=["zerohand", "mesh"])
def test_hand_factors_leave_object_and_support_as_built(base, grab_dir, manosim_dir, config):
    """Another hand shape (the base is ``myhand``: the factor's other shape) or geometry changes the hand; the object's and the support's geoms, the
    object's mass and the solver options stay as built."""
    m0, lay0 = base[2:4]
    cfg = ReplayConfig(**dict(SHORT, **dict({"physics_overrides": {"hand_shape": BASE_SHAPE}}, **config)))
    mjcf = hand_mjcf_path(manosim_dir, cfg)
    rec, coords = short_window(grab_dir, mjcf)
    _, scene, _ = build_replay_scene(rec, coords, mjcf, cfg=cfg)
    m = MjcBatch(scene, [Variant()]).worlds[0].m
    lay = MjLayout.from_scene(scene)
    for mask0, mask in ((lay0.object_geoms, lay.object_geoms), (~lay0.object_geoms & ~lay0.hand_geoms,
                                                                 ~lay.object_geoms & ~lay.hand_geoms)):
        for f in ("geom_friction", "geom_solref", "geom_solimp", "geom_solmix", "geom_priority", "geom_condim",
                  "geom_size", "geom_margin", "geom_gap"):
            assert np.array_equal(getattr(m0, f)[mask0], getattr(m, f)[mask]), f
    assert m.body_mass[lay.object_body] == m0.body_mass[lay0.object_body]
    assert not {k for k in model_diff(m0, m) if k.startswith("opt.")}


def test_friction_on_a_prebuilt_ablation_edits_the_contact_runs_geoms(base, capsule_rhand):
    """A scene built with hand-object contact filtered out (the contact ablation of an object whose
    parts leave no free contype bit, e.g. eyeglasses' 19 parts) has no hand-object pair to read:
    the friction edit judges the pairs its contact run has, so both runs edit the same geoms
    (the preset failed on eyeglasses_lift with "contact_friction = 1.5 did not take: nan")."""
    rec, coords, m0, lay, _, _ = base
    _, abl, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT), ablation=True)
    ma = copy.deepcopy(abl.solver.mj_model)
    la = MjLayout.from_scene(abl)
    assert not any(c == "hand-object" for c, _ in pair_audit.pair_classes(ma, la).values())
    mc = copy.deepcopy(m0)
    got_c = pair_audit.set_hand_object_friction(mc, lay, 1.5)
    got_a = pair_audit.set_hand_object_friction(ma, la, 1.5)
    assert got_a["contact_friction"] == got_c["contact_friction"] == 1.5
    assert got_a["friction_geoms"] == got_c["friction_geoms"]
    assert np.array_equal(ma.geom_friction, mc.geom_friction)
