"""A generated two-pad parallel-jaw gripper on a three-axis gantry lifting one object asset (docs/gripper_check.md):
jaw coordinate ``q`` m is a pad's inner face (gap ``q1 + q2``), position drives clamped at the jaw force, N. MuJoCo C,
world Z up, gravity -9.81 m/s^2, quaternions xyzw unless said."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import mujoco
import newton
import numpy as np
import warp as wp
from scipy.spatial.transform import Rotation

from replay.config import GRAVITY, ReplayConfig
from replay.data.types import ObjectAsset
from replay.errors import DataError
from replay.results.config_parts import setting as _f
from replay.results.engine_choice import EngineChoice
from replay.sim.scene import make_solver
from replay.sim.solver_view import SolverView
from replay.sim.world_builder import _add_object, _add_support, new_builder

try:  # the compiled step loop; without it every step runs from Python (the same trajectory)
    from replay.sim.engine.mujoco_c import ctrl_steps as _compiled
    from replay.sim.engine.mujoco_c.c_loop import arena_ok

    STEPS_ERROR = None
except ImportError as e:  # pragma: no cover - a MuJoCo build without the C symbols
    _compiled, arena_ok, STEPS_ERROR = None, None, str(e)

#: physics steps per compiled call of :meth:`GripperScene.run` (at most this many redone when a phase stops mid-chunk)
CHUNK_STEPS = 128
#: |qvel| (SI units of each DOF) above which a state counts as a runaway (the phases' check)
RUNAWAY_QVEL = 1e3


@dataclass(frozen=True)
class FixtureConfig:
    """The generated gripper's geometry, mass and drive sizing (every value with unit and source)."""

    pad_friction: float = _f(
        1.0, "1", "MuJoCo default sliding friction (the pads' material; contact priority over the object)"
    )
    sizing_friction: float | None = _f(
        None,
        "1",
        "friction the jaw force is sized for; None = pad_friction (a lower "
        "pad_friction with this at 1.0 is the underpowered-grip test case)",
    )
    friction_credit_max: float = _f(
        1.0, "1", "grasp_and_lift (FET005) spec: friction credit capped at 1.0 when sizing the normal force"
    )
    safety_factor: float = _f(
        2.0,
        "1",
        "chosen: jaw force holds twice the object's weight at the credited friction "
        "(covers the 0.3-0.5 m smoothstep lift's peak 3 m/s^2 and the 1.6 m/s^2 orbit)",
    )
    preload: float = _f(0.005, "m", "grasp_and_lift (FET005) spec: 5 mm contact preload per jaw")
    pad_thickness: float = _f(0.01, "m", "chosen: 1 cm pad along the jaw axis")
    pad_half_width: float = _f(0.015, "m", "chosen: 3 x 3 cm pad face (half width across the line)")
    pad_mass_min: float = _f(0.05, "kg", "chosen: lightest pad")
    pad_omega_dt_max: float = _f(
        0.5,
        "1",
        "pad drive natural frequency x dt kept below this (explicit spring of "
        "MuJoCo's implicitfast integrator); the pad mass is raised to meet it",
    )
    carriage_mass: float = _f(1.0, "kg", "chosen: gantry carriage")
    gantry_kp: float = _f(5.0e4, "N/m", "chosen: stiff gantry (1 kg sags 0.2 mm)")
    gantry_effort: float = _f(1.0e4, "N", "chosen: never the limit")
    open_margin: float = _f(
        0.02, "m", "chosen: each pad opens 2 cm beyond the object's outermost point in its footprint"
    )
    jaw_max: float = _f(0.4, "m", "jaw travel limit")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def jaw_force(mass: float, cfg: FixtureConfig) -> float:
    """Per-jaw normal force, N: ``safety_factor * m g / (2 min(mu, friction_credit_max))``, ``mu`` the
    ``sizing_friction`` (default ``pad_friction``; FET005 grasp_and_lift's cap)."""
    mu = min(
        float(cfg.pad_friction if cfg.sizing_friction is None else cfg.sizing_friction), float(cfg.friction_credit_max)
    )
    if not mu > 0:
        raise DataError(None, "fixture.pad_friction", f"must be > 0, got {cfg.pad_friction!r}")
    return float(cfg.safety_factor * mass * GRAVITY / (2.0 * mu))


def jaw_gains(force: float, dt: float, cfg: FixtureConfig) -> tuple[float, float, float]:
    """``(kp N/m, kd N·s/m, pad mass kg)``: ``force`` at the preload (kp = force / preload), the pad mass keeping
    sqrt(kp/m) dt <= ``pad_omega_dt_max``, kd critical."""
    kp = force / float(cfg.preload)
    m = max(float(cfg.pad_mass_min), kp * (dt / float(cfg.pad_omega_dt_max)) ** 2)
    return kp, 2.0 * np.sqrt(kp * m), m


def line_frame(u: np.ndarray) -> np.ndarray:
    """(3, 3) rotation, columns ``u`` (jaw axis), ``w x u``, ``w`` (world +Z orthogonal to ``u``, else world X)."""
    u = np.asarray(u, float) / np.linalg.norm(u)
    up = np.array([0.0, 0.0, 1.0]) if abs(u[2]) < 0.95 else np.array([1.0, 0.0, 0.0])
    w = up - up.dot(u) * u
    w /= np.linalg.norm(w)
    return np.column_stack([u, np.cross(w, u), w])


class Reading(NamedTuple):
    """The fixture after one step (world, m, xyzw): ``com`` (3,), ``quat`` (4,), ``gantry`` (3,), ``jaws`` (2,)
    (zeros without a gripper), ``origin`` (7,), ``pads`` (2, 7), ``qvel`` (nv,), ``runaway``. Read-only views."""

    com: np.ndarray
    quat: np.ndarray
    gantry: np.ndarray
    jaws: np.ndarray
    origin: np.ndarray
    pads: np.ndarray
    qvel: np.ndarray
    runaway: bool = False


@dataclass
class GripperScene:
    """The built fixture, MuJoCo C stepped directly; ``ctrl`` the position targets, m.

    Attributes:
        dt, time: s. object_mass: kg. object_com: (3,) body frame, m. object_inertia: (3, 3) about the COM, body frame,
        kg·m^2. object_vertices: (V, 3) body frame, m. u: (3,) jaw axis, world; force: per-jaw clamp, N; kp N/m,
        kd N·s/m, pad_mass kg. has_gripper: False for object and ground only."""

    model: newton.Model
    solver: object
    dt: float
    object_mass: float
    object_com: np.ndarray
    object_inertia: np.ndarray
    object_vertices: np.ndarray
    u: np.ndarray
    force: float
    kp: float
    kd: float
    pad_mass: float
    has_gripper: bool
    maps: dict = field(repr=False, default_factory=dict)
    time: float = 0.0

    def run(self, n: int, visit: Callable[[int, Reading], bool], targets: Callable | None = None) -> int:
        """Step up to ``n`` steps of ``dt`` s, calling ``visit(k, reading)`` after each (True ends the run);
        ``targets(k0, k1)`` gives ``(k1 - k0, 4)`` ctrl rows (gantry (3,) m, jaw m; None: ``ctrl`` as is). Returns the
        steps taken."""
        m, d = self.solver.mj_model, self.solver.mj_data
        idx = self._ctrl_index()
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        state = np.empty(mujoco.mj_stateSize(m, spec))
        done = 0
        while done < n:
            c = min(CHUNK_STEPS, n - done)
            rows = np.zeros((c, 0))
            if targets is not None and self.has_gripper:
                r4 = np.asarray(targets(done, done + c), float)
                rows = np.concatenate([r4[:, :3], r4[:, 3:4], r4[:, 3:4]], axis=1)
            mujoco.mj_getState(m, d, state, spec)
            out = self._buffers(c)
            taken = self._steps(idx, rows, out)
            for i, reading in enumerate(self._readings(out, taken)):
                self.time += self.dt
                try:
                    stop = visit(done + i, reading)
                except BaseException:
                    self._redo(state, spec, idx, rows, i, taken)
                    raise
                if stop:
                    self._redo(state, spec, idx, rows, i, taken)
                    return done + i + 1
            done += taken
        return done

    def _ctrl_index(self) -> np.ndarray:
        mp = self.maps
        if not self.has_gripper:
            return np.zeros(0, np.int64)
        return np.concatenate([mp["ctrl_gantry"], mp["ctrl_jaw"]]).astype(np.int64)

    def _redo(self, state, spec, idx, rows, i, taken) -> None:
        """Back to the chunk's start state and step again to its step ``i`` (nothing when ``i`` was its last)."""
        if i + 1 < taken:
            mujoco.mj_setState(self.solver.mj_model, self.solver.mj_data, state, spec)
            self._steps(idx, rows[: i + 1], self._buffers(i + 1))

    def _buffers(self, n: int) -> tuple:
        """Readout arrays for ``n`` steps (``com`` (n, 3), ``pose`` (n, bodies, 7) wxyz, ``q``, ``qvel`` (n, nv))."""
        mp = self.maps
        bodies = np.array([mp["object_body"], *mp.get("jaw_bodies", [])], np.int64)
        q_read = (
            np.concatenate([mp["q_gantry"], mp["q_jaw"]]).astype(np.int64)
            if self.has_gripper
            else np.zeros(0, np.int64)
        )
        return (
            bodies,
            q_read,
            np.empty((n, 3)),
            np.empty((n, len(bodies), 7)),
            np.empty((n, len(q_read))),
            np.empty((n, self.solver.mj_model.nv)),
        )

    def _steps(self, idx: np.ndarray, rows: np.ndarray, out: tuple) -> int:
        """``len(rows)`` steps into ``out`` (:meth:`_buffers`), compiled while MuJoCo's memory use allows."""
        m, d = self.solver.mj_model, self.solver.mj_data
        bodies, q_read, com, pose, q, qv = out
        if _compiled is not None and arena_ok(d):
            return int(
                _compiled.ctrl_steps(
                    m._address,
                    d._address,
                    d.ctrl,
                    idx,
                    rows,
                    d.xipos,
                    d.xpos,
                    d.xquat,
                    d.qpos,
                    d.qvel,
                    int(self.maps["object_body"]),
                    bodies,
                    q_read,
                    RUNAWAY_QVEL**2,
                    com,
                    pose,
                    q,
                    qv,
                )
            )
        b = self.maps["object_body"]
        for k in range(rows.shape[0]):  # the same calls from Python: a MuJoCo error is an exception here
            d.ctrl[idx] = rows[k]
            mujoco.mj_step(m, d)
            com[k], pose[k, :, :3], pose[k, :, 3:] = d.xipos[b], d.xpos[bodies], d.xquat[bodies]
            q[k], qv[k] = d.qpos[q_read], d.qvel
        return rows.shape[0]

    def _readings(self, out: tuple, taken: int) -> list[Reading]:
        """The first ``taken`` steps of ``out`` as :class:`Reading` s (views), ``runaway`` per step."""
        _b, _q, com, pose, q, qv = (a[:taken] if a.ndim > 1 else a for a in out)
        pose = pose[..., [0, 1, 2, 4, 5, 6, 3]]  # wxyz -> xyzw
        bad = ~np.isfinite(com).all(axis=1)
        near = np.sqrt(np.einsum("ij,ij->i", qv, qv)) > RUNAWAY_QVEL * (1.0 - 1e-9)
        for i in np.flatnonzero(near & ~bad):
            bad[i] = np.linalg.norm(qv[i]) > RUNAWAY_QVEL
        gantry, jaws = (q[:, :3], q[:, 3:]) if self.has_gripper else (np.zeros((taken, 3)), np.zeros((taken, 2)))
        return [
            Reading(com[i], pose[i, 0, 3:], gantry[i], jaws[i], pose[i, 0], pose[i, 1:], qv[i], bool(bad[i]))
            for i in range(taken)
        ]

    def read(self) -> Reading:
        """The :class:`Reading` of the state now (as the last step left ``mjData``)."""
        d, mp = self.solver.mj_data, self.maps
        origin = self.object_origin()
        gantry, jaws, pads = np.zeros(3), np.zeros(2), np.zeros((0, 7))
        if self.has_gripper:
            gantry, jaws = (np.asarray(d.qpos[mp[k]], float) for k in ("q_gantry", "q_jaw"))
            pads = self.pad_poses()
        com = np.array(d.xipos[mp["object_body"]], float)
        return Reading(com, origin[3:].copy(), gantry, jaws, origin, pads, np.array(d.qvel, float))

    def object_origin(self) -> np.ndarray:
        """(7,) the object's body frame now: position m, quaternion xyzw (world)."""
        return _pose(self.solver.mj_data, self.maps["object_body"])

    def pad_poses(self) -> np.ndarray:
        """(2, 7) the two jaw bodies now: position m, quaternion xyzw (world)."""
        return np.stack([_pose(self.solver.mj_data, b) for b in self.maps["jaw_bodies"]])

    def disable_pads(self) -> None:
        """Switch the pads' collision off in the compiled MuJoCo model (contype = conaffinity = 0)."""
        for g in self.maps["pad_geoms"]:
            self.solver.mj_model.geom_contype[g] = 0
            self.solver.mj_model.geom_conaffinity[g] = 0


def _pose(d, b: int) -> np.ndarray:
    """(7,) MuJoCo body ``b``'s frame in ``d``: position m, quaternion xyzw (world)."""
    return np.concatenate([np.asarray(d.xpos[b], float), np.asarray(d.xquat[b], float)[[1, 2, 3, 0]]])


def _mujoco_maps(solver, model: newton.Model, body: int, ids: dict) -> dict:
    """MuJoCo indices of the object body, the gantry / jaw actuators, joints, bodies and pad geoms."""
    b2n = np.asarray(solver.mjc_body_to_newton.numpy()).reshape(-1, solver.mj_model.nbody)[0]
    to_mj = {int(n): i for i, n in enumerate(b2n) if n >= 0}
    out = dict(object_body=to_mj[body])
    if ids.get("gantry_q") is None:
        return out
    act_q = np.asarray(solver.mjc_actuator_to_newton_target_q_idx.numpy()).reshape(-1)[: solver.mj_model.nu]
    j2n = np.asarray(solver.mjc_jnt_to_newton_dof.numpy()).reshape(-1, solver.mj_model.njnt)[0]
    qadr = {int(n): int(solver.mj_model.jnt_qposadr[j]) for j, n in enumerate(j2n) if n >= 0}
    g_q, j_q = ids["gantry_q"], list(ids["jaw_q"])
    where = {int(q): a for a, q in enumerate(act_q)}
    g2n = np.asarray(solver.mjc_geom_to_newton_shape.numpy()).reshape(-1, solver.mj_model.ngeom)[0]
    out.update(
        ctrl_gantry=np.array([where[g_q + k] for k in range(3)]),
        ctrl_jaw=np.array([where[q] for q in j_q]),
        q_gantry=np.array([qadr[ids["gantry_dof"] + k] for k in range(3)]),
        q_jaw=np.array([qadr[d] for d in ids["jaw_dofs"]]),
        jaw_bodies=[to_mj[int(b)] for b in ids["jaw_bodies"]],
        pad_geoms=[int(g) for g, n in enumerate(g2n) if int(n) in {int(p) for p in ids["pads"]}],
    )
    return out


def build_gripper_scene(
    asset: ObjectAsset,
    object_pos: np.ndarray,
    object_quat: np.ndarray,
    *,
    gantry0: np.ndarray,
    u: np.ndarray | None,
    jaw0: float,
    config: ReplayConfig,
    fixture: FixtureConfig,
) -> GripperScene:
    """Object (``object_pos`` m / ``object_quat`` xyzw) on the ground z = 0 and the gripper (jaw axis ``u`` (3,) world,
    gantry point ``gantry0`` (3,) m, jaws at ``jaw0`` m; ``u=None``: none). Raises DataError: bad asset or pad
    friction <= 0."""
    builder = new_builder(config)
    body, _joint, _shapes, parts = _add_object(builder, asset, object_pos, object_quat, config)
    s_ground = builder.shape_count
    _add_support(builder, 0.0, None, config)
    mass = float(builder.body_mass[body])
    force = jaw_force(mass, fixture)
    kp, kd, pad_mass = jaw_gains(force, config.dt, fixture)
    ids: dict = {}
    if u is not None:
        ids = _add_gripper(
            builder,
            np.asarray(gantry0, float),
            np.asarray(u, float),
            float(jaw0),
            (force, kp, kd),
            pad_mass,
            mass,
            asset,
            fixture,
        )
        for p in ids["pads"]:
            builder.add_shape_collision_filter_pair(int(p), s_ground)
        builder.add_shape_collision_filter_pair(int(ids["pads"][0]), int(ids["pads"][1]))
    model = builder.finalize(device="cpu")
    solver = make_solver(model, dataclasses.replace(config, engine=EngineChoice.MUJOCO_C, device="cpu"), None)
    solver.mj_model.opt.timestep = float(config.dt)
    state = model.state()
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    SolverView(solver).push_state(model, state)
    if u is not None:
        solver.mj_data.ctrl[:] = 0.0
    maps = _mujoco_maps(solver, model, body, ids)
    if u is not None:
        solver.mj_data.ctrl[maps["ctrl_gantry"]] = gantry0
        solver.mj_data.ctrl[maps["ctrl_jaw"]] = jaw0
    mujoco.mj_forward(solver.mj_model, solver.mj_data)
    return GripperScene(
        model=model,
        solver=solver,
        dt=float(config.dt),
        object_mass=mass,
        object_com=np.asarray(builder.body_com[body], float),
        object_inertia=np.asarray(builder.body_inertia[body], float).reshape(3, 3),
        object_vertices=np.concatenate([v for v, _ in parts]),
        u=np.zeros(3) if u is None else np.asarray(u, float) / np.linalg.norm(u),
        force=force,
        kp=kp,
        kd=kd,
        pad_mass=pad_mass,
        has_gripper=u is not None,
        maps=maps,
    )


def _add_gripper(builder, gantry0, u, jaw0, drive, pad_mass, object_mass, asset, fx: FixtureConfig) -> dict:
    """The carriage and two padded jaws; ``drive`` (force N, kp N/m, kd N·s/m). Returns Newton indices."""
    force, kp, kd = drive
    R = line_frame(u)
    m_c = float(fx.carriage_mass)
    carriage = builder.add_link(
        xform=wp.transform(wp.vec3(*gantry0), wp.quat_identity()),
        mass=m_c,
        inertia=wp.mat33(np.eye(3) * 1e-3 * m_c),
        label="gripper_carriage",
    )
    total = m_c + 2 * pad_mass + object_mass
    kd_g = 2.0 * np.sqrt(fx.gantry_kp * total)
    axes = [
        newton.ModelBuilder.JointDofConfig(
            axis=a,
            target_ke=fx.gantry_kp,
            target_kd=kd_g,
            target_q=float(x),
            effort_limit=fx.gantry_effort,
            armature=0.0,
        )
        for a, x in zip((newton.Axis.X, newton.Axis.Y, newton.Axis.Z), gantry0)
    ]
    j_g = builder.add_joint_d6(-1, carriage, linear_axes=axes, label="gantry")
    joints, pads, jaws = [j_g], [], []
    for side, Rs in enumerate((R, R @ np.diag([-1.0, -1.0, 1.0]))):
        q = wp.quat(*Rotation.from_matrix(Rs).as_quat())
        jaw = builder.add_link(
            xform=wp.transform(wp.vec3(*(gantry0 + Rs[:, 0] * jaw0)), q),
            mass=pad_mass,
            inertia=wp.mat33(np.eye(3) * pad_mass * fx.pad_half_width**2 / 3.0),
            label=f"gripper_jaw{side}",
        )
        jaws.append(jaw)
        joints.append(
            builder.add_joint_prismatic(
                carriage,
                jaw,
                parent_xform=wp.transform(wp.vec3(0.0, 0.0, 0.0), q),
                axis=newton.Axis.X,
                target_ke=kp,
                target_kd=kd,
                target_q=float(jaw0),
                limit_lower=0.0,
                limit_upper=float(fx.jaw_max),
                effort_limit=force,
                armature=0.0,
                label=f"jaw{side}",
            )
        )
        builder.joint_q[builder.joint_q_start[joints[-1]]] = float(jaw0)
        cfg = newton.ModelBuilder.ShapeConfig(
            mu=float(fx.pad_friction),
            mu_torsional=float(asset.friction[1]),
            mu_rolling=float(asset.friction[2]),
            density=0.0,
        )
        h = 0.5 * float(fx.pad_thickness)
        pads.append(
            builder.add_shape_box(
                jaw,
                xform=wp.transform(wp.vec3(h, 0.0, 0.0), wp.quat_identity()),
                hx=h,
                hy=fx.pad_half_width,
                hz=fx.pad_half_width,
                cfg=cfg,
                label=f"pad{side}",
                custom_attributes={"mujoco:condim": int(asset.condim), "mujoco:geom_priority": 1},
            )
        )
    builder.add_articulation(joints, label="gripper")
    qs = [builder.joint_q_start[j] for j in joints]
    ds = [builder.joint_qd_start[j] for j in joints]
    builder.joint_q[qs[0] : qs[0] + 3] = [float(x) for x in gantry0]
    return dict(gantry_dof=ds[0], gantry_q=qs[0], jaw_dofs=ds[1:], jaw_q=qs[1:], jaw_bodies=jaws, pads=pads)
