"""Each patch has a regression test that fails with that patch switched off.

Small MJCF files are written into ``tmp_path`` by the tests; the manosim cases
use the mirror. References are MuJoCo's compile of the same file.
"""

from __future__ import annotations

import warnings

import mujoco
import newton
import numpy as np
import pytest

import importer_patches as ip

# Free-floating base as authored in manosim (slide x3 + ball), plus a finger ball
# joint with three gear actuators of different kp / kv / dampratio.
WRIST = """<mujoco><compiler angle="radian" autolimits="true"/><worldbody>
<body name="base" pos="0 0 0.5">
  <joint name="tx" type="slide" axis="1 0 0" damping="4"/>
  <joint name="ty" type="slide" axis="0 1 0" damping="4"/>
  <joint name="tz" type="slide" axis="0 0 1" damping="4"/>
  <joint name="rot" type="ball" damping="2" armature="0.02" frictionloss="0.1"/>
  <geom type="box" size="0.05 0.03 0.01" mass="0.3"/>
  <body name="finger" pos="-0.08 0 0">
    <joint name="knuckle" type="ball" pos="0.01 0 0" damping="0.5" armature="0.005" frictionloss="0.03"/>
    <geom type="capsule" fromto="0.01 0 0 -0.04 0 0" size="0.01" mass="0.02"/>
  </body>
</body></worldbody>
<actuator>
  <position name="m_tx" joint="tx" kp="300" dampratio="1"/>
  <position name="m_ty" joint="ty" kp="300" dampratio="1"/>
  <position name="m_tz" joint="tz" kp="300" dampratio="1"/>
  <position name="m_rx" joint="rot" gear="1 0 0" kp="50" dampratio="1.5"/>
  <position name="m_ry" joint="rot" gear="0 1 0" kp="50" dampratio="1.5"/>
  <position name="m_rz" joint="rot" gear="0 0 1" kp="50" dampratio="1.5"/>
  <position name="k_x" joint="knuckle" gear="1 0 0" kp="10" dampratio="1"/>
  <position name="k_y" joint="knuckle" gear="0 1 0" kp="20" dampratio="0.5"/>
  <position name="k_z" joint="knuckle" gear="0 0 1" kp="30" kv="0.4"/>
</actuator></mujoco>"""

# An authored free joint carrying damping/armature and an actuator.
FREE = """<mujoco><worldbody><body name="puck">
  <joint name="f" type="free" damping="3" armature="0.1"/>
  <geom type="sphere" size="0.1" mass="1"/>
</body></worldbody>
<actuator><position name="pf" joint="f" kp="7" dampratio="1"/></actuator></mujoco>"""


def write(tmp_path, text, name="model.xml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def load(path, **patches):
    b = newton.ModelBuilder()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = ip.add_mjcf(b, path, patches=patches)
    return report, b, [w.category for w in caught]


def mj_kv(path):
    m = mujoco.MjModel.from_xml_path(str(path))
    return m, -m.actuator_biasprm[:, 2]


@pytest.fixture
def wrist(tmp_path):
    return write(tmp_path, WRIST)


# ---------------------------------------------------------------- free_joint


def test_free_joint_small(wrist):
    report, b, _ = load(wrist)
    m, _ = mj_kv(wrist)
    assert report.joint_types == ["FREE", "BALL"] and (report.dof_count, report.coord_count) == (m.nv, m.nq) == (9, 11)
    np.testing.assert_allclose(report.dof_damping, m.dof_damping)
    np.testing.assert_allclose(report.dof_armature, m.dof_armature)
    np.testing.assert_allclose(report.dof_friction, m.dof_frictionloss)
    np.testing.assert_allclose(b.joint_q[:7], [0, 0, 0.5, 0, 0, 0, 1])  # pos xyz + quat xyzw


def test_free_joint_small_off(wrist):
    with pytest.raises(ip.MJCFError, match="importer failed"):
        load(wrist, free_joint=False)


def test_authored_free_joint_keeps_damping_armature(tmp_path):
    path = write(tmp_path, FREE)
    m, _ = mj_kv(path)
    on, _, _ = load(path)
    off, _, _ = load(path, free_joint=False)
    np.testing.assert_allclose(on.dof_damping, m.dof_damping)
    np.testing.assert_allclose(on.dof_armature, m.dof_armature)
    assert off.dof_damping == [0.0] * 6 and off.dof_armature == [0.0] * 6  # Newton 1.8.0 drops them


def test_lone_ball_keeps_damping_armature_friction(wrist):
    report, _, _ = load(wrist)
    assert report.dof_damping[6:] == [0.5] * 3
    assert report.dof_armature[6:] == pytest.approx([0.005] * 3)
    assert report.dof_friction[6:] == pytest.approx([0.03] * 3)


@pytest.mark.parametrize(
    "joints, pattern",
    [
        ('<joint name="j1" type="ball"/><joint name="j2" type="hinge"/>', "ball joint combined"),
        ('<joint name="j1" type="hinge"/><joint name="j2" type="slide"/>', "hinge before a slide"),
        ('<joint name="j1" type="ball"/><joint name="j2" type="ball"/>', "more than one ball"),
        (
            '<joint name="j1" type="slide" axis="1 0 0"/><joint name="j2" type="slide" axis="1 1 0"/>'
            '<joint name="j3" type="slide" axis="0 0 1"/><joint name="j4" type="ball"/>',
            "not mutually orthogonal",
        ),
        (
            '<joint name="j1" type="slide" axis="1 0 0"/><joint name="j2" type="slide" axis="0 1 0"/>'
            '<joint name="j3" type="slide" axis="0 0 1"/><joint name="j4" type="ball" pos="0.1 0 0"/>',
            "not at the body origin",
        ),
    ],
)
def test_unsupported_combination_raises(tmp_path, joints, pattern):
    path = write(tmp_path, f'<mujoco><worldbody><body name="odd">{joints}<geom size="0.1"/></body></worldbody></mujoco>')
    with pytest.raises(ip.UnsupportedJointError, match=pattern) as err:
        load(path)
    assert "body 'odd'" in str(err.value) and "j1" in str(err.value) and str(path) in str(err.value)


@pytest.mark.needs_data
def test_manosim_free_joint_off(capsule_rhand):
    with pytest.raises(ip.MJCFError, match="solreflimit_mode"):
        load(capsule_rhand, free_joint=False)


# ---------------------------------------------------------------- dampratio


def test_dampratio_small(wrist):
    _, kv = mj_kv(wrist)
    on, _, _ = load(wrist)
    off, _, _ = load(wrist, dampratio=False)
    np.testing.assert_allclose(on.dof_target_kd[6:], kv[6:], rtol=1e-5)
    np.testing.assert_allclose(on.wrist_gains["kd"], kv[:6], rtol=1e-5)
    assert off.dof_target_kd[6:8] == [0.0, 0.0]  # Newton 1.8.0 leaves dampratio unresolved
    assert off.dof_target_kd[8] == pytest.approx(0.4)  # authored kv is not a dampratio


def test_dampratio_small_biasprm(wrist):
    _, b, _ = load(wrist)
    bias = b.custom_attributes["mujoco:actuator_biasprm"].values
    _, kv = mj_kv(wrist)
    assert [float(bias[i][2]) for i in range(3)] == pytest.approx(list(-kv[6:]), rel=1e-5)


@pytest.mark.needs_data
def test_manosim_dampratio_off(capsule_rhand):
    off, _, _ = load(capsule_rhand, dampratio=False)
    assert max(off.dof_target_kd) == 0.0
    _, kv = mj_kv(capsule_rhand)
    on, _, _ = load(capsule_rhand)
    np.testing.assert_allclose(on.dof_target_kd[6:], kv[6:], rtol=0.01)


# ---------------------------------------------------------------- free_actuators


def test_free_actuators_small(wrist):
    on, b, cats = load(wrist)
    assert ip.FreeJointActuatorWarning in cats
    assert on.wrist_gains["kp"] == [300.0] * 3 + [50.0] * 3
    assert on.dof_target_ke[:6] == [0.0] * 6 and on.dof_target_mode[:6] == ["NONE"] * 6
    assert on.imported_actuator_count == 3
    off, _, cats = load(wrist, free_actuators=False)
    assert ip.FreeJointActuatorWarning not in cats
    assert off.wrist_gains["kp"] == [0.0] * 6  # Newton drops the wrist actuators silently


def test_free_actuators_on_authored_free_joint(tmp_path):
    path = write(tmp_path, FREE)
    _, kv = mj_kv(path)
    on, _, cats = load(path)
    assert ip.FreeJointActuatorWarning in cats
    assert on.dof_target_ke == [0.0] * 6
    assert on.wrist_gains["kp"] == [7.0, 0, 0, 0, 0, 0]
    assert on.wrist_gains["kd"][0] == pytest.approx(kv[0], rel=1e-5)
    off, _, _ = load(path, free_actuators=False)
    assert off.dof_target_ke == [7.0] * 6  # Newton 1.8.0: one kp on all six DOFs


@pytest.mark.needs_data
def test_manosim_free_actuators_off(capsule_rhand):
    with pytest.warns(ip.FreeJointActuatorWarning, match="wrist_motor_tx"):
        on = ip.add_mjcf(newton.ModelBuilder(), capsule_rhand)
    assert on.wrist_gains["kp"] == [300.0] * 3 + [50.0] * 3
    off, _, cats = load(capsule_rhand, free_actuators=False)
    assert ip.FreeJointActuatorWarning not in cats and off.wrist_gains["kp"] == [0.0] * 6


# ---------------------------------------------------------------- ball_actuators


def test_ball_actuators_small(wrist):
    _, kv = mj_kv(wrist)
    on, b, _ = load(wrist)
    assert on.dof_target_ke[6:] == [10.0, 20.0, 30.0]
    np.testing.assert_allclose(on.dof_target_kd[6:], kv[6:], rtol=1e-5)
    assert [on.actuator_dof_map[n] for n in ("k_x", "k_y", "k_z")] == [[6], [7], [8]]
    trnid = b.custom_attributes["mujoco:actuator_trnid"].values
    assert [int(trnid[i][0]) for i in range(3)] == [6, 7, 8]
    off, _, _ = load(wrist, ball_actuators=False)
    assert off.dof_target_ke[6:] == [30.0, 30.0, 30.0]  # last actuator's kp on all three DOFs


def test_ball_actuator_non_unit_gear_raises(tmp_path):
    text = WRIST.replace('name="k_y" joint="knuckle" gear="0 1 0"', 'name="k_y" joint="knuckle" gear="0 0.7 0.7"')
    with pytest.raises(ip.UnsupportedActuatorError, match="k_y"):
        load(write(tmp_path, text))


@pytest.mark.needs_data
def test_manosim_ball_actuators_off(capsule_rhand):
    on, _, _ = load(capsule_rhand)
    finger_dofs = sorted(d for a in on.actuators[6:] for d in a["dofs"])
    assert finger_dofs == list(range(6, 51))  # 45 actuators, one DOF each, all covered
    off, _, _ = load(capsule_rhand, ball_actuators=False)
    firsts = {a["name"]: a["dofs"][0] for a in off.actuators[6:]}
    assert len(set(firsts.values())) == 15  # three actuators share each ball's first DOF
