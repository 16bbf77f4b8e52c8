"""N worlds of one replay scene on MuJoCo's C backend, stepped directly (docs/engine.md); this module is the Python
loop, bit for bit the compiled spans of :mod:`replay.sim.engine.mujoco_c.c_loop`."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import mujoco
import numpy as np

from replay.errors import EngineError
from replay.sim import physics
from replay.sim.engine import finger_drive, signals, wrist
from replay.sim.engine.contract import Capabilities, FrameSignals, geom_distance
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.mujoco_c.data_fields import DataFields
from replay.sim.engine.mujoco_c.mjc_spans import C_LOOP_ERROR, SpanSteps
from replay.sim.engine.mujoco_c.model_edits import apply_variant, initial_state_edits
from replay.sim.engine.spans import SpanEngine
from replay.sim.engine.variants import Variant
from replay.sim.engine.world import WorldStatus


@dataclass(kw_only=True)
class World(WorldStatus):
    """One world on MuJoCo C: model, data, warning counters (:data:`WARNINGS` order) and their start values."""

    m: mujoco.MjModel
    d: mujoco.MjData
    warn: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    warn_base: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    drive: finger_drive.FingerDrive | None = None
    #: poses before / after a frame's kinematics (17, 7: m, xyzw), the fastest body (4,)
    stale: np.ndarray = field(default_factory=lambda: np.zeros((17, 7)))
    fresh: np.ndarray = field(default_factory=lambda: np.zeros((17, 7)))
    fast: np.ndarray = field(default_factory=lambda: np.zeros(4))
    #: scratch: the wrist wrench (6,) and the largest actuator force (1,), and the compiled frame's fixed arguments
    wr: np.ndarray = field(default_factory=lambda: np.zeros(6))
    stats: np.ndarray = field(default_factory=lambda: np.zeros(1))
    c_args: tuple | None = None
    #: the compiled span's views of ``d`` (None: Python loop); scratch (6,), contact sums (4,), span end (4,)
    fields: DataFields | None = None
    res: np.ndarray = field(default_factory=lambda: np.zeros(6))
    sums: np.ndarray = field(default_factory=lambda: np.zeros(4))
    info: np.ndarray = field(default_factory=lambda: np.zeros(4, np.int64))


#: MuJoCo warnings that stop a world: dropped contacts or constraints, bad position, velocity or acceleration
WARNINGS = ("CONTACTFULL", "CNSTRFULL", "BADQACC", "BADQPOS", "BADQVEL")
_WARN_IDS = np.array([int(getattr(mujoco.mjtWarning, f"mjWARN_{k}")) for k in WARNINGS], np.int64)
_WARN_WHAT = {
    "BADQACC": "bad acceleration (reset",
    "BADQPOS": "non-finite or huge position (reset",
    "BADQVEL": "non-finite or huge velocity (reset",
}


def split_step(m: mujoco.MjModel) -> bool:
    """True when ``m``'s integrator steps the same through ``mj_step1`` + ``mj_step2`` (not RK4)."""
    return int(m.opt.integrator) != int(mujoco.mjtIntegrator.mjINT_RK4)


def _warning_reason(k: int, d: mujoco.MjData) -> str:
    what = _WARN_WHAT.get(WARNINGS[k], "contacts/constraints dropped (arena full")
    return f"MuJoCo mjWARN_{WARNINGS[k]}: {what}, {d.ncon} contacts)"


class MjcBatch(SpanSteps, SpanEngine):
    """Worlds of one scene on MuJoCo C (``scene`` built with ``device="cpu"``); ``threads`` includes the caller's;
    ``capacity`` contacts stop a world (default ``scene.contact_capacity``); ``c_loop`` False: spans in Python.
    Raises EngineError: a variant cannot be applied; AblationMaskError."""

    capabilities = Capabilities(
        "direct",
        worlds_per_scene=0,
        parameter_variants=True,
        ablation_by_variant=True,
        frame_spans=True,
        geom_distance=True,
    )

    def __init__(
        self, scene, variants: list[Variant], *, threads: int = 1, capacity: int | None = None, c_loop: bool = True
    ):
        if not getattr(scene.solver, "use_mujoco_cpu", False):
            raise EngineError("MjcBatch needs a scene built for the CPU backend (use_mujoco_cpu=True)")
        super().__init__(scene, variants, threads=threads)
        self.layout = lay = MjLayout.from_scene(scene)
        base_m = scene.solver.mj_model
        base_m.opt.timestep = self.cfg.dt
        state0 = scene.model.state()
        base_d = scene.solver.mj_data
        scene.solver._update_mjc_data(base_d, scene.model, state0)
        qpos0, qvel0 = base_d.qpos.copy(), base_d.qvel.copy()
        self.worlds: list[World] = []
        if any(v.ablation != scene.ablation for v in variants) and scene.ablation:
            raise EngineError("a scene built with the ablation holds only ablation worlds")
        quat = self.cfg.finger_drive == "quat"
        for v in variants:
            edits = v.edits_model and not (v.ablation and scene.ablation and not v.edits_params)
            m = copy.copy(base_m) if edits or quat else base_m
            rb = apply_variant(m, lay, v, prebuilt_ablation=scene.ablation) if edits else {}
            drive = finger_drive.FingerDrive.from_model(m, lay) if quat else None  # after the variant's effort
            if quat:
                rb.update(finger_drive.disable_finger_actuators(m, lay))
            d = mujoco.MjData(m)
            d.qpos[:], d.qvel[:] = qpos0, qvel0
            rb.update(initial_state_edits(d, lay, v))  # the object's initial offset (Variant.object_offset)
            w = World(
                m=m,
                d=d,
                variant=v,
                readback=rb,
                drive=drive,
                capacity=int(scene.contact_capacity if capacity is None else capacity),
            )
            w.warn = d.warning.number  # a view into mjData (the bindings' documented field)
            w.warn_base = w.warn[_WARN_IDS].astype(np.int64)
            self.worlds.append(w)
        self.par = wrist.wrist_params(
            scene.wrist_kp,
            scene.wrist_kd,
            d_passive=self._passive_wrist_damping(),
            hand_mass=scene.hand_mass,
            root_com_local=scene.model.body_com.numpy()[scene.hand_bodies[0]],
            **physics.wrist_law_kwargs(scene.config),
        )
        self.body_mass = np.asarray(base_m.body_mass, float).copy()
        #: the wrist's fixed arguments (:func:`replay.sim.engine.wrist.apply_substep`)
        self._hand = (lay.hand_qadr, lay.hand_vadr, lay.root, lay.hand_bodies, self.body_mass, self.par)
        self.threads = max(1, int(threads))
        self._pool = ThreadPoolExecutor(self.threads - 1) if self.threads > 1 and len(self.worlds) > 1 else None
        self._hand_mask = lay.hand_geoms
        self._obj_mask = lay.object_geoms
        self._rootid = np.asarray(base_m.body_rootid, np.int64)
        self._pyramidal = int(base_m.opt.cone) == int(mujoco.mjtCone.mjCONE_PYRAMIDAL)
        self._bodies = lay.bodies
        self._interp = physics.wrist_interpolated(self.cfg)
        self._z1, self._z2 = np.zeros(0, np.int64), np.zeros((0, 3))
        self.c_loop = bool(c_loop) and C_LOOP_ERROR is None
        self._init_spans()
        self.recorder = (
            None  # f(world index, MjData) before every mj_step; set: the Python loop (replay.protocol.input_log)
        )

    _warning_reason = staticmethod(_warning_reason)

    def _passive_wrist_damping(self) -> np.ndarray:
        s = self.scene
        return s.model.joint_damping.numpy()[s.hand_qd_start : s.hand_qd_start + 6].astype(float)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def step_frame(self, finger_quat: np.ndarray, tgt_prev: np.ndarray, tgt: np.ndarray) -> None:
        """Advance every live world by ``config.substeps`` steps: ``finger_quat`` (N, 15, 4) xyzw; ``tgt_prev``,
        ``tgt`` (N, 16) wrist rows of the previous and this frame."""
        live = [i for i, w in enumerate(self.worlds) if w.alive]
        finger_ctrl = np.zeros((len(self.worlds), self.layout.nu))
        quat = [None] * len(self.worlds)
        for i in live:
            self.layout.finger_ctrl(finger_quat[i], finger_ctrl[i])
            if self.worlds[i].drive is not None:
                quat[i] = self._drive_targets(finger_ctrl[i])

        self._deal(live, lambda i: self._step_world(i, finger_ctrl[i], tgt_prev[i], tgt[i], quat[i]))

    def _deal(self, live: list[int], fn) -> None:
        """``fn(i)`` for each of ``live``, round-robin over the threads, the first share here (MuJoCo frees the GIL)."""
        if self._pool is None or len(live) < 2:
            for i in live:
                fn(i)
            return

        def run(ids):
            for i in ids:
                fn(i)

        chunks = [live[t :: self.threads] for t in range(min(self.threads, len(live)))]
        pending = [self._pool.submit(run, c) for c in chunks[1:]]
        run(chunks[0])
        for f in pending:
            f.result()

    def _drive_targets(self, ctrl: np.ndarray) -> np.ndarray:
        """(J, 4) wxyz drive targets of a ``ctrl`` (nu,) that ``MjLayout.finger_ctrl`` filled."""
        rv = finger_drive.rotvec_targets(self.layout, ctrl)
        q = np.empty((len(rv), 4))
        finger_drive.targets_from_rotvec(rv, q)
        return q

    def _step_world(self, i: int, ctrl, tp, tc, finger_target=None) -> None:
        """One Python-loop frame of world ``i``, then its stop: ``FatalError``, a warning, ``maxuse_con`` > capacity."""
        w = self.worlds[i]
        d, drv = w.d, w.drive
        d.ctrl[:] = ctrl
        wr, stats, k = w.wr, w.stats, -1
        wr[:] = 0.0
        stats[0] = w.act_max
        try:
            k = self._python_frame(w, tp, tc, finger_target, wr, stats, i)
        except mujoco.FatalError as e:  # MuJoCo's own report (mju_error); any other exception is a code error
            w.reason = f"solver exception: {type(e).__name__}: {e}"
        peak = int(d.maxuse_con)
        if w.reason is None and k >= 0:
            w.reason = _warning_reason(k, d)
        if w.reason is None and peak > w.capacity:
            w.reason = f"contact overflow: {peak} contacts exceed the capacity {w.capacity}"
        w.peak_contacts = peak
        af = d.actuator_force
        w.act_max = max(
            float(stats[0]),
            float(np.max(np.abs(af))) if af.size else 0.0,
            float(np.max(np.abs(d.qfrc_applied[drv.vadr[:, None] + np.arange(3)]))) if drv else 0.0,
        )

    def _python_frame(self, w: World, tp, tc, target, wr, stats, i: int = 0) -> int:
        """The frame's substeps from Python; a raised warning's index into :data:`WARNINGS`, else -1."""
        m, d, drv = w.m, w.d, w.drive
        S = self.cfg.substeps
        interp = self._interp
        qpos, qvel, xipos, xfrc, af = d.qpos, d.qvel, d.xipos, d.xfrc_applied, d.actuator_force
        split = split_step(m)
        for j in range(S):
            if split:  # MuJoCo's split of mj_step, the same trajectory (c_loop's module doc)
                mujoco.mj_step1(m, d)
            else:
                mujoco.mj_kinematics(m, d)
            wrist.apply_substep(qpos, qvel, xipos, xfrc, af, self._hand, tp, tc, (j + 1) / S, interp, wr, stats)
            if drv is not None:
                finger_drive.quat_drive(
                    qpos, qvel, drv.qadr, drv.vadr, target, drv.kp, drv.kd, drv.effort, d.qfrc_applied
                )
            if self.recorder is not None:
                self.recorder(i, d)
            mujoco.mj_step2(m, d) if split else mujoco.mj_step(m, d)
            raised = np.flatnonzero(w.warn[_WARN_IDS] > w.warn_base)
            if raised.size:
                return int(raised[0])
        return -1

    def _c_args(self, w: World) -> tuple:
        """World ``w``'s fixed arguments of :func:`replay.sim.engine.mujoco_c.c_loop._frame`."""
        drv, d = w.drive, w.d
        z2, z1 = self._z2, self._z1
        return (
            w.m._address,
            d._address,
            split_step(w.m),
            self.cfg.substeps,
            self._interp,
            d.qpos,
            d.qvel,
            d.xipos,
            d.xfrc_applied,
            d.actuator_force,
            self._hand,
            w.wr,
            w.stats,
            drv is not None,
            drv.qadr if drv else z1,
            drv.vadr if drv else z1,
            drv.kp if drv else z2,
            drv.kd if drv else z2,
            drv.effort if drv else z2,
            d.qfrc_applied,
            w.warn,
            _WARN_IDS,
            w.warn_base,
            d.xpos,
            d.xquat,
            d.cvel,
            d.subtree_com,
            self._rootid,
            self._bodies,
            w.stale,
            w.fresh,
            w.fast,
        )

    # --- reading ---------------------------------------------------------------------
    def read_frame(self, i: int, *, force_min: float, max_linear: float, max_angular: float) -> FrameSignals:
        """Signals of world ``i`` after its last frame (contacts of the frame's last step); stopped on a reason: a
        body's COM speed above ``max_linear`` m/s or ``max_angular`` rad/s, or non-finite ``qpos``/``qvel``."""
        w = self.worlds[i]
        m, d = w.m, w.d
        reason = w.reason
        if reason is None and not signals.all_finite(d.qpos, d.qvel):
            reason = "non-finite state"
        if reason is None:
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_comVel(m, d)
            fast = w.fast  # per-world scratch: worlds of a span may read in threads
            signals.fastest_body(d.cvel, d.xipos, d.subtree_com, self._rootid, self._bodies, fast)
            reason = self._runaway(fast, max_linear, max_angular)
        b = self._bodies
        sig = FrameSignals(
            body_pos=d.xpos[b], body_quat=d.xquat[b][:, [1, 2, 3, 0]], contacts=0, contacts_force=0, reason=reason
        )
        return self._read_contacts(w, sig, force_min)

    def _runaway(self, fast: np.ndarray, max_linear: float, max_angular: float) -> str | None:
        """The runaway reason for :func:`replay.sim.engine.signals.fastest_body`'s ``fast``, or None."""
        if not fast[0] <= max_linear:
            return (
                f"runaway linear velocity {fast[0]:.3g} m/s on body {int(self.layout.newton_of_mj_body[int(fast[1])])}"
            )
        if not fast[2] <= max_angular:
            body = int(self.layout.newton_of_mj_body[int(fast[3])])
            return f"runaway angular velocity {fast[2]:.3g} rad/s on body {body}"
        return None

    def _read_contacts(self, w: World, sig: FrameSignals, force_min: float) -> FrameSignals:
        reason, cs = sig.reason, w.sums
        if signals.data_contacts(
            w.d, self._hand_mask, self._obj_mask, pyramidal=self._pyramidal, force_min=force_min, out=cs
        ):
            sig.contacts, sig.contacts_force = int(cs[0]), int(cs[1])
            sig.normal_force, sig.friction_force = float(cs[2]), float(cs[3])
        if reason is not None:
            w.alive = False
            w.reason = reason
        return sig

    def min_distance(self, i: int, geoms_a: np.ndarray, geoms_b: np.ndarray, *, distmax: float = 0.5) -> float:
        """Smallest signed distance, m (negative: penetration), between any geom of ``geoms_a`` and of ``geoms_b`` in
        world ``i`` (``mj_geomDistance``); ``distmax`` if none is closer."""
        w = self.worlds[i]
        mujoco.mj_kinematics(w.m, w.d)
        return geom_distance(w.m, w.d, geoms_a=geoms_a, geoms_b=geoms_b, distmax=distmax)

    def sync_state(self, i: int, state) -> None:
        """Write world ``i``'s coordinates into a Newton ``State``."""
        s = self.scene.solver
        s._update_newton_state(self.scene.model, state, self.worlds[i].d, state_prev=state)
