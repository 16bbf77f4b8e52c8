"""Import the unmodified manosim MANO hand (and other MJCF) into Newton 1.8.0 as MuJoCo compiles it.

Public API:
    add_mjcf(builder, path, *, xform=None, patches=None, allow_untested_newton=False, **kwargs)
        -> ImportReport
    PATCHES: names of the switchable fixes (modules free_joint, dampratio,
        free_actuators, ball_actuators; each module's docstring cites the MuJoCo
        semantics it reproduces and what Newton 1.8.0 does instead).
    Errors: MJCFError, UnsupportedJointError, UnsupportedActuatorError, NewtonVersionError.
    Warning category: FreeJointActuatorWarning.
CLI: ``python -m importer_patches.inspect_import MJCF [--json] [--compare-mujoco]``.
"""

from .api import PATCHES, add_mjcf
from .errors import (
    FreeJointActuatorWarning,
    MJCFError,
    NewtonVersionError,
    UnsupportedActuatorError,
    UnsupportedJointError,
)
from .report import JOINT_Q_LAYOUT, ImportReport
from .version import SUPPORTED_NEWTON_VERSION

__all__ = [
    "JOINT_Q_LAYOUT",
    "PATCHES",
    "SUPPORTED_NEWTON_VERSION",
    "FreeJointActuatorWarning",
    "ImportReport",
    "MJCFError",
    "NewtonVersionError",
    "UnsupportedActuatorError",
    "UnsupportedJointError",
    "add_mjcf",
]
