"""One rollout re-run on the MuJoCo C engine with every input MuJoCo received recorded: ``ctrl`` (finger targets),
``xfrc_applied`` (the wrist wrench) and ``qfrc_applied`` (the quaternion finger drive) before every ``mj_step``, the
world's compiled ``MjModel`` (variant applied) and its state before the first step. Replaying them with ``mj_step``
alone gives the same trajectory bit for bit (``benchmarks/engine.py``). One world per re-run: world i of a batch steps
as a batch of one holding variant i."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from replay.config import ReplayConfig
from replay.data.types import Recording
from replay.errors import AblationMaskError, UsageError
from replay.protocol.measures import Trace
from replay.protocol.plan import PHASE_HOLD, PHASE_LIFT, Plan
from replay.protocol.protocols.base import protocol_named
from replay.protocol.rollout import build_replay_scene
from replay.protocol.step_plan import step_protocol
from replay.sim.engine.mujoco_c.mjc import MjcBatch
from replay.sim.engine.variants import Variant
from replay.sim.scene import config_uses_direct_engine

#: the state :func:`record_rollout` saves and a replay restores (MuJoCo ``mjtState``)
STATE_SPEC = mujoco.mjtState.mjSTATE_INTEGRATION


@dataclass
class InputLog:
    """Everything a plain-MuJoCo replay of one rollout needs, and what the rollout gave.

    Attributes:
        model: the world's compiled ``MjModel`` (variant applied). state0: (mj_stateSize(model, STATE_SPEC),) state
            before the first step.
        ctrl: (S, nu) ``d.ctrl`` before each of S physics steps, rad.
        xfrc_applied: (S, nbody, 6) force N then torque N·m, world frame, at each body's COM.
        qfrc_applied: (S, nv) N or N·m per DOF.
        frame_steps: (F,) physics steps of each control frame simulated (fewer where the world stopped).
        trace: the rollout's :class:`replay.protocol.measures.Trace`. plan: the plan stepped; scene: the built scene.
        bodies: (17,) MuJoCo body ids of ``mano_body_0..15`` then the object.
        hand_geoms, object_geoms: (ngeom,) bool masks. variant: the world's variant.
        final_body_pos: (17, 3) m, float64, the bodies' world positions after the last frame."""

    model: mujoco.MjModel
    state0: np.ndarray
    ctrl: np.ndarray
    xfrc_applied: np.ndarray
    qfrc_applied: np.ndarray
    frame_steps: np.ndarray
    trace: Trace
    plan: Plan
    scene: object
    bodies: np.ndarray
    hand_geoms: np.ndarray
    object_geoms: np.ndarray
    variant: Variant
    final_body_pos: np.ndarray | None = None

    def key_frames(self) -> dict:
        """``{"lift_start", "judge", "hold_end"}`` control frames as :func:`replay.protocol.measures.measure_world`
        picks them (None without a lift)."""
        phase = self.plan.phase
        lift = np.flatnonzero(phase[: self.trace.done] == PHASE_LIFT)
        hold = np.flatnonzero(phase == PHASE_HOLD)
        hold_end = int(hold[-1]) + 1 if hold.size else len(phase)
        return {
            "lift_start": int(lift[0]) - 1 if lift.size else None,
            "judge": min(self.trace.done, hold_end) - 1,
            "hold_end": hold_end,
        }


def record_rollout(
    rec: Recording, coords: np.ndarray, mjcf: str | Path, *, cfg: ReplayConfig, variant: Variant, protocol: str = "lift"
) -> InputLog:
    """Re-run one world of ``rec`` under ``protocol`` on the MuJoCo C engine, recording its inputs.

    Args:
        rec, coords, mjcf, cfg: as :func:`replay.protocol.rollout.run_rollouts`.
        variant: the world's :class:`Variant` (``Variant()`` the contact run, ``Variant(ablation=True)`` its ablation, a
            refine correction).
        protocol: a registered protocol's name (its config part applied).

    Raises:
        UsageError: the config does not step MuJoCo C directly (no bit-for-bit replay). DataError: bad input."""
    cfg = protocol_named(protocol).config(cfg)
    if not config_uses_direct_engine(cfg):
        raise UsageError(
            "config",
            f"engine {cfg.engine.value!r} is not MuJoCo C stepped directly: only engine mujoco-c rollouts "
            "export to plain MuJoCo",
        )
    plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg=cfg, protocol=protocol)
    try:
        batch = MjcBatch(scene, [variant])
    except AblationMaskError:  # as the study does: the ablation as a scene of its own, filter pairs built in
        plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg=cfg, ablation=variant.ablation, protocol=protocol)
        batch = MjcBatch(scene, [variant])
    w = batch.worlds[0]
    state0 = np.empty(mujoco.mj_stateSize(w.m, STATE_SPEC))
    mujoco.mj_getState(w.m, w.d, state0, STATE_SPEC)
    ctrl, xfrc, qfrc, marks = [], [], [], []

    def recorder(i: int, d: mujoco.MjData) -> None:
        ctrl.append(d.ctrl.copy())
        xfrc.append(d.xfrc_applied.copy())
        qfrc.append(d.qfrc_applied.copy())

    step_frame = batch.step_frame

    def counted(*args) -> None:
        step_frame(*args)
        marks.append(len(ctrl))

    batch.recorder, batch.step_frame = recorder, counted
    try:
        trace = step_protocol(plan, batch, cfg, spans=False)[0]  # frame by frame: the frames' marks above
    finally:
        batch.close()
    lay = batch.layout
    return InputLog(
        model=w.m,
        state0=state0,
        ctrl=np.asarray(ctrl).reshape(-1, w.m.nu),
        xfrc_applied=np.asarray(xfrc).reshape(-1, w.m.nbody, 6),
        qfrc_applied=np.asarray(qfrc).reshape(-1, w.m.nv),
        frame_steps=np.diff(np.asarray([0] + marks)).astype(np.int64),
        trace=trace,
        plan=plan,
        scene=scene,
        bodies=np.asarray(lay.bodies, np.int64),
        hand_geoms=np.asarray(lay.hand_geoms, bool),
        object_geoms=np.asarray(lay.object_geoms, bool),
        variant=variant,
        final_body_pos=w.d.xpos[lay.bodies].copy(),
    )
