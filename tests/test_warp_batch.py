"""Many worlds per launch on mujoco-warp (:class:`replay.sim.engine.mjwarp.warp_batch.WarpBatch`), on
Warp's CPU device: no GPU needed, the same code runs on CUDA.

The short GRAB window (tests/short_window.py, SHORT protocol: 120 control frames with
the shake) is replayed by

* one batch holding four variants (object friction with a wrist offset; finger effort
  limit with object mass; an effort limit too weak to lift, whose world stops at the
  end of the hold and is parked while the others shake) and by a one-world batch of
  each variant: world i of the batch must match the one-world run of variant i;
* a one-world batch against MuJoCo C (:class:`replay.sim.engine.mujoco_c.mjc.MjcBatch`) on the same
  scene;
* the frame graph (the CUDA path) against plain launches, on Warp's CPU device;
* :func:`replay.protocol.rollout.run_rollouts` with ``engine="mujoco-warp"`` on ``device="cpu"`` (the hook the
  study uses with ``device="cuda"``), contact and ablation.

Tolerances (measured on this window, newton 1.8.0 / mujoco-warp 3.17 / warp 1.19):
mujoco-warp keeps its state in float32. A world of a batch and its one-world run are
bit-identical until the hand touches the object; from there on they hold the same
contacts, in the same order, with the same constraint rows and solver iteration counts,
yet the constraint forces differ by ~1e-7 N (float32 rounding: mujoco-warp's solver
kernels, run over several worlds, do not reproduce a one-world solve bit for bit; not
traced further). Contact dynamics amplify that in a contact-sensitive world: up to
0.19 mm of body position (friction 0.5 with a 2 mm wrist offset; < 1 um for the others).
Hence: body positions within 0.5 mm, orientations within 2e-3 (quaternion components),
rise within 0.1 mm, outcome and contacts at lift equal. Against MuJoCo C (float64, its
own collision code: mujoco-warp's convex collision is a different GJK/EPA and multi-CCD
implementation, and its solver runs in float32) the same window gives the same outcome,
contact counts at lift (at peak, within one), rise within 0.01 mm and body positions within 0.3 mm
(the weak grip, which drops in both, touches with 1 contact at lift start against 2 in
MuJoCo C); the test allows 1 mm of rise and 2 mm of pose.

Cost on 2 cores: cold (empty Warp kernel cache) the module takes 2.9 min, of which about
1.5 min is Warp compiling mujoco-warp's and these kernels for the CPU; warm (cache under
Warp's kernel cache folder) about 1.7 min, mostly the five full-protocol mujoco-warp runs
(Warp's CPU device steps this scene at ~15 ms per step). The full-protocol runs (the four-world
batch, the one-world run of each variant, ``run_rollouts`` on ``warp-cpu``: 2.4 min of the
module on 2 shared cores) are ``slow``: ``make test-slow``, which CI (``.ci/run``) runs after
``make test``, checks that a batch world equals its one-world run; ``make test`` keeps the
graph capture, the overflow, exception and one-model checks.
"""

from __future__ import annotations

import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.sim.finger_strength import joint_limits
from replay.sim.engine.variants import Variant
from replay.sim.engine.mujoco_c.mjc import MjcBatch
from replay.errors import EngineError
from replay.protocol.measures import measure_world as _measure
from replay.protocol.rollout import build_replay_scene, run_rollouts
from replay.protocol.step_plan import step_protocol

pytestmark = pytest.mark.needs_data

VARIANTS = [
    Variant(),
    Variant(friction=0.5, wrist_offset=(0.0, 0.002, 0.0), label="friction 0.5, wrist +2 mm y"),
    Variant(effort_limit=0.6, object_mass=0.12, label="effort 0.6, mass 0.12"),
    # 1 mN·m a joint cannot hold the 84 g cube (GRAB cubesmall solid at 1250 kg/m^3): < 0.5 N of grip at mu 1
    Variant(effort_limit=0.001, object_mass=0.084, label="too weak to lift"),
]


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


@pytest.fixture(scope="module")
def scene(window, capsule_rhand):
    """The short window's scene, built for MuJoCo C (WarpBatch rebuilds its world on Warp's CPU device)."""
    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    return rec, plan, scene, cfg


@pytest.fixture(scope="module")
def batch_run(scene):
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    rec, plan, sc, cfg = scene
    b = WarpBatch(sc, VARIANTS, device="cpu")
    traces = step_protocol(plan, b, cfg)
    return b, traces


def _metrics(scene, trace, world):
    rec, plan, sc, cfg = scene
    return _measure(rec, plan, sc, cfg=cfg, tr=trace, world=world)


@pytest.mark.slow  # its fixture steps four worlds through the full SHORT protocol on Warp's CPU device: 32 s on 2 shared cores (make test-slow)
def test_variants_reach_mujoco_warp_per_world(batch_run, scene):
    b, _ = batch_run
    sc = scene[2]
    rb = [w.readback for w in b.worlds]
    assert [r["world"] for r in rb] == [0, 1, 2, 3]
    assert rb[0]["object_friction"] == pytest.approx(float(sc.model.shape_material_mu.numpy()[sc.object_shapes[0]]))
    assert rb[1]["object_friction"] == pytest.approx(0.5)
    assert rb[2]["finger_forcerange"] == pytest.approx(0.6) and rb[2]["object_mass"] == pytest.approx(0.12)
    assert rb[3]["finger_forcerange"] == pytest.approx(0.001) and rb[3]["object_mass"] == pytest.approx(0.084)
    own = sc.model.joint_effort_limit.numpy()[sc.finger_qd_start: sc.finger_qd_start + 45: 3]  # per joint
    assert rb[0]["finger_forcerange_per_joint"] == pytest.approx(own) and rb[0]["object_mass"] == pytest.approx(sc.object_mass)
    # the clamp holds per world: no finger actuator force beyond that world's limit
    for w in b.worlds:
        assert w.act_max <= max(w.readback["finger_forcerange_per_joint"]) * (1 + 1e-5)


@pytest.mark.slow  # a one-world full-protocol mujoco-warp run per variant on Warp's CPU device: 8-36 s each, 87 s on 2 shared cores (make test-slow)
@pytest.mark.parametrize("i", range(len(VARIANTS)))
def test_batch_world_equals_single_world_run(batch_run, scene, i):
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    rec, plan, sc, cfg = scene
    b, traces = batch_run
    single = WarpBatch(sc, [VARIANTS[i]], device="cpu")
    tr1 = step_protocol(plan, single, cfg)[0]
    trb = traces[i]
    assert tr1.done == trb.done
    n = tr1.done
    assert np.all(np.isfinite(trb.body_pos[:n]))
    assert np.max(np.abs(tr1.body_pos[:n] - trb.body_pos[:n])) < 5e-4
    assert np.max(np.abs(tr1.body_quat[:n] - trb.body_quat[:n])) < 2e-3
    m1, mb = _metrics(scene, tr1, single.worlds[0]), _metrics(scene, trb, b.worlds[i])
    assert mb["outcome"] == m1["outcome"]
    assert mb["contacts_at_lift"] == m1["contacts_at_lift"]
    assert mb["rise"] == pytest.approx(m1["rise"], abs=1e-4)
    assert mb["shake_held"] == m1["shake_held"]
    if i == 3:  # the weak grip drops: its world stops at the end of the hold, the others shake on
        assert mb["outcome"] == "not_lifted" and trb.done < len(plan.coords)
    else:
        assert mb["outcome"] == "lifted" and trb.done == len(plan.coords)
    # the one-world mujoco-warp run against MuJoCo C (MjcBatch) on the same scene
    mjc = MjcBatch(sc, [VARIANTS[i]])
    trc = step_protocol(plan, mjc, cfg)[0]
    mc = _metrics(scene, trc, mjc.worlds[0])
    assert m1["outcome"] == mc["outcome"]
    if i != 3:  # the weak grip barely touches: 1 contact at lift start here, 2 in MuJoCo C
        assert m1["contacts_at_lift"] == mc["contacts_at_lift"]
    assert m1["rise"] == pytest.approx(mc["rise"], abs=1e-3)
    n = min(tr1.done, trc.done)
    assert np.max(np.abs(tr1.body_pos[:n] - trc.body_pos[:n])) < 2e-3


@pytest.mark.slow  # reads the four-world batch of the fixture above (32 s on 2 shared cores) (make test-slow)
def test_one_world_agrees_with_mujoco_c(batch_run, scene):
    """Worlds 0-2 of the batch against MuJoCo C (MjcBatch) on the same scene."""
    rec, plan, sc, cfg = scene
    b, traces = batch_run
    mb = MjcBatch(sc, VARIANTS[:3])
    trm = step_protocol(plan, mb, cfg)
    for i in range(3):
        mw, mm = _metrics(scene, traces[i], b.worlds[i]), _metrics(scene, trm[i], mb.worlds[i])
        assert mw["outcome"] == mm["outcome"] == "lifted", (i, mw["unstable_reason"])
        assert mw["contacts_at_lift"] == mm["contacts_at_lift"]
        # mujoco-warp's own convex collision (its GJK/EPA and multi-CCD) may find one contact more or less at peak
        assert abs(mw["peak_contacts"] - mm["peak_contacts"]) <= 1
        assert mw["rise"] == pytest.approx(mm["rise"], abs=1e-3)
        n = min(traces[i].done, trm[i].done)
        assert np.max(np.abs(traces[i].body_pos[:n] - trm[i].body_pos[:n])) < 2e-3


def test_graph_capture_replays_the_same_frames(scene):
    """The CUDA path's frame graph (``wp.ScopedCapture``, first frame eager, then one capture
    replayed) also runs on Warp's CPU device: it must give the plain launches' state bit for bit
    (determinism on one machine: the same compiled kernels, launched from a graph or one by one)."""
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    rec, plan, sc, cfg = scene
    vs = VARIANTS[:2]
    g = WarpBatch(sc, vs, device="cpu", graph=True)
    tg = step_protocol(plan, g, cfg, frame_limit=16)
    p = WarpBatch(sc, vs, device="cpu", graph=False)
    tp = step_protocol(plan, p, cfg, frame_limit=16)
    assert g._graph is not None and p._graph is None
    for a, b in zip(tg, tp):
        assert a.done == b.done == 16
        assert np.array_equal(a.body_pos, b.body_pos) and np.array_equal(a.ccount, b.ccount)
    assert np.array_equal(g.d.qpos.numpy(), p.d.qpos.numpy())


def test_capacity_overflow_stops_the_world(scene):
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    rec, plan, sc, cfg = scene
    b = WarpBatch(sc, [Variant()], device="cpu", capacity=2)
    tr = step_protocol(plan, b, cfg, frame_limit=12)[0]
    w = b.worlds[0]
    assert not w.alive and "overflow" in w.reason
    assert tr.bad_frame is not None and tr.done == tr.bad_frame + 1


def test_one_model_holds_a_world_per_variant(scene):
    """The Newton side of the batch (no mujoco-warp): N copies of the scene's world, each
    edited for its variant, the scene's passive damping in every copy."""
    from replay.sim.engine.mjwarp.warp_worlds import build_worlds

    sc = scene[2]
    model, off = build_worlds(sc, VARIANTS, "cpu")
    n = len(VARIANTS)
    assert model.world_count == n and model.body_count == n * sc.model.body_count
    assert [o["body"] for o in off] == [i * sc.model.body_count for i in range(n)]
    mu = model.shape_material_mu.numpy()
    eff = model.joint_effort_limit.numpy()
    mass = model.body_mass.numpy()
    f0 = sc.finger_qd_start
    base_mu = sc.model.shape_material_mu.numpy()[sc.object_shapes]
    for i, v in enumerate(VARIANTS):
        s0, d0, b0 = off[i]["shape"], off[i]["joint_dof"], off[i]["body"]
        assert np.allclose(mu[s0 + sc.object_shapes], v.friction if v.friction else base_mu)
        own = sc.model.joint_effort_limit.numpy()[f0: f0 + 45]  # the scene's per-joint strength
        assert np.allclose(eff[d0 + f0: d0 + f0 + 45], v.effort_limit or own)
        assert mass[b0 + sc.object_body] == pytest.approx(v.object_mass or sc.object_mass, rel=1e-6)
        assert np.array_equal(mass[b0 + sc.hand_bodies], sc.model.body_mass.numpy()[sc.hand_bodies])
    damp = model.joint_damping.numpy().reshape(n, -1)
    assert np.array_equal(damp, np.tile(sc.model.joint_damping.numpy(), (n, 1)))


def test_an_exception_from_the_launches_is_raised_not_unstable(scene):
    """An exception from the frame's launches (Warp or mujoco-warp: a code or device error) leaves
    the engine, no world marked unstable: the study lists the recording as an error."""
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    rec, plan, sc, cfg = scene
    b = WarpBatch(sc, VARIANTS[:2], device="cpu")

    def boom():
        raise RuntimeError("injected")

    b._launch_frame = boom
    with pytest.raises(RuntimeError, match="injected"):
        step_protocol(plan, b, cfg, frame_limit=3)
    assert all(w.reason is None for w in b.worlds)


def test_ablation_flag_must_match_the_scene(scene):
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    with pytest.raises(EngineError, match="ablation"):
        WarpBatch(scene[2], [Variant(ablation=True)], device="cpu")


@pytest.mark.slow  # contact and ablation rollouts on Warp's CPU device: 21 s on 2 shared cores (make test-slow)
def test_run_rollouts_on_warp_cpu(window, capsule_rhand):
    """The hook: ``engine="mujoco-warp"`` on ``device="cpu"`` steps contact and ablation on mujoco-warp (two launches)."""
    rec, coords = window
    cfg = ReplayConfig(**SHORT, engine="mujoco-warp", device="cpu")
    res, abl = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=[Variant(), Variant(ablation=True)], frame_limit=60)
    m, a = res.metrics, abl.metrics
    assert m["engine"] == a["engine"] == "warp"
    assert m["outcome"] == "lifted" and m["contacts_force_at_lift"] > 0, m["unstable_reason"]
    own = joint_limits(cfg, capsule_rhand)
    assert m["variant_readback"]["finger_forcerange_per_joint"] == pytest.approx(own, rel=1e-6)
    assert a["stable"] and a["max_hand_object_contacts"] == 0 and a["max_object_disp_mm"] < 1.0


@pytest.mark.slow
def test_engine_benchmark_on_warp_cpu(mirror, tmp_path, monkeypatch):
    """``benchmarks/engine.py --device warp-cpu`` (the ``--device cuda`` code on Warp's CPU
    device): the full protocol for N worlds per launch, reported per N."""
    import importlib.util
    import json
    from pathlib import Path

    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "engine.py"
    spec = importlib.util.spec_from_file_location("bench_engine", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "engine.json"
    assert bench.main(["--objects", "cubesmall", "--device", "warp-cpu", "--worlds", "2", "--no-study",
                       "--raw-steps", "16", "--data", str(tmp_path / "none"), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    r = doc["objects"]["cubesmall"]["warp"]["worlds"]["2"]
    assert r["unstable"] == 0 and r["lifted_worlds"] == 2 and r["rollouts_per_min"] > 0
    for key in ("engine_ms_per_step", "mujoco_ms_per_step", "ratio", "ms_per_world_step"):
        assert r[key] > 0
    assert doc["warp_rollouts_per_min"]["2"]["cubesmall"] == r["rollouts_per_min"]
