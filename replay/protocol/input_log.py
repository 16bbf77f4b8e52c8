"""One world re-run on MuJoCo C with every input recorded before each ``mj_step`` (``ctrl``, ``xfrc_applied``,
``qfrc_applied``), its compiled ``MjModel`` and initial state: ``mj_step`` alone replays it bit for bit
(``benchmarks/engine.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from replay.config import ReplayConfig
from replay.data.types import Recording
from replay.errors import AblationMaskError, UsageError
from replay.protocol.measures import Trace
from replay.protocol.plan import Plan, hold_end, lift_start
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
    """A plain-MuJoCo replay's inputs: ``ctrl`` (S, nu) rad per physics step, ``xfrc_applied`` (S, nbody, 6) N then N·m
    world at each COM, ``qfrc_applied`` (S, nv) N or N·m, ``frame_steps`` (F,) per control frame, ``bodies`` (17,) ids
    of ``mano_body_0..15`` then the object, ``final_body_pos`` (17, 3) m float64."""

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
        end = hold_end(self.plan.phase)
        return {
            "lift_start": lift_start(self.plan.phase[: self.trace.done]),
            "judge": min(self.trace.done, end) - 1,
            "hold_end": end,
        }


def record_rollout(
    rec: Recording, coords: np.ndarray, mjcf: str | Path, *, cfg: ReplayConfig, variant: Variant, protocol: str = "lift"
) -> InputLog:
    """Re-run the world of ``variant`` on MuJoCo C recording its inputs (arguments as
    :func:`replay.protocol.rollout.run_rollouts`). Raises UsageError (the config does not step MuJoCo C directly),
    DataError (bad input)."""
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
