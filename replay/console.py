"""The one module that writes to the user's terminal: results on stdout, errors, failures, progress and log records on
stderr, control characters escaped (a name from the data is shown, not obeyed)."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings

from tqdm import tqdm

from replay.errors import printable


def out(text: object = "", end: str = "\n") -> None:
    _write(sys.stdout, text, end)


def err(text: object = "", end: str = "\n") -> None:
    _write(sys.stderr, text, end)


def _write(stream, text: object, end: str) -> None:
    said = printable(text, keep_newlines=True)
    if getattr(tqdm, "_instances", None):  # a bar is open: the line above it, the bar drawn again below
        tqdm.write(said, file=stream, end=end)
    else:
        stream.write(said + end)
    stream.flush()


def bar(progress: bool | None = True, **kw) -> tqdm:
    """A tqdm bar on stderr (``kw``: tqdm's); ``progress`` None: on a terminal only."""
    return tqdm(disable=None if progress is None else not progress, file=sys.stderr, **kw)


def flush() -> None:
    """Flush stdout and stderr (before ``os._exit``)."""
    sys.stdout.flush()
    sys.stderr.flush()


@contextlib.contextmanager
def silenced():
    """Within: file descriptors 1 and 2 on ``/dev/null`` (native code's own prints: Warp's missing-driver line)."""
    flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1), os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


class _Printable:
    """A text stream writing through :func:`replay.errors.printable`, newlines kept (``keep_cr``: CRs too)."""

    def __init__(self, stream, keep_cr: bool = False):
        self.stream, self.keep_cr = stream, keep_cr

    def write(self, text: str) -> int:
        if self.keep_cr:
            return self.stream.write("\r".join(printable(s, keep_newlines=True) for s in text.split("\r")))
        return self.stream.write(printable(text, keep_newlines=True))

    def __getattr__(self, name):
        return getattr(self.stream, name)


@contextlib.contextmanager
def printable_output(bars: bool = False):
    """Within: ``sys.stdout`` and ``sys.stderr`` escape control characters; ``bars``: stderr keeps CRs."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Printable(saved[0]), _Printable(saved[1], keep_cr=bars)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


class _Said(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            err(self.format(record))
        except Exception:
            self.handleError(record)


def configure_logging(verbose: bool = False) -> None:
    """Say ``replay.*`` log records on stderr, INFO and up (``verbose``: DEBUG); a second call sets the level."""
    log = logging.getLogger("replay")
    if not any(isinstance(h, _Said) for h in log.handlers):
        handler = _Said()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.DEBUG if verbose else logging.INFO)


class _Kept(logging.Handler):
    """``replay.*`` log records of WARNING and up, kept as lines."""

    def __init__(self, lines: list[str]):
        super().__init__(logging.WARNING)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def kept_warnings(always: bool = True):
    """Within: Python warnings (``DeprecationWarning`` ignored; ``always``: each, else once per place) and ``replay.*``
    WARNING records kept off the terminal; yields the list of lines (a warning ``"<Category>: <message>"``)."""
    lines: list[str] = []
    log = logging.getLogger("replay")
    saved = log.handlers[:], log.propagate
    log.handlers, log.propagate = [_Kept(lines)], False
    try:
        with warnings.catch_warnings(record=True) as caught:
            if always:
                warnings.simplefilter("always")
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            try:
                yield lines
            finally:
                lines[:0] = [f"{w.category.__name__}: {w.message}" for w in caught]
    finally:
        log.handlers, log.propagate = saved
