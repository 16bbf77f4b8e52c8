"""``--physics authored``: the wrist law against MuJoCo's own actuators on the shipped MJCF, and the
declared physics table (replay.sim.physics).

The reference is ``mujoco.MjModel.from_xml_path`` on the manosim ``capsule_hand.xml`` as shipped
(slide x3 + ball wrist, ``<position>`` actuators): for the same states and targets, MuJoCo's
``qfrc_actuator`` on the six wrist DOFs must equal the generalized force of our emulated wrench on
the importer's free joint (``replay.sim.engine.wrist.wrench`` with ``law="authored_actuators"``).
"""

from __future__ import annotations

import dataclasses
import warnings

import mujoco
import newton
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import importer_patches as ip
from replay.config import ReplayConfig
from replay.errors import DataError
from replay.sim import physics
from replay.sim.engine import wrist

pytestmark = pytest.mark.needs_data

HAND = "zerohand/mano_rhand/capsule_hand.xml"


@pytest.fixture(scope="module")
def hand(manosim_dir):
    """(plain MjModel of the shipped file, the importer's report, the root body's COM in its frame (3,) m)."""
    path = manosim_dir / "assets" / HAND
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ip.FreeJointActuatorWarning)
        b = newton.ModelBuilder()
        report = ip.add_mjcf(b, path)
    m = mujoco.MjModel.from_xml_path(str(path))
    return m, report, np.array(m.body_ipos[1], float)


def _wrist_actuators(m):
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(m.nu)]
    return [names.index(f"wrist_motor_{a}") for a in ("tx", "ty", "tz", "rx", "ry", "rz")]


def test_gains_are_the_ones_mujoco_derives(hand):
    """kp as written (300 N/m, 50 N·m/rad) and kv as MuJoCo derives it from the dampratio (the importer's
    report against MuJoCo's compiled ``actuator_biasprm[:, 2] = -kv``), to 1e-9 relative."""
    m, report, _ = hand
    ids = _wrist_actuators(m)
    kp = m.actuator_gainprm[ids, 0]
    kv = -m.actuator_biasprm[ids, 2]
    np.testing.assert_allclose(kp, [300, 300, 300, 50, 50, 50])
    np.testing.assert_allclose(report.wrist_gains["kp"], kp, rtol=1e-9)
    np.testing.assert_allclose(report.wrist_gains["kd"], kv, rtol=1e-9)
    assert np.all(kv > 0)


def _states(rng, n):
    for _ in range(n):
        p = rng.uniform(-0.3, 0.3, 3) + [0, 0, 0.9]
        q = Rotation.random(random_state=rng)
        v, w_local = rng.normal(0, 0.3, 3), rng.normal(0, 2.0, 3)
        tp = p + rng.normal(0, 0.02, 3)
        tq = Rotation.from_rotvec(rng.normal(0, 0.2, 3)) * q
        yield p, q, v, w_local, tp, tq


def test_authored_law_equals_mujoco_actuators(hand):
    """For 50 random states and targets, MuJoCo's actuator force on the slide and ball DOFs of the shipped MJCF
    (ctrl = target position and target rotation vector) equals our wrench's generalized force on a free joint
    (linear: world force at the frame origin; angular: torque about the origin in the hand frame), to 1e-6 N
    and 1e-6 N·m plus 1e-7 relative: 1e-6 N accelerates the 0.4 kg hand by 2.5e-6 m/s^2, nothing over a 10 s
    replay (the two sides differ by ~2e-9 N: kv from the importer's dampratio vs MuJoCo's own, last digits).
    Targets up to ~0.2 rad away include pairs straddling the rotation vector's wrap at pi (MuJoCo wraps each axis
    of ctrl - length). Gravity compensation off: no +M g anywhere."""
    m, report, ipos = hand
    d = mujoco.MjData(m)
    ids = _wrist_actuators(m)
    par = wrist.wrist_params(report.wrist_gains["kp"], report.wrist_gains["kd"], d_passive=np.zeros(6), hand_mass=0.4,
                             root_com_local=ipos, law="authored_actuators", gravity_compensation=False)
    rng = np.random.default_rng(7)
    out = np.zeros(6)
    for p, q, v, w_local, tp, tq in _states(rng, 50):
        qwxyz = q.as_quat(scalar_first=True)
        d.qpos[:] = 0
        d.qpos[3:7] = [1, 0, 0, 0]
        d.qpos[0:3], d.qpos[3:7] = p, qwxyz
        d.qpos[7:] = np.tile([1, 0, 0, 0], 15)
        d.qvel[:] = 0
        d.qvel[0:3], d.qvel[3:6] = v, w_local
        d.ctrl[:] = 0
        d.ctrl[ids[:3]] = tp
        d.ctrl[ids[3:]] = tq.as_rotvec()  # MuJoCo's ball transmission length: the rotation vector
        mujoco.mj_forward(m, d)
        want = d.qfrc_actuator[:6].copy()
        # ours: the free joint's qpos (same layout: pos, quat wxyz) and qvel (world linear, local angular)
        qpos = np.concatenate([p, qwxyz])
        qvel = np.concatenate([v, w_local])
        tgt = np.zeros(wrist.T_SIZE)
        tgt[wrist.T_POS:wrist.T_POS + 3] = tp
        tgt[wrist.T_QUAT:wrist.T_QUAT + 4] = tq.as_quat(scalar_first=True)
        tgt[wrist.T_VEL:wrist.T_VEL + 3] = rng.normal(0, 0.5, 3)  # ignored by the authored law
        xipos = np.zeros((2, 3))
        xipos[1] = p + q.apply(ipos)
        wrist.wrench(qpos, qvel, xipos, 0, 0, 1, np.array([1]), np.array([0.0, 0.4]), par, tgt, out)
        c_root = xipos[1]
        tau_origin = out[3:] + np.cross(c_root - p, out[:3])
        got = np.concatenate([out[:3], q.inv().apply(tau_origin)])
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-6)


def test_gravity_compensation_switch(hand):
    """The replay law's +M g (N, world +z) is there with the switch on and gone with it off."""
    m, report, ipos = hand
    kw = dict(law="wrench")
    out_on, out_off = np.zeros(6), np.zeros(6)
    qpos, qvel = np.array([0, 0, 1.0, 1, 0, 0, 0]), np.zeros(6)
    tgt = np.zeros(wrist.T_SIZE)
    tgt[wrist.T_POS + 2], tgt[wrist.T_QUAT] = 1.0, 1.0
    xipos = np.array([[0, 0, 0], [0, 0, 1.0] + ipos])
    for on, out in ((True, out_on), (False, out_off)):
        par = wrist.wrist_params(report.wrist_gains["kp"], report.wrist_gains["kd"], d_passive=np.zeros(6),
                                 hand_mass=0.4, root_com_local=ipos, gravity_compensation=on, **kw)
        wrist.wrench(qpos, qvel, xipos, 0, 0, 1, np.array([1]), np.array([0.0, 0.4]), par, tgt, out)
    assert out_on[2] - out_off[2] == pytest.approx(0.4 * wrist.G, rel=1e-12)


def test_authored_table_is_mujoco_defaults():
    """The ``authored`` physics' solver options are MuJoCo's own defaults (a fresh MjModel's ``opt``: the MJCF
    has no <option>), and :func:`physics.choice_value` reads them from the table (no config field holds one)."""
    m = mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>")
    cfg = physics.apply_physics(ReplayConfig(), "authored")
    val = {k: physics.choice_value(cfg, k) for k in ("integrator", "cone", "impratio", "multiccd", "contact_mixing")}
    assert int(m.opt.integrator) == int(mujoco.mjtIntegrator.mjINT_EULER) and val["integrator"] == "euler"
    assert int(m.opt.cone) == int(mujoco.mjtCone.mjCONE_PYRAMIDAL) and val["cone"] == "pyramidal"
    assert float(m.opt.impratio) == val["impratio"] == 1.0
    assert cfg.tolerance == float(m.opt.tolerance) and cfg.iterations == int(m.opt.iterations)
    assert cfg.ls_iterations == int(m.opt.ls_iterations)
    assert not (int(m.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_MULTICCD)) and val["multiccd"] is True
    assert val["contact_mixing"] == "mujoco" and cfg.oracle.contact == "compiled"


def test_record_lists_every_choice_and_marks_departures():
    """Every choice of the table is in the record with a source; an override and a value set apart by
    ``--hand-shape`` or the hug-oracle's contact say so."""
    cfg = physics.apply_physics(ReplayConfig(physics="replay"), "authored", {"cone": "elliptic"})
    rec = {r["name"]: r for r in physics.physics_record(cfg)}
    assert set(rec) == set(physics.PHYSICS["authored"])
    assert all(r["source"] and r["why"] for r in rec.values())
    assert rec["cone"]["value"] == "elliptic" and rec["cone"]["source"] == "--physics-set (user)"
    assert rec["integrator"]["value"] == "euler" and rec["integrator"]["source"].startswith("MuJoCo default")
    default = {r["name"]: r for r in physics.physics_record(ReplayConfig(physics="replay"))}
    assert default["wrist_gravity_compensation"]["value"] is True
    apart = ReplayConfig(physics="replay", physics_overrides={"cone": "pyramidal", "hand_shape": "myhand"})
    rec = {r["name"]: r for r in physics.physics_record(apart)}
    assert rec["cone"]["source"] == "--physics-set (user)"
    assert rec["cone"]["why"].startswith("departs from 'replay': 'elliptic'")
    assert rec["hand_shape"]["value"] == "myhand" and "--hand-shape" in rec["hand_shape"]["source"]
    from replay.protocol.oracle_plan import oracle_config

    oracle = oracle_config(ReplayConfig(physics="replay"))
    mix = {r["name"]: r for r in physics.physics_record(oracle)}["contact_mixing"]
    assert mix["value"] == "hand" and "oracle_contact 'manosim'" in mix["source"]


def test_every_table_has_the_same_choices_and_legal_values():
    names = {n: set(t) for n, t in physics.PHYSICS.items()}
    assert len({frozenset(s) for s in names.values()}) == 1
    for t in physics.PHYSICS.values():
        for k, c in t.items():
            physics.check_value(k, c.value)


@pytest.mark.parametrize("text", ["cone=round", "nonsense=1", "impratio=-1", "wrist_target_offset_mm=1,2", "cone",
                                  "pad_deep_fingers=closed"])
def test_bad_settings_are_one_line_errors(text):
    with pytest.raises(DataError):
        physics.apply_physics(ReplayConfig(), "authored", dict([physics.parse_setting(text)]))


def test_unsupported_engines_refuse():
    cfg = physics.apply_physics(ReplayConfig(), "authored")
    with pytest.raises(DataError, match="object_margin"):
        physics.refuse_unsupported(dataclasses.replace(cfg, engine="mujoco-warp", device="cpu"))
    with pytest.raises(DataError, match="wrist"):
        physics.refuse_unsupported(dataclasses.replace(cfg, engine="newton"))
    physics.refuse_unsupported(cfg)  # MuJoCo C runs every choice


@pytest.mark.parametrize("law,gcomp", [("authored_actuators", False), ("wrench", True), ("wrench", False)])
def test_warp_wrist_kernel_equals_numba_law(hand, law, gcomp):
    """The mujoco-warp path's ``wrist_kernel`` (Warp's CPU device) gives the numba law's wrench for the same
    states and targets, each law and gravity switch: to 1e-3 N / N·m plus 1e-5 relative (the kernel reads
    MuJoCo-warp's float32 state and writes float32 ``xfrc_applied``: float32 rounding of ~300 N/m x 1 m)."""
    import warp as wp

    from replay.sim.engine.mjwarp.warp_kernels import wrist_kernel

    m, report, ipos = hand
    par = wrist.wrist_params(report.wrist_gains["kp"], report.wrist_gains["kd"], d_passive=np.full(6, 5.0),
                             hand_mass=0.4, root_com_local=ipos, law=law, gravity_compensation=gcomp)
    rng = np.random.default_rng(3)
    rows = list(_states(rng, 8))
    N = len(rows)
    qpos = np.zeros((N, 7), np.float32)
    qvel = np.zeros((N, 6), np.float32)
    tgt = np.zeros((N, wrist.T_SIZE))
    xipos = np.zeros((N, 2, 3), np.float32)
    for i, (p, q, v, w_local, tp, tq) in enumerate(rows):
        qpos[i] = np.concatenate([p, q.as_quat(scalar_first=True)])
        qvel[i] = np.concatenate([v, w_local])
        tgt[i, :3], tgt[i, 3:7] = tp, tq.as_quat(scalar_first=True)
        tgt[i, 7:] = rng.normal(0, 0.3, 9)
        xipos[i, 1] = p + q.apply(ipos)
    dev = "cpu"
    xfrc = wp.zeros((N, 2), dtype=wp.spatial_vector, device=dev)
    act = wp.zeros(N, dtype=wp.float64, device=dev)
    wp.launch(wrist_kernel, dim=N, inputs=[
        wp.array(qpos, dtype=wp.float32, device=dev), wp.array(qvel, dtype=wp.float32, device=dev),
        wp.array(xipos, dtype=wp.vec3, device=dev), wp.zeros((N, 1), dtype=wp.float32, device=dev),
        wp.array(tgt, dtype=wp.float64, device=dev), wp.array(tgt, dtype=wp.float64, device=dev),
        wp.array(par, dtype=wp.float64, device=dev), wp.array([1], dtype=wp.int32, device=dev),
        wp.array([0.4], dtype=wp.float64, device=dev), wp.ones(N, dtype=wp.int32, device=dev), 0, 0, 1,
        wp.float64(1.0), 0], outputs=[xfrc, act], device=dev)
    got = xfrc.numpy()[:, 1]
    out = np.zeros(6)
    for i in range(N):
        wrist.wrench(qpos[i].astype(float), qvel[i].astype(float), xipos[i].astype(float), 0, 0, 1, np.array([1]),
                     np.array([0.0, 0.4]), par, tgt[i], out)
        np.testing.assert_allclose(got[i], out, rtol=1e-5, atol=1e-3)


def test_authored_bridge_ends_at_the_replay_physics():
    """The authored bridge's cumulative path switches every physics choice in which ``authored`` and ``replay``
    differ (so its lift-protocol rows run the replay physics exactly), and each ``lift/*`` row sets exactly one
    element back to the authored value."""
    from replay.study.bridge import bridge_rows

    rows = {r["id"]: r for r in bridge_rows("authored")}
    base = physics.apply_physics(ReplayConfig(), "authored")
    end = physics.apply_physics(dataclasses.replace(base, **rows["cumulative/lift/hold"]["config"]))
    auth, rep = physics.PHYSICS["authored"], physics.PHYSICS["replay"]
    differ = {k for k in auth if auth[k].value != rep[k].value}
    assert differ <= set(end.physics_overrides)
    for k in differ:
        assert physics.choice_value(end, k) == rep[k].value
    assert [physics.choice_value(end, k) for k in ("integrator", "cone", "impratio")] == ["implicitfast", "elliptic", 10.0]
    back = physics.apply_physics(dataclasses.replace(base, **rows["lift/wrist gravity compensation"]["config"]))
    assert physics.choice_value(back, "wrist_gravity_compensation") is False
    assert physics.choice_value(back, "wrist_law") == "wrench"
    assert "oracle/contact" not in rows  # as authored, the oracle's contact is already MuJoCo's mixing


def test_docs_physics_page_holds_the_current_table():
    """docs/physics.md holds the table of every named physics' choices as the code makes it (regenerate the
    page's table with ``tests/doc_tables.py physics`` when a choice changes)."""
    from pathlib import Path

    from doc_tables import physics_markdown

    text = (Path(__file__).resolve().parents[1] / "docs" / "physics.md").read_text()
    assert physics_markdown() in text, "docs/physics.md is out of date: paste tests/doc_tables.py physics"


def test_bridge_row_ids_can_be_named_on_the_command_line():
    """``scripts/bridge.py --rows`` splits on commas: no row id may hold one."""
    from replay.study.bridge import bridge_rows

    for phys in ("replay", "authored"):
        assert not [r["id"] for r in bridge_rows(phys) if "," in r["id"]]
