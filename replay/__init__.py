"""grasp-replay: replay recorded human grasps with the manosim MANO hand in Newton.

Stages (each a command in :mod:`replay.commands`, also ``scripts/*.py``): fetch -> validate ->
import -> replay -> render. One package per stage, each importing only from itself and the
layers below it (``docs/architecture.md``; enforced by ``tests/test_structure.py``), bottom to top:

* base modules here: :mod:`~replay.config`, :mod:`~replay.errors`, :mod:`~replay.fileio`,
  :mod:`~replay.datasets`, :mod:`~replay.results`;
* :mod:`replay.data` (fetch, manifests, adapters, meshes), :mod:`replay.kinematics` (MANO,
  landmark IK, FK, the hand's layout), :mod:`replay.checks` (is the input sound),
  :mod:`replay.sim` (scene, drives, engines, silent-failure diagnostics),
  :mod:`replay.protocol` (plans, rollouts, measures, diagnosis), :mod:`replay.study`
  (many recordings, executors, sweeps), :mod:`replay.output` (report, render);
  :mod:`replay.cli` and :mod:`replay.commands` on top.

**What users import** is declared in one place, :mod:`replay.api` (its ``__all__``); every
other module path is internal and may move between 0.x releases without notice.

Importing ``replay`` has no side effects: it does not touch ``sys.meta_path`` or
``os.environ``. The commands call :func:`resolve_path_env` once at start.

Conventions used throughout the package:

* World frame: Z up, metres, seconds, kilograms, radians.
* Quaternions are **xyzw** (Newton / warp order) unless a name ends in ``_wxyz``
  (MuJoCo order, also the order the datasets store them in).
"""

import os

__version__ = "0.2.0"

#: environment variables that name folders: the offline mirror, the staged data, the cache
PATH_ENV = ("REPLAY_MIRROR", "REPLAY_DATA", "REPLAY_CACHE")


def resolve_path_env(environ=None) -> dict[str, str]:
    """Make a relative :data:`PATH_ENV` value absolute, against the current directory, in
    ``environ`` (default ``os.environ``; ``~`` expanded); returns what it changed.

    Called once by every command (:func:`replay.cli.run`) and by the test suite's
    ``conftest.py``, never on import, so the README's ``REPLAY_MIRROR=../shared/datasets``
    means the folder beside the caller's directory in that process and in every process it
    starts (study workers, a test's script run in a temporary folder), whatever their
    working directory.
    """
    environ = os.environ if environ is None else environ
    changed = {}
    for name in PATH_ENV:
        value = environ.get(name)
        if value and not os.path.isabs(os.path.expanduser(value)):
            changed[name] = environ[name] = os.path.abspath(os.path.expanduser(value))
    return changed
