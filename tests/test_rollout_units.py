"""Small, fast checks of the replay's building blocks (no simulation)."""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from replay.config import ReplayConfig, describe
from replay.errors import DataError
from replay.results.judge import DEFAULT_JUDGE
from replay.kinematics.coords_interp import interp_coords
from replay.kinematics.quat import quat_slerp
from replay.protocol.lift_plan import min_jerk
from replay.sim.silent_failures import flutter_bound, flutter_margins, quat_angle


def test_config_roundtrip_and_defaults(tmp_path):
    cfg = ReplayConfig()
    assert cfg.dt == pytest.approx(1 / 240)  # 30 fps x 8 substeps
    assert (cfg.lift.lift_height, cfg.lift.hold_s, cfg.contact_budget.headroom) == (0.18, 0.6, 6.0)
    assert not hasattr(cfg, "effort_limit") and not hasattr(cfg, "pad_compression_mm")  # the physics table's
    assert cfg.solver == "newton" and cfg.physics == DEFAULT_JUDGE.physics and cfg.physics_overrides == {}
    p = tmp_path / "c.json"
    cfg.physics_overrides = {"finger_effort_limit": 0.25}
    cfg.save(p)
    back = ReplayConfig.load(p)
    assert back == cfg
    # a study JSON's "config" block loads too
    (tmp_path / "s.json").write_text(json.dumps({"config": cfg.to_dict()}))
    assert ReplayConfig.load(tmp_path / "s.json") == cfg
    assert all(r["unit"] and r["source"] for r in describe())


def test_config_rejects_bad_values(tmp_path):
    with pytest.raises(DataError, match="config.physics_overrides.finger_effort_limit"):
        ReplayConfig(physics_overrides={"finger_effort_limit": 0.0}).validate()
    with pytest.raises(DataError, match="config.physics_overrides.cone"):
        ReplayConfig(physics_overrides={"cone": "round"}).validate()
    with pytest.raises(DataError, match="config.physics_overrides.impratio"):
        ReplayConfig(physics_overrides={"impratio": 0.0}).validate()
    (tmp_path / "c.json").write_text(json.dumps({"effort": 1}))
    with pytest.raises(DataError, match="unknown keys"):
        ReplayConfig.load(tmp_path / "c.json")


def test_min_jerk_profile():
    s = np.linspace(0, 1, 1001)
    y = min_jerk(s)
    assert y[0] == 0 and y[-1] == pytest.approx(1)
    v = np.gradient(y, s)
    assert abs(v[0]) < 1e-2 and abs(v[-1]) < 1e-2  # starts and ends at rest
    assert v.max() == pytest.approx(1.875, rel=1e-3)  # peak speed 15/8 of the mean
    assert np.all(np.diff(y) >= 0)


def _ball_drive_growth(m: float, kp: float, theta: float, d: float) -> float:
    """Largest real part (1/s) of the eigenvalues of a ball joint held at angle theta by a
    per-component position drive on the rotation vector (MuJoCo's ball-joint actuator
    length is the rotation vector; qvel is the body-frame angular velocity), linearised:
    m dd_delta = -kp J delta - d d_delta with J = d rotvec(R_t exp(delta)) / d delta taken
    here by central differences (isotropic inertia m, kg·m^2; kp N·m/rad; d N·m·s/rad)."""
    Rt = Rotation.from_rotvec([0.0, 0.0, theta])
    eps = 1e-6
    J = np.stack([((Rt * Rotation.from_rotvec(eps * e)).as_rotvec() - (Rt * Rotation.from_rotvec(-eps * e)).as_rotvec())
                  / (2 * eps) for e in np.eye(3)], axis=1)
    A = np.block([[np.zeros((3, 3)), np.eye(3)], [-kp * J / m, -d / m * np.eye(3)]])
    return float(np.linalg.eigvals(A).real.max())


@pytest.mark.parametrize("theta", [0.3, 1.24, 2.0])
def test_flutter_bound_is_the_linear_stability_threshold(theta):
    # The bound is re-derived here from the drive law, not copied: the rotation-vector
    # Jacobian's antisymmetric part (theta/2) against its transverse stiffness
    # ((theta/2) cot(theta/2)) makes the held joint flutter below d_c and settle above it.
    # Inputs: inertia 1e-3 kg·m^2, manosim's finger kp 30 N·m/rad; theta up to 2 rad.
    m, kp = 1.0e-3, 30.0
    d_c = flutter_bound(m, kp, theta)
    assert _ball_drive_growth(m, kp, theta, 0.99 * d_c) > 0  # grows: flutter
    assert _ball_drive_growth(m, kp, theta, 1.01 * d_c) < 0  # decays
    # identity: no bound; approx zeta >= theta/4 for small angles: d_c ~ sqrt(m kp) theta/2
    assert flutter_bound(1e-3, 30.0, 0.0) == 0.0
    assert flutter_bound(1e-3, 30.0, 0.1) == pytest.approx(math.sqrt(1e-3 * 30) * 0.05, rel=1e-3)


def test_flutter_margins_raise_damping_where_short(caplog):
    cfg = ReplayConfig()
    q = np.tile(Rotation.from_rotvec([0, 0, 1.24]).as_quat(), (10, 15, 1))
    m = np.full(45, 1e-3)
    ke = np.full(45, 30.0)
    with caplog.at_level(logging.WARNING, logger="replay.sim.silent_failures"):
        recs = flutter_margins(q, m, ke=ke, damping=np.full(45, 0.01), kd=np.zeros(45), config=cfg)
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert all("below 1.25 x its ball-drive flutter bound" in x for x in said)
    assert len(said) == sum(x["raised_to"] is not None for x in recs) == 15  # one line per joint raised
    r = recs[0]
    assert r["theta_max"] == pytest.approx(1.24)
    assert r["margin"] < 1 and r["raised_to"] == pytest.approx(1.25 * r["d_crit"])  # the table's safety
    ok = flutter_margins(q, m, ke=ke, damping=np.full(45, 0.01), kd=np.full(45, 0.35), config=cfg)
    assert all(x["raised_to"] is None and x["margin"] > 2 for x in ok)


def test_quaternion_helpers():
    q0 = Rotation.from_rotvec([0, 0, 0.2]).as_quat()
    q1 = Rotation.from_rotvec([0, 0, 1.0]).as_quat()
    mid = quat_slerp(q0, -q1, 0.5)  # sign-flipped input takes the short arc
    assert quat_angle(mid) == pytest.approx(0.6)
    coords = np.zeros((2, 67))
    coords[:, 3:] = np.tile([0, 0, 0, 1.0], 16)
    coords[1, :3] = [1, 2, 3]
    coords[1, 3:7] = q1
    c = interp_coords(coords, np.array([0.0, 1.0]), 0.25)
    assert np.allclose(c[:3], [0.25, 0.5, 0.75])
    assert quat_angle(c[3:7]) == pytest.approx(0.25)


def test_hand_frame_slip_is_zero_for_rigid_carry_and_measures_sliding():
    from scipy.spatial.transform import Rotation

    from replay.protocol.measures import hand_frame_slip

    rng = np.random.default_rng(3)
    F = 10
    wq = Rotation.from_rotvec(rng.normal(size=(F, 3))).as_quat()
    wp = rng.normal(size=(F, 3))
    offset, oq0 = np.array([0.02, -0.05, 0.01]), Rotation.from_rotvec([0.3, 0.1, -0.2])
    # object rigidly attached to the wrist: no slip whatever the world motion
    op = wp + Rotation.from_quat(wq).apply(offset)
    oq = (Rotation.from_quat(wq) * oq0).as_quat()
    mm, deg = hand_frame_slip(wp, wq, op, obj_quat=oq, ref=2)
    assert mm == pytest.approx(0.0, abs=1e-9) and deg == pytest.approx(0.0, abs=1e-6)
    # slides 7 mm along the wrist x axis and turns 5 degrees in the hand by the last frame
    op[-1] = wp[-1] + Rotation.from_quat(wq[-1]).apply(offset + [0.007, 0, 0])
    oq[-1] = (Rotation.from_quat(wq[-1]) * Rotation.from_rotvec([0, 0, np.radians(5)]) * oq0).as_quat()
    mm, deg = hand_frame_slip(wp, wq, op, obj_quat=oq, ref=2)
    assert mm == pytest.approx(7.0, abs=1e-9) and deg == pytest.approx(5.0, abs=1e-6)
    assert hand_frame_slip(wp, wq, op, obj_quat=oq, ref=None) == (None, None)


def test_shake_offset_starts_and_ends_at_rest_and_reaches_its_amplitude():
    from replay.protocol.lift_plan import shake_offset

    T, A, f = 2.0, 0.03, 1.0
    t = np.linspace(0.0, T, 2001)
    xy = np.array([shake_offset(ti, T, A, hz=f) for ti in t])
    assert np.allclose(xy[0], 0.0) and np.allclose(xy[-1], 0.0, atol=1e-12)
    v = np.gradient(xy, t, axis=0)
    assert np.allclose(v[[0, -1]], 0.0, atol=1e-2)  # ramped in and out: no velocity step
    assert np.max(np.abs(xy[:, 0])) == pytest.approx(A, rel=1e-3)
    assert np.max(np.abs(xy[:, 1])) <= 0.5 * A + 1e-9


def test_object_motion_equals_its_per_frame_definition():
    """``measures._object_motion``'s largest vertex displacement (all frames' rotations at once, in chunks)
    and ``pushed`` (the largest up to lift start) equal the per-frame definition: each frame's vertices
    placed by ``object_vertices_world``, their largest distance from the settled pose, the running max
    (a random tumbling trace of 300 frames, past two chunks; lift start inside, before and absent)."""
    from replay.protocol import measures

    rng = np.random.default_rng(4)
    F, B = 300, 17
    pos = np.cumsum(rng.normal(0, 1e-3, (F, B, 3)), axis=0).astype(np.float32)
    quat = Rotation.from_rotvec(np.cumsum(rng.normal(0, 0.02, (F, 3)), axis=0)).as_quat().astype(np.float32)
    tr = measures.Trace(body_pos=pos, body_quat=np.repeat(quat[:, None], B, axis=1), ccount=np.zeros(F, np.int32),
                        wrist_err=np.zeros(F), normal_force=np.zeros(F), friction_force=np.zeros(F), done=F - 10)
    verts = rng.uniform(-0.05, 0.05, (40, 3))
    settle_end, end = 20, F - 5
    row = lambda k: np.concatenate([pos[k, -1], quat[k]]).astype(float)  # noqa: E731
    ref = measures.object_vertices_world(row(settle_end), verts)
    per_frame = [np.linalg.norm(measures.object_vertices_world(row(k), verts) - ref, axis=1).max()
                 for k in range(settle_end, min(tr.done, end))]
    for ls, upto in ((150, 150 - settle_end + 1), (5, 0), (None, len(per_frame))):
        got, pushed = measures._object_motion(tr, verts, settle_end, ls, end)
        assert got["max_object_disp_mm"] == pytest.approx(max(per_frame) * 1000.0, rel=1e-12)
        assert pushed == pytest.approx(max(per_frame[:upto], default=0.0), rel=1e-12, abs=1e-15)
