"""N worlds of one replay scene on MuJoCo's C backend, stepped at MuJoCo speed.

Newton builds the model and :class:`newton.solvers.SolverMuJoCo` compiles it
(``use_mujoco_cpu=True``); from there each world is an ``MjData`` (and, when its
:class:`~replay.sim.engine.variants.Variant` edits parameters, its own copy of the
``MjModel``) stepped directly with ``mujoco.mj_step``. Per physics step only two
things run besides ``mj_step``: ``mj_kinematics`` (the controller needs the body
COMs of the current ``qpos``) and the wrist wrench, compiled by numba
(:mod:`replay.sim.engine.wrist`). Finger targets become ``ctrl`` once per control
frame; the recorded signals (body poses, hand-object contacts, overflow, runaway)
are read once per control frame.

Why not ``SolverMuJoCo.step``: per step it packs Newton's state into ``MjData``
and back (float32 coordinates, seven Warp launches), which cost 10-15x the
``mj_step`` it wraps on this scene. Newton's :class:`newton.State` is not kept up
to date while stepping; :meth:`MjcBatch.sync_state` writes a world's state into
one when something needs Newton's view (nothing in the replay does).

Worlds are independent: world i of a batch gives the same trajectory as a batch
of one holding variant i (each world has its own ``MjData``; ``mj_step`` is
deterministic). With more than one world and ``threads > 1``, worlds are stepped
in a thread pool, one control frame per task: MuJoCo's Python bindings release
the GIL inside ``mj_step``, and numba's wrench runs ``nogil``.
"""

from __future__ import annotations

import copy
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import mujoco
import numpy as np

from replay.sim.engine import finger_drive, pair_audit, signals, wrist
from replay.sim.engine.contract import Capabilities, FrameSignals, fingertip_geoms_of
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.variants import Variant
from replay.sim.engine.world import WorldStatus
from replay.errors import AblationMaskError, EngineError

try:  # the compiled substep loop (replay.sim.engine.mujoco_c.c_loop); without it every frame runs the Python loop
    from replay.sim.engine.mujoco_c import c_loop as c_loop_mod
    C_LOOP_ERROR = None
except ImportError as e:  # libmujoco not the bindings' (c_loop's module doc)
    c_loop_mod, C_LOOP_ERROR = None, str(e)


def _collides(ct: np.ndarray, ca: np.ndarray) -> np.ndarray:
    """(ngeom, ngeom) bool: MuJoCo's contype/conaffinity test for every geom pair."""
    return ((ct[:, None] & ca[None, :]) != 0) | ((ct[None, :] & ca[:, None]) != 0)


def ablate_hand_object(m: mujoco.MjModel, layout: MjLayout) -> int:
    """Make hand-object geom pairs unable to collide in ``m`` (contact ablation).

    MuJoCo collides geoms a and b when ``contype[a] & conaffinity[b]`` or
    ``contype[b] & conaffinity[a]`` is non-zero (and their bodies are not excluded).
    The object's geoms get one bit that no hand geom uses as their only contype and
    conaffinity bit, and every non-hand geom that collided with the object gets that
    bit too: object-support contact is kept, hand-object contact cannot occur. Every
    geom pair's test is compared before and after: only hand-object pairs may change.

    Returns:
        The bit used.

    Raises:
        AblationMaskError: no usable bit (the caller builds the ablation as its own
            scene with Newton's collision filter pairs instead).
    """
    ct, ca = m.geom_contype.astype(np.int64), m.geom_conaffinity.astype(np.int64)
    hand, obj = layout.hand_geoms, layout.object_geoms
    body = np.asarray(m.geom_bodyid)
    # pairs MuJoCo can collide at all: different bodies, not both static (world body 0)
    live = (body[:, None] != body[None, :]) & ~((body[:, None] == 0) & (body[None, :] == 0))
    before = _collides(ct, ca)
    partners = np.flatnonzero(~hand & ~obj & before[:, obj].any(axis=1))
    hand_bits = int(np.bitwise_or.reduce(ct[hand]) | np.bitwise_or.reduce(ca[hand]))
    ho = hand[:, None] & obj[None, :]
    ho = ho | ho.T
    for k in range(31):
        bit = 1 << k
        if hand_bits & bit:
            continue
        ct2, ca2 = ct.copy(), ca.copy()
        ct2[obj] = bit
        ca2[obj] = bit
        ct2[partners] |= bit
        ca2[partners] |= bit
        after = _collides(ct2, ca2)
        keep = live & ~ho
        if not (after & ho & live).any() and np.array_equal(after[keep], before[keep]):
            m.geom_contype[:] = ct2
            m.geom_conaffinity[:] = ca2
            return bit
    raise AblationMaskError("no contype/conaffinity bit filters hand-object pairs alone")


def apply_variant(m: mujoco.MjModel, layout: MjLayout, v: Variant, prebuilt_ablation: bool = False) -> dict:
    """Edit a world's compiled model for ``v``; read every edited value back.

    Ablation: :func:`ablate_hand_object`, unless the scene was built with Newton's
    hand-object filter pairs (``prebuilt_ablation``). Friction: sliding ``geom_friction[:, 0]``
    of the fewest geoms that give every hand-object contact the value
    (:func:`replay.sim.engine.pair_audit.set_hand_object_friction`: the hand's alone where
    that suffices, so object-support contacts keep what was built; the other pair classes it
    changed are read back into ``friction_side_effects``). Effort: the finger
    actuators' ``actuator_forcerange`` (force-limited). Mass: ``body_mass`` and
    ``body_inertia`` of the object scaled together, then ``mj_setConst``.

    Values are rounded to float32 first, as Newton stores every model parameter: a
    variant equal to the scene's own value gives the scene's own model, bit for bit.

    Returns:
        The values read back from ``m`` (for the results).

    Raises:
        EngineError: a value did not take. AblationMaskError: see :func:`ablate_hand_object`.
    """
    out: dict = {}
    f32 = lambda x: None if x is None else float(np.float32(x))  # noqa: E731 (Newton's model parameters are float32)
    v = dataclasses.replace(v, friction=f32(v.friction), effort_limit=f32(v.effort_limit), object_mass=f32(v.object_mass))
    if v.friction is not None:  # on as few geoms as reach every hand-object pair (pair_audit)
        out.update(pair_audit.set_hand_object_friction(m, layout, v.friction))
    if v.effort_limit is not None:
        fa = layout.finger_act
        m.actuator_forcerange[fa] = [-v.effort_limit, v.effort_limit]
        m.actuator_forcelimited[fa] = 1
        out["finger_forcerange"] = float(m.actuator_forcerange[fa[0], 1])
    if v.object_mass is not None:
        b = layout.object_body
        scale = v.object_mass / float(m.body_mass[b])
        m.body_mass[b] = v.object_mass
        m.body_inertia[b] = m.body_inertia[b] * scale
        d = mujoco.MjData(m)
        mujoco.mj_setConst(m, d)
        out["object_mass"] = float(m.body_mass[b])
    if v.ablation and not prebuilt_ablation:
        out["ablation_bit"] = ablate_hand_object(m, layout)
    checks = [("contact_friction", v.friction), ("finger_forcerange", v.effort_limit), ("object_mass", v.object_mass)]
    for key, want in checks:
        if want is not None and not np.isclose(out[key], want, rtol=1e-6):
            raise EngineError(f"variant {key} = {want} did not take: the model holds {out[key]}")
    return out


@dataclass(kw_only=True)
class World(WorldStatus):
    """One world on MuJoCo C: its model and data, the view of its warning counters
    (``d.warning.number``) and their values at the start (in :data:`WARNINGS` order)."""

    m: mujoco.MjModel
    d: mujoco.MjData
    warn: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    warn_base: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    drive: finger_drive.FingerDrive | None = None


#: MuJoCo warnings that stop a world (checked after every physics step)
WARNINGS = ("CONTACTFULL", "CNSTRFULL", "BADQACC")
_WARN_IDS = np.array([int(getattr(mujoco.mjtWarning, f"mjWARN_{k}")) for k in WARNINGS], np.int64)


def _warning_reason(k: int, d: mujoco.MjData) -> str:
    """The reason a world stops on warning ``WARNINGS[k]``."""
    what = "contacts/constraints dropped (arena full" if WARNINGS[k] != "BADQACC" else "bad acceleration (reset"
    return f"MuJoCo mjWARN_{WARNINGS[k]}: {what}, {d.ncon} contacts)"


class MjcBatch:
    """Worlds of one scene on MuJoCo C (see the module doc).

    Args:
        scene: a :class:`replay.sim.scene.Scene` built with ``device="cpu"``.
        variants: one :class:`Variant` per world.
        threads: worker threads for stepping worlds (1: in the caller's thread).
        capacity: contact count above which a world stops with a contact overflow
            (default ``scene.contact_capacity``).
        c_loop: step each frame's substeps in one nogil numba call into MuJoCo's C
            (:mod:`replay.sim.engine.mujoco_c.c_loop`; the default: the same trajectory as the Python loop,
            no Python per substep); False: the Python loop for every frame.

    Raises:
        EngineError: a variant cannot be applied. AblationMaskError: see :func:`ablate_hand_object`.
    """

    capabilities = Capabilities("direct", worlds_per_scene=0, parameter_variants=True, ablation_by_variant=True,
                                geom_distance=True)

    def __init__(self, scene, variants: list[Variant], threads: int = 1, capacity: int | None = None,
                 c_loop: bool = True):
        if not getattr(scene.solver, "use_mujoco_cpu", False):
            raise EngineError("MjcBatch needs a scene built for the CPU backend (use_mujoco_cpu=True)")
        self.scene = scene
        self.cfg = scene.config
        self.layout = lay = MjLayout.from_scene(scene)
        base_m = scene.solver.mj_model
        base_m.opt.timestep = self.cfg.dt
        # initial state: Newton's model coordinates pushed into MuJoCo once
        state0 = scene.model.state()
        base_d = scene.solver.mj_data
        scene.solver._update_mjc_data(base_d, scene.model, state0)
        qpos0, qvel0 = base_d.qpos.copy(), base_d.qvel.copy()
        self.worlds: list[World] = []
        if any(v.ablation != scene.ablation for v in variants) and scene.ablation:
            raise EngineError("a scene built with the ablation holds only ablation worlds")
        quat = self.cfg.finger_drive == "quat"
        if self.cfg.effort_profile != "uniform" and any(v.effort_limit is not None for v in variants):
            raise EngineError(f"an effort_limit variant is one value for every joint: it cannot stand in for "
                              f"effort_profile {self.cfg.effort_profile!r} (use effort_profile 'uniform')")
        for v in variants:
            edits = v.edits_model and not (v.ablation and scene.ablation and not v.edits_params)
            m = copy.copy(base_m) if edits or quat else base_m
            rb = apply_variant(m, lay, v, prebuilt_ablation=scene.ablation) if edits else {}
            drive = finger_drive.FingerDrive.from_model(m, lay) if quat else None  # after the variant's effort
            if quat:
                rb.update(finger_drive.disable_finger_actuators(m, lay))
            d = mujoco.MjData(m)
            d.qpos[:] = qpos0
            d.qvel[:] = qvel0
            w = World(m=m, d=d, variant=v, readback=rb, drive=drive,
                      capacity=int(scene.contact_capacity if capacity is None else capacity))
            w.warn = d.warning.number  # a view into mjData (the bindings' documented field)
            w.warn_base = w.warn[_WARN_IDS].astype(np.int64)
            self.worlds.append(w)
        self.par = wrist.wrist_params(scene.wrist_kp, scene.wrist_kd, self._passive_wrist_damping(),
                                      scene.hand_mass, scene.model.body_com.numpy()[scene.hand_bodies[0]])
        self.body_mass = np.asarray(base_m.body_mass, float).copy()
        self.threads = max(1, int(threads))
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 and len(self.worlds) > 1 else None
        self._hand_mask = lay.hand_geoms
        self._obj_mask = lay.object_geoms
        self._rootid = np.asarray(base_m.body_rootid, np.int64)
        self._pyramidal = int(base_m.opt.cone) == int(mujoco.mjtCone.mjCONE_PYRAMIDAL)
        self._fast = np.zeros(4)
        self._contact_sums = np.zeros(4)
        self.c_loop = bool(c_loop) and c_loop_mod is not None
        self.recorder = None  # f(world index, MjData) before every mj_step; set: the Python loop (replay.protocol.input_log)

    def _passive_wrist_damping(self) -> np.ndarray:
        s = self.scene
        return s.model.joint_damping.numpy()[s.hand_qd_start: s.hand_qd_start + 6].astype(float)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    # --- stepping ------------------------------------------------------------------
    def step_frame(self, finger_quat: np.ndarray, tgt_prev: np.ndarray, tgt: np.ndarray) -> None:
        """Advance every live world by one control frame (``config.substeps`` steps).

        Args:
            finger_quat: (N, 15, 4) finger joint targets per world, Newton xyzw.
            tgt_prev, tgt: (N, 16) wrist target rows (:mod:`replay.sim.engine.wrist`) of the
                previous and this frame; within the frame the position and orientation
                are interpolated from ``tgt_prev`` when ``config.wrist_substep_interp``.
        """
        live = [i for i, w in enumerate(self.worlds) if w.alive]
        finger_ctrl = np.zeros((len(self.worlds), self.layout.nu))
        quat = [None] * len(self.worlds)
        for i in live:
            self.layout.finger_ctrl(finger_quat[i], finger_ctrl[i])
            if self.worlds[i].drive is not None:  # the same targets, as joint quaternions (finger_drive)
                rv = finger_drive.rotvec_targets(self.layout, finger_ctrl[i])
                quat[i] = np.empty((len(rv), 4))
                finger_drive.targets_from_rotvec(rv, quat[i])
        if self._pool is None or len(live) < 2:
            for i in live:
                self._step_world(i, finger_ctrl[i], tgt_prev[i], tgt[i], quat[i])
        else:
            list(self._pool.map(lambda i: self._step_world(i, finger_ctrl[i], tgt_prev[i], tgt[i], quat[i]), live))

    def _step_world(self, i: int, ctrl, tp, tc, finger_target=None) -> None:
        """One frame of world ``i``: compiled while :func:`replay.sim.engine.mujoco_c.c_loop.arena_ok`, else the Python
        loop (the same calls); then its stop reason: a solver exception (its message), a MuJoCo warning, or
        more contacts than the capacity (``mjData.maxuse_con``: the most after any step so far)."""
        w = self.worlds[i]
        d, drv = w.d, w.drive
        d.ctrl[:] = ctrl
        wr, stats, k = np.zeros(6), np.array([w.act_max]), -1
        try:
            if self.c_loop and self.recorder is None and c_loop_mod.arena_ok(d):
                k = self._c_frame(w, tp, tc, finger_target, wr, stats)
            else:
                k = self._python_frame(w, tp, tc, finger_target, wr, stats, i)
        except Exception as e:  # physics trouble (a MuJoCo error) never crashes the study
            w.reason = f"solver exception: {type(e).__name__}: {e}"
        peak = int(d.maxuse_con)
        if w.reason is None and k >= 0:
            w.reason = _warning_reason(k, d)
        if w.reason is None and peak > w.capacity:
            w.reason = f"contact overflow: {peak} contacts exceed the capacity {w.capacity}"
        w.peak_contacts = peak
        af = d.actuator_force
        w.act_max = max(float(stats[0]), float(np.max(np.abs(af))) if af.size else 0.0,
                        float(np.max(np.abs(d.qfrc_applied[drv.vadr[:, None] + np.arange(3)]))) if drv else 0.0)

    def _python_frame(self, w: World, tp, tc, target, wr, stats, i: int = 0) -> int:
        """The frame's substeps one Python call each (what :func:`replay.sim.engine.mujoco_c.c_loop.frame_substeps`
        does compiled); returns the index into :data:`WARNINGS` of a warning raised (stopped there), else -1."""
        m, d, lay, drv = w.m, w.d, self.layout, w.drive
        S = self.cfg.substeps
        interp = bool(self.cfg.wrist_substep_interp)
        qpos, qvel, xipos, xfrc, af = d.qpos, d.qvel, d.xipos, d.xfrc_applied, d.actuator_force
        for j in range(S):
            mujoco.mj_kinematics(m, d)
            wrist.apply_substep(qpos, qvel, xipos, xfrc, af, lay.hand_qadr, lay.hand_vadr, lay.root,
                                lay.hand_bodies, self.body_mass, self.par, tp, tc, (j + 1) / S, interp, wr, stats)
            if drv is not None:
                finger_drive.quat_drive(qpos, qvel, drv.qadr, drv.vadr, target, drv.kp, drv.kd, drv.effort,
                                        d.qfrc_applied)
            if self.recorder is not None:
                self.recorder(i, d)
            mujoco.mj_step(m, d)
            raised = np.flatnonzero(w.warn[_WARN_IDS] > w.warn_base)
            if raised.size:
                return int(raised[0])
        return -1

    def _c_frame(self, w: World, tp, tc, target, wr, stats) -> int:
        """The frame's substeps in :func:`replay.sim.engine.mujoco_c.c_loop.frame_substeps` (returns as :meth:`_python_frame`)."""
        lay, drv, d = self.layout, w.drive, w.d
        z2, z1 = np.zeros((0, 3)), np.zeros(0, np.int64)
        return int(c_loop_mod.frame_substeps(
            w.m._address, d._address, self.cfg.substeps, bool(self.cfg.wrist_substep_interp),
            d.qpos, d.qvel, d.xipos, d.xfrc_applied, d.actuator_force, lay.hand_qadr, lay.hand_vadr, lay.root,
            lay.hand_bodies, self.body_mass, self.par, tp, tc, wr, stats, drv is not None,
            drv.qadr if drv else z1, drv.vadr if drv else z1, target if drv else np.zeros((0, 4)),
            drv.kp if drv else z2, drv.kd if drv else z2, drv.effort if drv else z2, d.qfrc_applied,
            w.warn, _WARN_IDS, w.warn_base))

    # --- reading ---------------------------------------------------------------------
    def read_frame(self, i: int, force_min: float, max_linear: float, max_angular: float) -> FrameSignals:
        """Signals of world ``i`` after its last frame; marks it stopped when ``reason`` is set.

        Runaway: any recorded body's COM speed above ``max_linear`` m/s or angular
        speed above ``max_angular`` rad/s; non-finite ``qpos``/``qvel``. Contacts and
        their forces are those of the frame's last step (MuJoCo keeps them in ``d``).
        """
        w = self.worlds[i]
        m, d, lay = w.m, w.d, self.layout
        reason = w.reason
        if reason is None and not signals.all_finite(d.qpos, d.qvel):
            reason = "non-finite state"
        if reason is None:
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_comVel(m, d)
            fast = self._fast
            signals.fastest_body(d.cvel, d.xipos, d.subtree_com, self._rootid, lay.bodies, fast)
            if not fast[0] <= max_linear:
                reason = f"runaway linear velocity {fast[0]:.3g} m/s on body {int(lay.newton_of_mj_body[int(fast[1])])}"
            elif not fast[2] <= max_angular:
                reason = f"runaway angular velocity {fast[2]:.3g} rad/s on body {int(lay.newton_of_mj_body[int(fast[3])])}"
        b = lay.bodies
        sig = FrameSignals(body_pos=d.xpos[b], body_quat=d.xquat[b][:, [1, 2, 3, 0]], contacts=0,
                           contacts_force=0, reason=reason)
        n = d.ncon
        if n:
            c, cs = d.contact, self._contact_sums
            signals.hand_object_contacts(c.geom[:n], c.efc_address[:n], c.dim[:n], c.friction[:n], d.efc_force,
                                         self._hand_mask, self._obj_mask, self._pyramidal, force_min, cs)
            sig.contacts, sig.contacts_force = int(cs[0]), int(cs[1])
            sig.normal_force, sig.friction_force = float(cs[2]), float(cs[3])
        if reason is not None:
            w.alive = False
            w.reason = reason
        return sig

    def min_distance(self, i: int, geoms_a: np.ndarray, geoms_b: np.ndarray, distmax: float = 0.5) -> float:
        """Smallest signed distance, m, between any geom of ``geoms_a`` and any of ``geoms_b``
        (MuJoCo ``mj_geomDistance``; negative: penetration) in world ``i`` now; ``distmax``
        if none is closer."""
        w = self.worlds[i]
        mujoco.mj_kinematics(w.m, w.d)
        best = distmax
        for a in np.flatnonzero(geoms_a):
            for b in np.flatnonzero(geoms_b):
                best = min(best, mujoco.mj_geomDistance(w.m, w.d, int(a), int(b), distmax, None))
        return float(best)

    def stop(self, i: int) -> None:
        """Stop stepping world ``i`` (its protocol ended)."""
        self.worlds[i].alive = False

    def fingertip_geoms(self, fingertip_bodies) -> np.ndarray:
        """(ngeom,) bool mask of the geoms on the hand bodies ``fingertip_bodies`` (indices into the 16)."""
        return fingertip_geoms_of(self.scene.solver.mj_model, self.layout.hand_bodies, fingertip_bodies)

    def result_fields(self) -> dict:
        """No fields beyond the protocol's (the contract's :meth:`~replay.sim.engine.contract.Engine.result_fields`)."""
        return {}

    def sync_state(self, i: int, state) -> None:
        """Write world ``i``'s coordinates into a Newton :class:`newton.State` (joint_q,
        joint_qd, body_q, body_qd), through the solver's own MuJoCo-to-Newton conversion."""
        s = self.scene.solver
        s._update_newton_state(self.scene.model, state, self.worlds[i].d, state_prev=state)
