"""N worlds of one replay scene on mujoco-warp, stepped in one launch per kernel (docs/gpu.md, "Many worlds per
launch"). Positions m, world Z up; MuJoCo quaternions wxyz, Newton's and the returned poses xyzw; state float32."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import mujoco_warp
import numpy as np
import warp as wp

from replay.errors import EngineError
from replay.results.engine_choice import EngineChoice
from replay.sim import physics
from replay.sim.engine.contract import Capabilities, Engine, FrameSignals
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.mjwarp.warp_buffers import park_qpos, warp_buffers
from replay.sim.engine.mjwarp.warp_kernels import (
    S_ACT,
    S_FINITE,
    S_NACON,
    S_NEFC,
    S_NHO,
    S_NHOF,
    S_OVERFLOW,
    S_PEAK,
    S_VBODY,
    S_VMAX,
    S_WBODY,
    S_WMAX,
    count_contacts_kernel,
    finger_ctrl_kernel,
    fold_peak_kernel,
    hand_object_kernel,
    park_kernel,
    signals_kernel,
    wrist_kernel,
)
from replay.sim.engine.mjwarp.warp_worlds import (
    WarpWorld,
    build_worlds,
    read_back,
    set_effort_limits,
)
from replay.sim.engine.variants import Variant
from replay.sim.scene import make_solver

#: mujoco-warp ``OverflowType`` bits of dropped contacts or constraints (not the iteration limits)
OVERFLOW_DROPPED = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8)


class WarpBatch(Engine):
    """Worlds of one scene on mujoco-warp, all stepped by the same launches; ``scene`` of any engine is rebuilt N
    times on ``device`` (default: its model's), every variant with ``ablation == scene.ablation``; ``capacity``
    contacts per world (default ``scene.contact_capacity``); ``graph`` default on CUDA only; ``threads`` ignored.
    Raises EngineError: a variant's ablation differs, or a parameter did not reach mujoco-warp's model."""

    capabilities = Capabilities(
        "warp", worlds_per_scene=0, parameter_variants=True, ablation_by_variant=False, geom_distance=False
    )

    def __init__(
        self,
        scene,
        variants: list[Variant],
        *,
        threads: int = 1,
        device=None,
        capacity: int | None = None,
        graph: bool | None = None,
    ):
        super().__init__(scene, variants, threads=threads)
        if not variants:
            raise EngineError("WarpBatch needs at least one variant")
        if any(v.ablation != scene.ablation for v in variants):
            raise EngineError(
                "every world of a WarpBatch has the scene's ablation flag (contact and ablation "
                "worlds are separate launches: filters are compiled from the template world)"
            )
        cfg = self.cfg
        self.device = wp.get_device(device if device is not None else scene.model.device)
        self.mjw = mujoco_warp
        N = len(variants)
        cap = int(scene.contact_capacity if capacity is None else capacity)
        self.model, offsets = build_worlds(scene, variants, self.device)
        wcfg = dataclasses.replace(
            cfg, engine=EngineChoice.MUJOCO_WARP, device="cuda" if self.device.is_cuda else "cpu"
        )
        self.solver = make_solver(self.model, wcfg, cap, separate_worlds=True)
        self.m, self.d = self.solver.mjw_model, self.solver.mjw_data
        if int(self.d.nworld) != N:
            raise EngineError(f"mujoco-warp holds {self.d.nworld} worlds, expected {N}")
        self.m.opt.timestep.fill_(float(cfg.dt))
        ns = SimpleNamespace(
            solver=self.solver,
            model=self.model,
            hand_bodies=scene.hand_bodies,
            object_body=scene.object_body,
            hand_shapes=scene.hand_shapes,
            object_shapes=scene.object_shapes,
            hand_q_start=scene.hand_q_start,
        )
        self.layout = MjLayout.from_scene(ns)
        self.worlds = [WarpWorld(variant=v, capacity=cap, index=i, offsets=offsets[i]) for i, v in enumerate(variants)]
        set_effort_limits(self.m, self.worlds, layout=self.layout, scene=scene)
        read_back(self.m, self.solver, self.worlds, layout=self.layout, scene=scene)
        qpos0 = self._initial_state()
        self._buf = warp_buffers(
            scene, self.solver.mj_model, self.layout, park=park_qpos(qpos0, self.layout), nworld=N, device=self.device
        )
        self._live_host = np.ones(N, np.int32)
        self._force_min = float(cfg.contact_force_min)
        self._use_graph = self.device.is_cuda if graph is None else bool(graph)
        self._graph = None
        self._frames = 0
        self._host_sig = None
        self._host_poses = None
        self.nworld = N

    def _initial_state(self) -> np.ndarray:
        """Push Newton's model coordinates into every world once; returns world 0's (nq,) float32 qpos."""
        state0 = self.model.state()
        self.solver._update_mjc_data(self.d, self.model, state0)
        # set-up leaves forces of the template's force ranges: start from none, as a fresh MjData does
        self.d.actuator_force.zero_()
        return self.d.qpos.numpy()[0].copy()

    def close(self) -> None:
        self._graph = None

    def _launch_frame(self) -> None:
        """The device work of one control frame (captured as a graph on CUDA)."""
        m, d, N, lay, S = self.m, self.d, self.nworld, self.layout, self.cfg.substeps
        dev, b = self.device, self._buf
        interp = int(physics.wrist_interpolated(self.cfg))
        wp.launch(
            finger_ctrl_kernel,
            dim=(N, len(lay.finger_act)),
            inputs=[b.fq, b.fjoint, b.faxis, b.fact, b.qcj],
            outputs=[d.ctrl],
            device=dev,
        )
        ctx = getattr(self.solver, "_scoped_mujoco_warp_execution", None)
        with ctx() if ctx is not None else _null():
            for j in range(S):
                wp.launch(park_kernel, dim=N, inputs=[b.live, b.park], outputs=[d.qpos, d.qvel], device=dev)
                self.mjw.kinematics(m, d)
                wp.launch(
                    wrist_kernel,
                    dim=N,
                    inputs=[
                        d.qpos,
                        d.qvel,
                        d.xipos,
                        d.actuator_force,
                        b.tgt_prev,
                        b.tgt,
                        b.par,
                        b.hand_bodies,
                        b.hand_mass,
                        b.live,
                        lay.hand_qadr,
                        lay.hand_vadr,
                        lay.root,
                        wp.float64((j + 1) / S),
                        interp,
                    ],
                    outputs=[d.xfrc_applied, b.act],
                    device=dev,
                )
                self.mjw.step(m, d)
                wp.launch(
                    count_contacts_kernel,
                    dim=d.naconmax,
                    inputs=[d.nacon, d.contact.worldid],
                    outputs=[b.count],
                    device=dev,
                )
                wp.launch(fold_peak_kernel, dim=N, inputs=[b.count], outputs=[b.peak], device=dev)
            # signals of the frame's end state (contacts and forces are the last step's)
            self.mjw.kinematics(m, d)
            self.mjw.com_pos(m, d)
            self.mjw.com_vel(m, d)
        b.nho.zero_()
        b.nhof.zero_()
        wp.launch(
            hand_object_kernel,
            dim=d.naconmax,
            inputs=[
                d.nacon,
                d.contact.geom,
                d.contact.worldid,
                d.contact.dim,
                d.contact.efc_address,
                d.efc.force,
                b.hand_geoms,
                b.obj_geoms,
                b.pyramidal,
                wp.float64(self._force_min),
            ],
            outputs=[b.nho, b.nhof],
            device=dev,
        )
        wp.launch(
            signals_kernel,
            dim=N,
            inputs=[
                d.qpos,
                d.qvel,
                d.xpos,
                d.xquat,
                d.xipos,
                d.cvel,
                d.subtree_com,
                b.rootid,
                b.bodies,
                b.nho,
                b.nhof,
                d.overflow,
                d.nacon,
                d.nefc,
                b.peak,
                d.actuator_force,
                b.act,
            ],
            outputs=[b.sig, b.poses],
            device=dev,
        )

    def step_frame(self, finger_quat: np.ndarray, tgt_prev: np.ndarray, tgt: np.ndarray) -> None:
        """Advance every world ``config.substeps`` steps without a host round trip: ``finger_quat`` (N, 15, 4) xyzw,
        ``tgt_prev``, ``tgt`` (N, 16) wrist rows. Warp and mujoco-warp exceptions propagate."""
        live = np.array([1 if w.alive else 0 for w in self.worlds], np.int32)
        if not np.array_equal(live, self._live_host):
            self._buf.live.assign(live)
            self._live_host = live
        self._buf.fq.assign(np.ascontiguousarray(finger_quat, dtype=np.float64))
        self._buf.tgt_prev.assign(np.ascontiguousarray(tgt_prev, dtype=np.float64))
        self._buf.tgt.assign(np.ascontiguousarray(tgt, dtype=np.float64))
        if not self._use_graph:
            self._launch_frame()
        elif self._graph is None and self._frames == 0:
            self._launch_frame()  # first frame eagerly: every module is loaded before capture
        else:
            if self._graph is None:
                # modules loaded by the eager first frame; Warp's default would compile unrelated kernels
                with wp.ScopedCapture(device=self.device, force_module_load=False) as cap:
                    self._launch_frame()
                self._graph = cap.graph
            wp.capture_launch(self._graph)
        self._frames += 1
        self._host_sig = self._buf.sig.numpy()
        self._host_poses = self._buf.poses.numpy()
        for i, w in enumerate(self.worlds):
            if w.alive:
                w.peak_contacts = int(self._host_sig[i, S_PEAK])
                w.act_max = float(self._host_sig[i, S_ACT])

    # --- reading ---------------------------------------------------------------------
    def read_frame(self, i: int, *, force_min: float, max_linear: float, max_angular: float) -> FrameSignals:
        """Signals of world ``i`` after the last frame; stopped when a reason is found: dropped contacts or constraints
        (its overflow bits or a full pool), over ``capacity`` contacts, non-finite ``qpos``/``qvel``, a body's speed
        above ``max_linear`` m/s or ``max_angular`` rad/s.

        Raises:
            ValueError: ``force_min`` differs from the one the kernels use."""
        if force_min != self._force_min:
            raise ValueError(f"force_min {force_min} differs from the batch's contact_force_min {self._force_min}")
        w = self.worlds[i]
        s = self._host_sig[i]
        lay = self.layout
        reason = w.reason
        bits = int(s[S_OVERFLOW]) & OVERFLOW_DROPPED
        if reason is None and bits:
            reason = (
                f"mujoco-warp overflow bits {bits:#x} (contacts or constraints dropped; {int(s[S_NACON])} "
                f"contacts in the pool of {self.d.naconmax}, {int(s[S_NEFC])} constraint rows of {self.d.njmax})"
            )
        if reason is None and int(s[S_PEAK]) > w.capacity:
            reason = f"contact overflow: {int(s[S_PEAK])} contacts exceed the capacity {w.capacity}"
        if reason is None and not s[S_FINITE] > 0:
            reason = "non-finite state"
        if reason is None:
            if not s[S_VMAX] <= max_linear:
                reason = (
                    f"runaway linear velocity {s[S_VMAX]:.3g} m/s on body {int(lay.newton_of_mj_body[int(s[S_VBODY])])}"
                )
            elif not s[S_WMAX] <= max_angular:
                reason = (
                    f"runaway angular velocity {s[S_WMAX]:.3g} rad/s on body "
                    f"{int(lay.newton_of_mj_body[int(s[S_WBODY])])}"
                )
        p = self._host_poses[i]
        sig = FrameSignals(
            body_pos=p[:, :3].astype(float),
            body_quat=p[:, 3:7].astype(float),
            contacts=int(s[S_NHO]),
            contacts_force=int(s[S_NHOF]),
            reason=reason,
            # the contact force sums are not reduced on the device yet: unknown, not zero
            normal_force=float("nan"),
            friction_force=float("nan"),
        )
        if reason is not None:
            w.alive = False
            w.reason = reason
        return sig


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False
