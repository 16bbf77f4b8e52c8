"""grasp-replay: replay recorded human grasps with the manosim MANO hand in Newton. Users import :mod:`replay.api`;
other paths are internal (layers: ``docs/architecture.md``). Importing has no side effects. World Z up, m, s, kg,
rad; quaternions xyzw (Newton) unless a name ends in ``_wxyz`` (MuJoCo, the datasets' files)."""

import os

__version__ = "0.2.0"

#: environment variables that name folders: the offline mirror, the staged data, the cache
PATH_ENV = ("REPLAY_MIRROR", "REPLAY_DATA", "REPLAY_CACHE")


def resolve_path_env(environ=None) -> dict[str, str]:
    """Make a relative :data:`PATH_ENV` value in ``environ`` (default ``os.environ``) absolute against the current
    directory; returns what it changed. Called by every command, never on import."""
    environ = os.environ if environ is None else environ
    changed = {}
    for name in PATH_ENV:
        value = environ.get(name)
        if value and not os.path.isabs(os.path.expanduser(value)):
            changed[name] = environ[name] = os.path.abspath(os.path.expanduser(value))
    return changed
