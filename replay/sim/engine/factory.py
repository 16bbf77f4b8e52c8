"""The one place that knows the engine classes (one per :class:`replay.results.engine_choice.EngineChoice`); callers
ask these, never an engine's type (``tests/test_structure.py``)."""

from __future__ import annotations

from replay.results.engine_choice import EngineChoice
from replay.sim.engine.contract import Capabilities, Engine


def _mujoco_c() -> type:
    from replay.sim.engine.mujoco_c.mjc import MjcBatch

    return MjcBatch


def _mujoco_warp() -> type:
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    return WarpBatch


def _newton() -> type:
    from replay.sim.engine.newton_ref.newton_step import NewtonStepBatch

    return NewtonStepBatch


def _steel() -> type:
    from replay.sim.engine.steel.steel import SteelBatch

    return SteelBatch


#: the class of each engine choice, imported when chosen (mujoco-warp and Steel load Warp kernels)
ENGINES = {
    EngineChoice.MUJOCO_C: _mujoco_c,
    EngineChoice.MUJOCO_WARP: _mujoco_warp,
    EngineChoice.NEWTON: _newton,
    EngineChoice.STEEL: _steel,
}


def engine_class(cfg) -> type:
    return ENGINES[cfg.engine]()


def capabilities_of(cfg) -> Capabilities:
    return engine_class(cfg).capabilities


def build_engine_scene(spec, cfg):
    """The scene of ``spec`` for ``cfg``'s engine. Raises DataError, SceneError, ReadbackError."""
    from replay.sim.physics import refuse_unsupported

    refuse_unsupported(cfg)
    if cfg.engine is EngineChoice.STEEL:
        from replay.sim.engine.steel.steel_scene import build_steel_scene

        return build_steel_scene(spec, cfg)
    from replay.sim.scene import build_scene

    return build_scene(spec, cfg)


def engine_for_scene(scene, variants: list, threads: int = 1, **options) -> Engine:
    """The engine of ``scene.config``, one world per variant; ``threads`` (MuJoCo C), ``options`` (engine keywords).
    Raises EngineError, ValueError: the engine cannot hold these variants; AblationMaskError: MuJoCo C cannot single
    out hand-object pairs by collision bits."""
    return engine_class(scene.config)(scene, variants, threads=threads, **options)
