"""The one place that knows the engine classes: which engine a config runs, its scene, the engine.

:func:`make_engine` builds the scene of a :class:`replay.sim.scene_spec.SceneSpec` for the config's
backend and the engine on it; :func:`engine_for_scene` puts an engine on a scene already built;
:func:`capabilities_of` says what the config's engine supports before anything is built
(:class:`replay.sim.engine.contract.Capabilities`). Callers ask these, never the engine's type
(``tests/test_structure.py`` scans for ``isinstance`` / type-name / ``hasattr`` dispatch on engines).

Which engine (``config.solver_backend``, ``config.engine``, ``config.device``):

=====================  ==============================  ==========================================
backend / engine       device                          engine
=====================  ==============================  ==========================================
``steel``              any                             :class:`~replay.sim.engine.steel.steel.SteelBatch`
``direct``             ``cpu``                         :class:`~replay.sim.engine.mujoco_c.mjc.MjcBatch` (MuJoCo C)
``direct``             ``cuda``, ``warp-cpu``          :class:`~replay.sim.engine.mjwarp.warp_batch.WarpBatch`
``newton``             any                             :class:`~replay.sim.engine.newton_ref.newton_step.NewtonStepBatch`
=====================  ==============================  ==========================================
"""

from __future__ import annotations

from replay.sim.engine.contract import Capabilities, Engine

#: ``config.device`` values whose direct engine is mujoco-warp (:mod:`replay.sim.engine.mjwarp.warp_batch`)
WARP_DEVICES = ("cuda", "warp-cpu")


def engine_class(cfg) -> type:
    """The engine class ``cfg`` runs (module doc's table); mujoco-warp imported only when chosen."""
    if cfg.solver_backend == "steel":
        from replay.sim.engine.steel.steel import SteelBatch

        return SteelBatch
    if cfg.engine == "direct" and cfg.device in WARP_DEVICES:
        from replay.sim.engine.mjwarp.warp_batch import WarpBatch

        return WarpBatch
    if cfg.engine == "direct" and cfg.device == "cpu":
        from replay.sim.engine.mujoco_c.mjc import MjcBatch

        return MjcBatch
    from replay.sim.engine.newton_ref.newton_step import NewtonStepBatch

    return NewtonStepBatch


def capabilities_of(cfg) -> Capabilities:
    """What the engine of ``cfg`` supports (its class's ``capabilities``)."""
    return engine_class(cfg).capabilities


def build_engine_scene(spec, cfg):
    """The scene of ``spec`` for ``cfg``'s backend: :func:`replay.sim.engine.steel.steel_scene.build_steel_scene`
    for SolverSteel, else :func:`replay.sim.scene.build_scene`.

    Raises:
        as the builder: DataError, SceneError, ReadbackError.
    """
    from replay.sim.physics import refuse_unsupported

    refuse_unsupported(cfg)
    if cfg.solver_backend == "steel":
        from replay.sim.engine.steel.steel_scene import build_steel_scene

        return build_steel_scene(spec, cfg)
    from replay.sim.scene import build_scene

    return build_scene(spec, cfg)


def engine_for_scene(scene, variants: list, threads: int = 1, **options) -> Engine:
    """The engine of ``scene.config`` on the built ``scene``, one world per variant.

    Args:
        scene: a :class:`replay.sim.scene.Scene` built for the config's backend.
        variants: one :class:`replay.sim.engine.variants.Variant` per world.
        threads: threads stepping the worlds (MuJoCo C; the other engines ignore it).
        options: further keyword arguments of the engine class (e.g. MuJoCo C's ``c_loop``); none by default.

    Raises:
        EngineError, ValueError: the engine cannot hold these variants (see its class).
        AblationMaskError: MuJoC C cannot single out hand-object pairs by collision bits
            (``capabilities.ablation_by_variant``: build the ablation worlds a scene of their own).
    """
    return engine_class(scene.config)(scene, variants, threads=threads, **options)


def make_engine(spec, cfg, variants: list, threads: int = 1) -> Engine:
    """Build the scene of ``spec`` (:func:`build_engine_scene`) and the engine on it
    (:func:`engine_for_scene`); the scene is the engine's ``scene``."""
    return engine_for_scene(build_engine_scene(spec, cfg), variants, threads)
