"""Errors and warnings raised by :mod:`importer_patches`.

Every error names the MJCF file and the element (body, joint, actuator, mesh)
it is about, so that a user never has to read a traceback from inside Newton.
"""

from __future__ import annotations

from replay.errors import DataError


class MJCFError(DataError):
    """The MJCF file is missing, malformed, or references a missing asset.

    ``path`` is the MJCF file, ``field`` the element (e.g. ``mesh 'mano_bone_3'``).
    """


class UnsupportedJointError(MJCFError):
    """A body's joints form a combination Newton 1.8.0 cannot represent exactly.

    The message names the body and its joints (``field`` is ``body '<name>'``).
    """


class UnsupportedActuatorError(MJCFError):
    """An actuator uses a transmission the patches cannot map exactly onto Newton DOFs."""


class NewtonVersionError(RuntimeError):
    """The installed Newton is not the version the patches were written and tested for."""


class FreeJointActuatorWarning(UserWarning):
    """An MJCF actuator targets a joint that is (or became) a FREE joint.

    SolverMuJoCo cannot create actuators on free joints; the actuator is not
    imported. Its authored gains are kept in ``ImportReport.free_joint_actuators``
    and ``ImportReport.wrist_gains`` so a controller can apply them as a wrench
    through ``Control.joint_f``.
    """
