"""The Steel engine: one world stepped by Newton 1.8.0's ``SolverSteel`` (docs/engine.md, "SolverSteel"): the wrist
wrench in ``Control.joint_f`` (free joint ``joint_qd`` is ``(v_com, omega)``, world), the quaternion finger drive,
Newton's collision pipeline. A dropped row or contact stops the world as ``unstable``."""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np

from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.sim import physics
from replay.sim import silent_failures as diagnostics
from replay.sim.control import HandController
from replay.sim.engine import wrist
from replay.sim.engine.contract import Capabilities, Engine, FrameSignals
from replay.sim.engine.steel import steel_signals
from replay.sim.engine.steel.steel_drive import SteelFingerDrive
from replay.sim.engine.world import WorldStatus

#: the engine's name in every rollout's ``engine`` field
ENGINE = "steel"


@dataclass(frozen=True)
class SteelLayout:
    """Where the replay's pieces are in the Newton model: ``hand_bodies`` (16,), ``object_body``, ``hand_geoms`` /
    ``object_geoms`` (shape_count,) bool, ``shape_body`` (shape_count,) (-1: static)."""

    hand_bodies: np.ndarray
    object_body: int
    hand_geoms: np.ndarray
    object_geoms: np.ndarray
    shape_body: np.ndarray

    @classmethod
    def from_scene(cls, scene) -> SteelLayout:
        n = int(scene.model.shape_count)
        hand = np.zeros(n, bool)
        hand[np.asarray(scene.hand_shapes, int)] = True
        obj = np.zeros(n, bool)
        obj[np.asarray(scene.object_shapes, int)] = True
        return cls(
            np.asarray(scene.hand_bodies, np.int64),
            int(scene.object_body),
            hand,
            obj,
            scene.model.shape_body.numpy().astype(np.int64),
        )


def finger_drive_of(scene) -> SteelFingerDrive:
    """The quaternion drive of ``scene``'s fingers with the model's per-DOF ``joint_target_ke`` (N·m/rad),
    ``joint_target_kd`` (N·m·s/rad) and ``joint_effort_limit`` (N·m). Raises ValueError."""
    m = scene.model
    fd = slice(scene.hand_qd_start + MANOSIM_HAND.finger_dof_start, scene.hand_qd_start + MANOSIM_HAND.dofs)
    return SteelFingerDrive.from_gains(
        scene.hand_q_start,
        scene.hand_qd_start,
        kp=m.joint_target_ke.numpy()[fd],
        kd=m.joint_target_kd.numpy()[fd],
        effort=m.joint_effort_limit.numpy()[fd],
        device=m.device,
    )


def make_pipeline(model, config):
    """Newton's collision pipeline for ``model``, ``config.steel.contact_max`` contacts (None: Newton's estimate)."""
    pipe = newton.CollisionPipeline(model, rigid_contact_max=config.steel.contact_max)
    return pipe, pipe.contacts()


class SteelBatch(Engine):
    """One world of a Steel ``scene`` (ablation built in as filter pairs); of its one variant only the wrist
    perturbation is honoured; ``threads`` ignored. Raises ValueError: :meth:`Engine.one_world`."""

    capabilities = Capabilities(
        ENGINE, worlds_per_scene=1, parameter_variants=False, ablation_by_variant=False, geom_distance=False
    )

    def __init__(self, scene, variants, *, threads: int = 1):
        super().__init__(scene, variants, threads=threads)
        v = self.one_world(scene, variants)
        self.model, self.solver = scene.model, scene.solver
        self.pipeline, self.contacts = make_pipeline(self.model, self.cfg)
        self.obs = self.solver.observables([self.solver.ObservableKind.CONTACT_F], contacts=self.contacts)
        self.s0, self.s1 = self.model.state(), self.model.state()
        newton.eval_fk(self.model, self.s0.joint_q, self.s0.joint_qd, self.s0)
        self.control = self.model.control()
        self.ctl = HandController(scene, self.control)
        self.drive = finger_drive_of(scene)
        self.layout = SteelLayout.from_scene(scene)
        self._mu = self.model.shape_material_mu.numpy().astype(float) * float(self.solver.contact_friction_scale)
        self.worlds = [
            WorldStatus(variant=v, capacity=int(self.contacts.rigid_contact_max), readback={"engine": ENGINE})
        ]

    def substep(self, row: np.ndarray) -> None:
        """One physics step toward the wrist target ``row`` (:mod:`replay.sim.engine.wrist` layout, wxyz)."""
        q = row[wrist.T_QUAT : wrist.T_QUAT + 4][[1, 2, 3, 0]]
        self.ctl.apply_wrist(self.s0, row[:3], q, vel=row[7:10], omega=row[10:13], acc=row[13:16])
        self.drive.apply(self.s0, self.control)
        self.pipeline.collide(self.s0, self.contacts)
        self.solver.step(self.s0, self.s1, self.control, self.contacts, self.cfg.dt, observables=self.obs)
        self.s0, self.s1 = self.s1, self.s0

    def step_frame(self, finger_quat, tgt_prev, tgt) -> None:
        """One control frame of world 0: fingers (N, 15, 4) xyzw, wrist rows (N, 16) of the previous and this frame."""
        w = self.worlds[0]
        if not w.alive:
            return
        S, interp = self.cfg.substeps, physics.wrist_interpolated(self.cfg)
        self.drive.set_targets(finger_quat[0])
        row = np.empty(wrist.T_SIZE)
        for j in range(S):
            wrist.substep_target(tgt_prev[0], tgt[0], (j + 1) / S, interp, row)
            self.substep(row)
        wm = self.solver.constraint_row_watermarks()  # one device read per frame
        w.peak_contacts = max(w.peak_contacts, int(wm["contact_high_water"]))
        w.reason = steel_signals.row_problem(self.solver, self.contacts, wm)
        w.act_max = max(w.act_max, self.drive.max_torque())

    def contact_signals(self, force_min: float) -> tuple[int, int, float, float, float]:
        c = self.contacts
        lay = self.layout
        return steel_signals.hand_object_signals(
            int(c.rigid_contact_count.numpy()[0]),
            c.rigid_contact_shape0.numpy(),
            c.rigid_contact_shape1.numpy(),
            normal=c.rigid_contact_normal.numpy(),
            force=self.obs.contact_f.numpy(),
            hand_shapes=lay.hand_geoms,
            object_shapes=lay.object_geoms,
            shape_mu=self._mu,
            force_min=force_min,
        )

    def read_frame(self, i, *, force_min, max_linear, max_angular) -> FrameSignals:
        """Body poses (17 bodies, xyzw) and hand-object contact signals of world 0 after the frame."""
        w = self.worlds[0]
        reason = w.reason or diagnostics.state_problem(self.s0, max_linear, max_angular)
        bq = self.s0.body_q.numpy()
        bodies = np.append(self.layout.hand_bodies, self.layout.object_body)
        n, nf, fsum, mfsum, _ = self.contact_signals(force_min)
        if reason:
            w.alive, w.reason = False, reason
        return FrameSignals(
            bq[bodies, :3].astype(float),
            bq[bodies, 3:7].astype(float),
            n,
            nf,
            reason,
            normal_force=fsum,
            friction_force=mfsum,
        )

    def fingertip_geoms(self, fingertip_bodies) -> np.ndarray:
        """(shape_count,) mask of the shapes on the hand bodies ``fingertip_bodies`` (indices into the 16)."""
        return np.isin(self.layout.shape_body, self.layout.hand_bodies[list(fingertip_bodies)])

    def result_fields(self) -> dict:
        """``solver_backend`` and this rollout's row budgets and high-water marks (``steel_rows``)."""
        wm = self.solver.constraint_row_watermarks()
        return {
            "solver_backend": "steel",
            "steel_rows": dict(
                articulation_budget=int(self.solver.articulation_constraint_max),
                free_body_budget=int(self.solver.free_body_constraint_max),
                contact_buffer=int(self.contacts.rigid_contact_max),
                probe=self.scene.readback.get("steel_probe_rows"),
                rollout={k: int(v) for k, v in wm.items()},
            ),
        }


__all__ = ["ENGINE", "SteelBatch", "SteelLayout", "finger_drive_of", "make_pipeline"]
