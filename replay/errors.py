"""Exception types with messages a user can act on: the one home of every error class
this package raises on purpose.

Every error raised for bad input names the file and the field it came from, so that a
user never has to read a traceback from deep inside numpy or Newton. Every class pickles
(a worker process hands its error to the study process unchanged): those with their own
``__init__`` define ``__reduce__`` so that unpickling calls it with the same arguments.

Hierarchy (siblings, not subclasses of each other, so ``except DataError`` never
swallows a usage or engine problem):

* :class:`ReplayError`
    * :class:`DataError`: bad or missing input data (file + field);
    * :class:`UsageError`: an option value the command cannot use (exit status 2);
    * :class:`FetchError` > :class:`IntegrityError`: staging data;
    * :class:`OutputError`: an output cannot be written;
    * :class:`SceneError`: the scene cannot be built as asked (e.g. hand import);
    * :class:`ReadbackError`: a value set on the model is not what the solver uses;
    * :class:`EngineError` > :class:`AblationMaskError`: a replay engine cannot apply a
      variant (or it did not take).
"""

from __future__ import annotations

import re
from pathlib import Path

#: what a terminal would act on instead of showing: C0 controls (ESC starts an escape sequence,
#: CR overwrites the line, BEL rings), DEL, C1 controls (0x9b is CSI), the Unicode line and
#: paragraph separators, and the bidirectional-text controls (Unicode's Bidi_Control property:
#: they reorder what is shown, CVE-2021-42574)
_CONTROL_CHARS = "\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROLS, _CONTROLS_AND_LF = re.compile(f"[{_CONTROL_CHARS}]"), re.compile(f"[{_CONTROL_CHARS}\\n]")


def printable(text: object, keep_newlines: bool = False) -> str:
    """``str(text)`` safe to print on a terminal: every control character of :data:`_CONTROL_CHARS`
    (and LF unless ``keep_newlines``) written as its Python escape (``\\x1b``, ``\\r``,
    ``\\u202e``); the rest unchanged. For console lines and one-line errors only: results
    files (JSON) keep names exact."""
    s = str(text)
    pattern = _CONTROLS if keep_newlines else _CONTROLS_AND_LF
    return pattern.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)


class ReplayError(Exception):
    """Base class of every error this package raises on purpose."""


class DataError(ReplayError):
    """Bad or missing input data.

    Args:
        path: the file (or folder) the problem is in, or ``None`` for a setting.
        field: the field inside it (dotted, e.g. ``hand.wrist_rot``), or ``None``.
        message: what is wrong and, where possible, what to do about it.
        cause: the class of fault, a code of ``replay.checks.causes.CAUSES`` (``frames_missing``,
            ``stream_offset``, ``object_model_mismatch``, ``frame_rate``, ``units``, ...), or ``None``
            where none was named; :attr:`line` puts it before the sentence.
    """

    def __init__(self, path: str | Path | None, field: str | None, message: str, cause: str | None = None):
        self.path = None if path is None else Path(path)
        self.field = field
        self.message = message
        self.cause = cause
        if self.path is not None:
            where = str(self.path) + (f" [{field}]" if field else "")
        else:  # a setting, not a file: name it alone
            where = field or "input"
        super().__init__(f"{where}: {message}")

    @property
    def line(self) -> str:
        """The one line a study keeps for a refusal: ``[<cause>] <file> [<field>]: <message>`` (the
        cause code first, so a study's refusals can be counted per cause; ``input`` where none was named)."""
        return f"[{self.cause or 'input'}] {self}"

    def __reduce__(self):
        return (type(self), (self.path, self.field, self.message, self.cause))


class UsageError(ReplayError):
    """A command-line option has a value the command cannot use (an unknown object or
    sequence, a device that is not there). Scripts exit with status 2 for it, as
    argparse does for malformed arguments (see :mod:`replay.cli`).

    Args:
        option: the option, e.g. ``--objects`` (also readable as ``field``).
        message: what is wrong and what would work.
    """

    def __init__(self, option: str, message: str):
        self.option = option
        self.message = message
        super().__init__(f"{option}: {message}")

    @property
    def field(self) -> str:
        return self.option

    def __reduce__(self):
        return (type(self), (self.option, self.message))


class FetchError(ReplayError):
    """A dataset could not be staged (network, mirror or hash problem)."""


class IntegrityError(FetchError):
    """A staged file does not match the SHA-256 recorded for it."""


class OutputError(ReplayError):
    """An output (video, JSON) cannot be written where it was asked for."""


class StorageError(OutputError):
    """A write failed for want of space or a writable file system (no space left, quota, read-only,
    I/O error): the study stops with one line naming the file; what was written is kept and
    ``--resume`` after freeing space finishes it (:func:`replay.fileio.storage_fault`).

    Args:
        path: the file whose write failed (or None when the system did not say).
        message: what failed and what to do.
    """

    def __init__(self, path: str | Path | None, message: str):
        self.path = None if path is None else Path(path)
        self.message = message
        super().__init__(f"{self.path}: {message}" if self.path is not None else message)

    def __reduce__(self):
        return (type(self), (self.path, self.message))


class SceneError(ReplayError):
    """The scene cannot be built as asked (e.g. the hand import is not as expected)."""


class ReadbackError(ReplayError):
    """A value set on the model is not the value the solver uses."""


class EngineError(ReplayError):
    """A replay engine cannot apply a variant to the compiled model (or it did not take)."""


class AblationMaskError(EngineError):
    """The compiled model's collision bits leave no way to filter hand-object pairs alone."""
