"""The verdict envelope (replay.study.envelope, run_study --envelope, issue #39): its settings flip the
choices in effect for the study (and nothing else), reach the compiled model, and on real GRAB lifts
its default setting gives the plain study's verdict."""

from __future__ import annotations

import json

import numpy as np
import pytest

from replay.config import ReplayConfig, resolve_hand_variant
from replay.sim import physics
from replay.study.envelope import (
    CLASSES,
    SETTING_NAMES,
    choices_in_effect,
    envelope_counts,
    envelope_settings,
    setting_config,
    verdict_envelope,
)

#: (named physics, protocol) pairs a study can run the envelope with
CASES = [("replay", "lift"), ("replay", "hug-oracle"), ("authored", "lift"), ("authored", "hug-oracle")]


def _cfg(name: str) -> ReplayConfig:
    return resolve_hand_variant(physics.apply_physics(ReplayConfig(), name), "grab")


@pytest.mark.parametrize("name,protocol", CASES)
def test_each_setting_flips_only_its_own_choices(name, protocol):
    """Every setting's config has the other value than the study's in its choices (the hug-oracle's
    own contact counted), every other choice as the study has it; the six offsets are +-2 mm."""
    cfg = _cfg(name)
    cur = choices_in_effect(cfg, protocol)
    settings = dict(envelope_settings(cfg, protocol))
    assert tuple(settings) == SETTING_NAMES and settings["default"] == {}
    for s, over in settings.items():
        got = choices_in_effect(setting_config(cfg, over, protocol), protocol)
        changed = {k for k in cur if got[k] != cur[k]}
        assert changed == set(over), (s, changed, over)
    # the flips: the other value, whatever the study's is
    assert settings["gravity_compensation"]["wrist_gravity_compensation"] is (not cur["wrist_gravity_compensation"])
    assert settings["contact_mixing"]["contact_mixing"] != cur["contact_mixing"]
    assert {cur["hand_shape"], settings["hand_shape"]["hand_shape"]} == {"zerohand", "myhand"}
    pair = (settings["cone_impratio"]["cone"], settings["cone_impratio"]["impratio"])
    assert pair == ("pyramidal", 1.0) if (cur["cone"], cur["impratio"]) == ("elliptic", 10.0) else ("elliptic", 10.0)
    offsets = np.array([settings[s]["wrist_target_offset_mm"] for s in SETTING_NAMES if s.startswith("wrist_")])
    assert np.allclose(offsets, np.vstack([np.eye(3), -np.eye(3)])[[0, 3, 1, 4, 2, 5]] * 2.0)


def test_the_hug_oracle_contact_flip_is_mujoco_s_mixing():
    """Under the replay physics the hug-oracle forces the hand's contact values (oracle_contact manosim):
    its flipped setting is MuJoCo's own mixing, the lift protocol's the hand's."""
    cfg = _cfg("replay")
    lift = setting_config(cfg, dict(envelope_settings(cfg, "lift"))["contact_mixing"], "lift")
    oracle = setting_config(cfg, dict(envelope_settings(cfg, "hug-oracle"))["contact_mixing"], "hug-oracle")
    assert (cfg.hand_object_contact, cfg.oracle_contact) == ("compiled", "manosim")
    assert lift.hand_object_contact == "manosim"
    assert (oracle.hand_object_contact, oracle.oracle_contact) == ("compiled", "compiled")


def test_verdict_classes_fraction_flips_and_headline():
    names = ["default", "a", "b"]
    env = [verdict_envelope(names, ["lifted"] * 3, [True] * 3, [{}] * 3),
           verdict_envelope(names, ["lifted", "not_lifted", "lifted"], [True, False, True], [{}] * 3),
           verdict_envelope(names, ["not_lifted", "lifted", "not_lifted"], [False, True, False], [{}] * 3),
           verdict_envelope(names, ["not_lifted"] * 3, [False] * 3, [{}] * 3)]
    assert [e["class"] for e in env] == ["robust_lift", "fragile", "fragile", "robust_failure"]
    assert [e["flips"] for e in env] == [[], ["a"], ["a"], []]
    assert env[1]["fraction"] == pytest.approx(2 / 3)
    c = envelope_counts([{"verdict_envelope": e} for e in env] + [{"verdict_envelope": None}])
    assert (c["recordings"], c["robust_lift"], c["fragile"], c["robust_failure"]) == (4, 1, 2, 1)
    assert c["lifted_by_setting"] == {"default": 2, "a": 2, "b": 2} and c["flips_by_setting"] == {"a": 2, "b": 0}
    assert c["rollouts"] == 8 and tuple(CLASSES) == ("robust_lift", "fragile", "robust_failure")


@pytest.mark.needs_data
@pytest.mark.slow
def test_flipped_settings_reach_the_compiled_model(mirror):
    """Each model-changing setting read back from the MuJoCo model the engine steps (cubesmall_lift):
    cone and impratio in ``opt``, the object's solmix 0 under the hand's contact values, the other hand
    shape's capsules, the wrist law's gravity term in the batch, the wrist targets moved 2 mm."""
    from replay.data.locate import dataset_dir
    from replay.protocol.rollout import build_replay_scene
    from replay.sim.engine import wrist
    from replay.sim.engine.factory import engine_for_scene
    from replay.sim.engine.variants import Variant
    from replay.study.prepare import prepare_recording

    cfg = _cfg("replay")
    settings = dict(envelope_settings(cfg, "lift"))
    built = {}
    for s in ("default", "cone_impratio", "contact_mixing", "hand_shape", "gravity_compensation", "wrist_z+2mm"):
        c = setting_config(cfg, settings[s], "lift")
        rec, coords, mjcf, _ = prepare_recording("grab", "cubesmall_lift", mirror, dataset_dir("manosim", mirror), c)
        plan, scene, _ = build_replay_scene(rec, coords, mjcf, c)
        batch = engine_for_scene(scene, [Variant()])
        m = batch.worlds[0].m
        obj = np.asarray(batch.layout.object_geoms, bool)
        hand = np.asarray(batch.layout.hand_geoms, bool)
        built[s] = dict(cone=int(m.opt.cone), impratio=float(m.opt.impratio), obj_solmix=m.geom_solmix[obj].copy(),
                        hand_size=m.geom_size[hand].copy(), gcomp=float(batch.par[wrist.P_GCOMP]),
                        wrist=plan.coords[:, :3].copy(), mjcf=str(mjcf))
        batch.close()
    d = built["default"]
    assert (d["cone"], d["impratio"], d["gcomp"]) == (1, 10.0, 1.0)  # mjCONE_ELLIPTIC
    assert (built["cone_impratio"]["cone"], built["cone_impratio"]["impratio"]) == (0, 1.0)  # mjCONE_PYRAMIDAL
    assert np.all(d["obj_solmix"] > 0) and np.all(built["contact_mixing"]["obj_solmix"] == 0)
    assert "myhand" in built["hand_shape"]["mjcf"] and "zerohand" in d["mjcf"]
    assert np.max(np.abs(built["hand_shape"]["hand_size"] - d["hand_size"])) > 1e-4  # m: another hand's capsules
    assert built["gravity_compensation"]["gcomp"] == 0.0 and built["gravity_compensation"]["cone"] == d["cone"]
    shift = built["wrist_z+2mm"]["wrist"] - d["wrist"]
    assert np.allclose(shift, [0.0, 0.0, 0.002], atol=1e-12)


@pytest.mark.needs_data
@pytest.mark.slow
def test_envelope_default_is_the_plain_study_s_verdict(tmp_path, mirror):
    """cubesmall, stapler and mug (GRAB lifts): the plain study and the envelope study give each
    recording the same default verdict; every setting's ``lifted`` is its outcome's; the headline
    counts the classes; the report draws one grid row per recording."""
    from replay.output.report import build_report
    from replay.study.runner import run_study

    objects = ["cubesmall", "stapler", "mug"]
    cfg = ReplayConfig()
    plain = run_study("grab", tmp_path / "plain" / "study.json", cfg, objects=objects, workers=0, data_dir=mirror,
                      progress=False, ablation=False)
    env = run_study("grab", tmp_path / "env" / "study.json", cfg, objects=objects, workers=0, data_dir=mirror,
                    progress=False, ablation=False, envelope=True)
    want = {r["sequence"]: (r["outcome"], r["lifted"]) for r in plain["rollouts"]}
    classes = []
    for row in env["rollouts"]:
        doc = json.loads((tmp_path / "env" / row["json"]).read_text())
        e = doc["verdict_envelope"]
        assert e["settings"] == list(SETTING_NAMES) and len(e["lifted"]) == len(SETTING_NAMES)
        assert (e["outcomes"][0], e["lifted"][0]) == want[row["sequence"]] == (doc["outcome"], doc["lifted"])
        assert e["lifted"] == [o == "lifted" for o in e["outcomes"]]
        assert e["flips"] == [s for s, x in zip(e["settings"], e["lifted"]) if x != e["lifted"][0]]
        assert all(w > 0 for w in e["wall_s"])
        classes.append(e["class"])
    c = env["counts"]["envelope"]
    assert [c[k] for k in CLASSES] == [classes.count(k) for k in CLASSES] and c["recordings"] == 3
    assert c["rollouts"] == 3 * (len(SETTING_NAMES) - 1)
    page = tmp_path / "env" / "report.html"
    build_report(tmp_path / "env" / "study.json", page)
    text = page.read_text()
    assert "<h2>Verdict envelope</h2>" in text and text.count("<tr><td>") >= 3
    assert f"robust lift {c['robust_lift']}, fragile {c['fragile']}" in text
