"""Every error class the package raises on purpose. Bad input names its file and field; every class pickles (a worker
hands it to the study unchanged); :class:`ReplayError`'s direct subclasses are siblings."""

from __future__ import annotations

import re
from pathlib import Path

#: what a terminal would act on instead of showing: C0, DEL, C1 (0x9b is CSI), Unicode line and paragraph
#: separators, and Bidi_Control characters (they reorder what is shown: CVE-2021-42574)
_CONTROL_CHARS = "\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROLS, _CONTROLS_AND_LF = re.compile(f"[{_CONTROL_CHARS}]"), re.compile(f"[{_CONTROL_CHARS}\\n]")


def printable(text: object, keep_newlines: bool = False) -> str:
    """``str(text)`` with each :data:`_CONTROL_CHARS` character (and LF unless ``keep_newlines``) as its Python escape;
    for console lines and one-line errors only."""
    s = str(text)
    pattern = _CONTROLS if keep_newlines else _CONTROLS_AND_LF
    return pattern.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)


class ReplayError(Exception):
    """Base class of every error this package raises on purpose."""


class DataError(ReplayError):
    """Bad or missing input data: ``path`` the file or folder (None: a setting), ``field`` dotted inside it
    (``hand.wrist_rot``) or None, ``message`` what is wrong and what to do, ``cause`` a code of
    ``replay.checks.causes.CAUSES`` or None."""

    def __init__(self, path: str | Path | None, field: str | None, message: str, *, cause: str | None = None):
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
        """A study's line for a refusal: ``[<cause>] <file> [<field>]: <message>`` (``input`` without a cause)."""
        return f"[{self.cause or 'input'}] {self}"

    def __reduce__(self):
        return (type(self), (self.path, self.field, self.message), {"cause": self.cause})


class UsageError(ReplayError):
    """An option value the command cannot use: exit status 2; ``option`` (``--objects``) is also ``field``."""

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
    """A write failed for want of space or a writable file system; ``path`` None when the system did not say."""

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


def did_you_mean(got: str, choices) -> str:
    """``"did you mean 'authored'? "`` for up to 3 ``choices`` nearest ``got`` (difflib ratio >= 0.5), else ``""``."""
    import difflib

    near = difflib.get_close_matches(str(got), [str(c) for c in choices], n=3, cutoff=0.5)
    return f"did you mean {' or '.join(repr(c) for c in near)}? " if near else ""
