"""A worker's physics imports, once per process, with the garbage collector paused and the survivors frozen
(``gc.freeze``) so no later collection walks them."""

from __future__ import annotations

import gc
import importlib

#: what a study worker imports before its first job
PHYSICS_MODULES = ("replay.study.job", "replay.sim.engine", "replay.protocol.rollout")

_done = False


def import_physics() -> None:
    """Import :data:`PHYSICS_MODULES` with the collector paused, then freeze; once per process (a second freeze
    would make the jobs' objects in between permanent). Import errors propagate."""
    global _done
    if _done:
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name in PHYSICS_MODULES:
            importlib.import_module(name)
        # Newton loads its solvers lazily and SolverMuJoCo imports mujoco-warp in its first constructor
        solvers = importlib.import_module("newton.solvers")
        solvers.SolverMuJoCo.import_mujoco()
    finally:
        if was_enabled:
            gc.enable()
    gc.freeze()
    _done = True


__all__ = ["PHYSICS_MODULES", "import_physics"]
