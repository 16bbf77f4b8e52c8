"""A worker's physics imports with Python's cyclic garbage collector paused, done once per process.

Importing the physics stack (Newton, Warp, mujoco-warp, which Newton's ``SolverMuJoCo``
constructor imports even on the MuJoCo C path, MuJoCo, SciPy, trimesh) creates about 1.1
million objects that live as long as the worker. While they are created, every full (oldest
generation) collection walks all of them: measured in-process on the 2-core dev machine,
``scripts/run_study.py --dataset grab --objects cubesmall,mug,stapler --workers 0`` spent 4.5 s
of its 20.7 s in the collector (``gc.callbacks``), almost all of it during those imports, and
10 of its 12 full collections happened there. :func:`import_physics` pauses the collector
(``gc.disable``) for the imports and then moves the survivors to the permanent generation
(``gc.freeze``, Python's documented way to keep long-lived startup objects out of later
collections), so no later collection walks them again. The reference counts free everything
as before; no result depends on when the collector runs (``benchmarks/compare_studies.py``
finds the 30-lift study identical field by field).
"""

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
