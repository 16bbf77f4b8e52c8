"""A worker's physics imports (Newton, Warp, mujoco-warp, MuJoCo, SciPy, trimesh), once per process, with the cyclic
garbage collector paused (``gc.disable``) and the survivors frozen (``gc.freeze``) so no later collection walks
them; no result depends on it (``benchmarks/compare_studies.py``)."""

from __future__ import annotations

import gc
import importlib

#: what a study worker imports before its first job (the job module and the physics it calls;
#: then ``newton.solvers.SolverMuJoCo.import_mujoco()``, Newton's own import of both MuJoCo backends)
PHYSICS_MODULES = ("replay.study.job", "replay.sim.engine", "replay.protocol.rollout")

_done = False


def import_physics() -> None:
    """Import :data:`PHYSICS_MODULES` with the collector paused, then freeze (module doc).

    Once per process: later calls return at once (a second ``gc.freeze`` would make the
    objects of the jobs in between permanent). The collector is enabled again even if an
    import raises (the error propagates: the job reports it).
    """
    global _done
    if _done:
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name in PHYSICS_MODULES:
            importlib.import_module(name)
        # Newton loads its solvers lazily (``newton.solvers.__getattr__``), and SolverMuJoCo imports
        # mujoco-warp in its first constructor: both here, with the collector still paused
        solvers = importlib.import_module("newton.solvers")
        solvers.SolverMuJoCo.import_mujoco()
    finally:
        if was_enabled:
            gc.enable()
    gc.freeze()
    _done = True


__all__ = ["PHYSICS_MODULES", "import_physics"]
