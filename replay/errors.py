"""Exception types with messages a user can act on.

Every error raised for bad input names the file and the field it came from, so
that a user never has to read a traceback from deep inside numpy or Newton.
"""

from __future__ import annotations

from pathlib import Path


class ReplayError(Exception):
    """Base class of every error this package raises on purpose."""


class DataError(ReplayError):
    """Bad or missing input data.

    Args:
        path: the file (or folder) the problem is in.
        field: the field inside it (dotted, e.g. ``hand.wrist_rot``), or ``None``.
        message: what is wrong and, where possible, what to do about it.
    """

    def __init__(self, path: str | Path | None, field: str | None, message: str):
        self.path = None if path is None else Path(path)
        self.field = field
        if self.path is not None:
            where = str(self.path) + (f" [{field}]" if field else "")
        else:  # an option or setting, not a file: name it alone
            where = field or "input"
        super().__init__(f"{where}: {message}")


class UsageError(DataError):
    """A command-line option has a value the command cannot use (an unknown object or
    sequence, a device that is not there). Scripts exit with status 2 for it, as
    argparse does for malformed arguments (see :mod:`replay.cli`).

    Args:
        option: the option, e.g. ``--objects``.
        message: what is wrong and what would work.
    """

    def __init__(self, option: str, message: str):
        super().__init__(None, option, message)


class FetchError(ReplayError):
    """A dataset could not be staged (network, mirror or hash problem)."""


class IntegrityError(FetchError):
    """A staged file does not match the SHA-256 recorded for it."""


class OutputError(ReplayError):
    """An output (video, JSON) cannot be written where it was asked for."""
