"""The reference engine (``engine = "newton"``): one world through ``SolverMuJoCo.step`` every physics step; slow, what
the fast engines are checked against."""

from __future__ import annotations

import mujoco
import newton
import numpy as np

from replay.sim import physics
from replay.sim import silent_failures as diagnostics
from replay.sim.control import HandController, finger_actuator_force_max
from replay.sim.engine import signals, wrist
from replay.sim.engine.contract import Capabilities, Engine, FrameSignals, geom_distance
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.world import WorldStatus


class NewtonStepBatch(Engine):
    """One world of ``scene`` (ablation built in); of its one variant only the wrist perturbation is honoured.
    Raises ValueError: :meth:`Engine.one_world`."""

    capabilities = Capabilities(
        "newton", worlds_per_scene=1, parameter_variants=False, ablation_by_variant=False, geom_distance=True
    )

    def __init__(self, scene, variants, *, threads: int = 1):
        super().__init__(scene, variants, threads=threads)
        v = self.one_world(scene, variants)
        self.model, self.solver = scene.model, scene.solver
        self.s0, self.s1 = self.model.state(), self.model.state()
        # body poses from the coordinates: the first wrist wrench reads them (Model.state() has the import's)
        newton.eval_fk(self.model, self.s0.joint_q, self.s0.joint_qd, self.s0)
        self.control = self.model.control()
        self.ctl = HandController(scene, self.control)
        self.mon = diagnostics.OverflowMonitor(self.solver, scene.contact_capacity)
        self.worlds = [WorldStatus(variant=v, capacity=scene.contact_capacity)]
        self.layout = MjLayout.from_scene(scene)
        cpu = getattr(self.solver, "use_mujoco_cpu", False)
        self._mj = (self.solver.mj_model, self.solver.mj_data) if cpu else None

    def step_frame(self, finger_quat, tgt_prev, tgt) -> None:
        w = self.worlds[0]
        if not w.alive:
            return
        S, interp = self.cfg.substeps, physics.wrist_interpolated(self.cfg)
        tp, tc = tgt_prev[0], tgt[0]
        self.ctl.set_finger_targets(finger_quat[0])
        row = np.empty(wrist.T_SIZE)
        try:
            for j in range(S):
                wrist.substep_target(tp, tc, (j + 1) / S, interp, row)
                q = row[wrist.T_QUAT : wrist.T_QUAT + 4][[1, 2, 3, 0]]
                self.ctl.apply_wrist(self.s0, row[:3], q, vel=row[7:10], omega=row[10:13], acc=row[13:16])
                self.solver.step(self.s0, self.s1, self.control, None, self.cfg.dt, observables=self.mon.observables)
                self.s0, self.s1 = self.s1, self.s0
                w.reason = self.mon.check()
                if w.reason:
                    break
                w.act_max = max(w.act_max, finger_actuator_force_max(self.scene))
        except mujoco.FatalError as e:  # MuJoCo's own report (mju_error); any other exception is a code error
            w.reason = f"solver exception: {type(e).__name__}: {e}"
        w.peak_contacts = int(self.mon.peak)

    def read_frame(self, i, *, force_min, max_linear, max_angular) -> FrameSignals:
        w = self.worlds[0]
        reason = w.reason or diagnostics.state_problem(self.s0, max_linear, max_angular)
        bq = self.s0.body_q.numpy()
        bodies = list(self.scene.hand_bodies) + [self.scene.object_body]
        n, nf = diagnostics.hand_object_contacts(
            self.solver, self.scene.hand_shapes, self.scene.object_shapes, force_min=force_min
        )
        if reason:
            w.alive, w.reason = False, reason
        sig = FrameSignals(bq[bodies, :3].astype(float), bq[bodies, 3:7].astype(float), n, nf, reason)
        if self._mj is not None:  # forces from MuJoCo C's arrays, as the direct engine reads them
            m, d = self._mj
            cs, lay = np.zeros(4), self.layout
            pyramidal = int(m.opt.cone) == int(mujoco.mjtCone.mjCONE_PYRAMIDAL)
            signals.data_contacts(d, lay.hand_geoms, lay.object_geoms, pyramidal=pyramidal, force_min=force_min, out=cs)
            sig.normal_force, sig.friction_force = float(cs[2]), float(cs[3])
        else:
            sig.normal_force = sig.friction_force = float("nan")
        return sig

    def min_distance(self, i, geoms_a, geoms_b, *, distmax: float = 0.5) -> float:
        """As :meth:`replay.sim.engine.mujoco_c.mjc.MjcBatch.min_distance` (CPU solver only; NaN on CUDA)."""
        if self._mj is None:
            return float("nan")

        m, d = self._mj
        self.solver._update_mjc_data(d, self.model, self.s0)
        mujoco.mj_kinematics(m, d)
        return geom_distance(m, d, geoms_a=geoms_a, geoms_b=geoms_b, distmax=distmax)
