"""Newton version guard.

The patches reproduce MuJoCo semantics by correcting what Newton 1.8.0's MJCF
importer (``newton/_src/utils/import_mjcf.py``) does; they read private parts of
that importer and of ``ModelBuilder``. On any other Newton version the fixes may be
wrong or unnecessary, so :func:`check_newton_version` refuses to run unless the
caller opts in explicitly.
"""

from __future__ import annotations

import warnings

from .errors import NewtonVersionError

SUPPORTED_NEWTON_VERSION = "1.8.0"


def installed_newton_version() -> str:
    """Return ``newton.__version__`` of the installed package."""
    import newton

    return str(newton.__version__)


def check_newton_version(allow_untested_newton: bool = False) -> str:
    """Return the installed Newton version; raise if it is not 1.8.0.

    Args:
        allow_untested_newton: run anyway on another version (a ``UserWarning`` is issued).

    Raises:
        NewtonVersionError: the version differs and ``allow_untested_newton`` is False.
    """
    version = installed_newton_version()
    if version != SUPPORTED_NEWTON_VERSION:
        message = (
            f"importer_patches was written and tested for newton=={SUPPORTED_NEWTON_VERSION}, "
            f"but newton=={version} is installed. Its MJCF importer may already fix (or "
            "differently break) what these patches correct. Install newton[sim]=="
            f"{SUPPORTED_NEWTON_VERSION}, or pass allow_untested_newton=True to run anyway "
            "and check the ImportReport against MuJoCo (python -m importer_patches.inspect_import "
            "MJCF --compare-mujoco)."
        )
        if not allow_untested_newton:
            raise NewtonVersionError(message)
        warnings.warn(message, UserWarning, stacklevel=3)
    return version
