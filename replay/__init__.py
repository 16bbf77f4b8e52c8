"""grasp-replay: replay recorded human grasps with the manosim MANO hand in Newton.

Stages (each a script in ``scripts/``): fetch -> validate -> import -> replay -> render.
One package per stage, each importing only from itself and the layers below it
(``docs/architecture.md``; enforced by ``tests/test_structure.py``), bottom to top:

* base modules here: :mod:`~replay.config`, :mod:`~replay.errors`, :mod:`~replay.fileio`,
  :mod:`~replay.datasets`, :mod:`~replay.results`;
* :mod:`replay.data` (fetch, manifests, adapters, meshes), :mod:`replay.kinematics` (MANO,
  landmark IK, FK, the hand's layout), :mod:`replay.checks` (is the input sound),
  :mod:`replay.sim` (scene, drives, engines, silent-failure diagnostics),
  :mod:`replay.protocol` (plans, rollouts, measures, diagnosis), :mod:`replay.study`
  (many recordings, executors, sweeps), :mod:`replay.output` (report, render);
  :mod:`replay.cli` on top.

Conventions used throughout the package:

* World frame: Z up, metres, seconds, kilograms, radians.
* Quaternions are **xyzw** (Newton / warp order) unless a name ends in ``_wxyz``
  (MuJoCo order, also the order the datasets store them in).

Module paths of release 0.1 (``replay.rollout``, ``replay.engine.mjc``, ...) still import,
as the module at its new place, with a :class:`DeprecationWarning`, for one release
(:data:`MOVED`).
"""

import importlib
import importlib.abc
import importlib.util
import os
import sys
import warnings

__version__ = "0.2.0"

#: environment variables that name folders: the offline mirror, the staged data, the cache
PATH_ENV = ("REPLAY_MIRROR", "REPLAY_DATA", "REPLAY_CACHE")


def resolve_path_env(environ=os.environ) -> dict[str, str]:
    """Make a relative :data:`PATH_ENV` value absolute, against the current directory, in
    ``environ`` (``~`` expanded); returns what it changed.

    Runs once when ``replay`` is first imported, so the README's
    ``REPLAY_MIRROR=../shared/datasets`` means the folder beside the caller's directory
    in this process and in every process it starts (study workers, a test's script run in
    a temporary folder), whatever their working directory.
    """
    changed = {}
    for name in PATH_ENV:
        value = environ.get(name)
        if value and not os.path.isabs(os.path.expanduser(value)):
            changed[name] = environ[name] = os.path.abspath(os.path.expanduser(value))
    return changed


resolve_path_env()

#: 0.1 module path -> 0.2 module path (the layered layout); the old paths go in 0.3.
#: A path under a moved package (``replay.engine.mjc``) maps through its prefix.
MOVED = {
    "replay.console": "replay.study.console",
    "replay.isolate": "replay.data.isolate",
    "replay.hand_layout": "replay.kinematics.hand_layout",
    "replay.hand_assets": "replay.sim.hand_assets",
    "replay.input_checks": "replay.checks.input_checks",
    "replay.validation": "replay.checks",
    "replay.inputs": "replay.study.inputs",
    "replay.scene": "replay.sim.scene",
    "replay.world_builder": "replay.sim.world_builder",
    "replay.control": "replay.sim.control",
    "replay.diagnostics": "replay.sim.diagnostics",
    "replay.solver_view": "replay.sim.solver_view",
    "replay.engine": "replay.sim.engine",
    "replay.plan": "replay.protocol.plan",
    "replay.tracking": "replay.protocol.tracking",
    "replay.diagnosis": "replay.protocol.diagnosis",
    "replay.rollout": "replay.protocol.rollout",
    "replay.prepare": "replay.study.prepare",
    "replay.study_job": "replay.study.job",
    "replay.jobs_ray": "replay.study.ray_pool",
    "replay.jobs": "replay.study.pool",
    "replay.sweep": "replay.study.sweep",
    "replay.report": "replay.output.report",
    "replay.render": "replay.output.render",
    # 0.2's engine modules, one subpackage per engine since issue 28 (replay.sim.engine.steel is now
    # the Steel package: SteelBatch is at replay.sim.engine.steel.steel)
    "replay.sim.engine.mjc": "replay.sim.engine.mujoco_c.mjc",
    "replay.sim.engine.c_loop": "replay.sim.engine.mujoco_c.c_loop",
    "replay.sim.engine.warp_batch": "replay.sim.engine.mjwarp.warp_batch",
    "replay.sim.engine.warp_buffers": "replay.sim.engine.mjwarp.warp_buffers",
    "replay.sim.engine.warp_kernels": "replay.sim.engine.mjwarp.warp_kernels",
    "replay.sim.engine.warp_worlds": "replay.sim.engine.mjwarp.warp_worlds",
    "replay.sim.engine.newton_step": "replay.sim.engine.newton_ref.newton_step",
    "replay.sim.engine.steel_drive": "replay.sim.engine.steel.steel_drive",
    "replay.sim.engine.steel_signals": "replay.sim.engine.steel.steel_signals",
    "replay.sim.steel_scene": "replay.sim.engine.steel.steel_scene",
}


def moved_to(name: str) -> str | None:
    """The 0.2 path of 0.1 module path ``name`` (``replay.validation.object_frame`` ->
    ``replay.checks.object_frame``), or None when ``name`` did not move."""
    for old in sorted(MOVED, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return MOVED[old] + name[len(old):]
    return None


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves a 0.1 module path to the module at its 0.2 place (the same module
    object, so no code is loaded twice), warning once per path."""

    def find_spec(self, fullname, path=None, target=None):
        new = moved_to(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = moved_to(spec.name)
        warnings.warn(f"{spec.name} moved to {new} (replay 0.2's layered layout, docs/architecture.md); "
                      "the old path goes in 0.3", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module):
        """Nothing to run: the module was imported at its new place."""


if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _MovedModuleFinder())
