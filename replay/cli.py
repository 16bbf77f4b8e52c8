"""What every script in ``scripts/`` does around its ``main``: one-line errors and
one exit-status convention.

A user who passes a bad path or bad data gets ``error: <file>: <what is wrong>``
and a non-zero exit status, never a Python traceback from deep inside a library.
Programming errors (anything else) still raise with their traceback.

Exit status, the same for every script:

* 0: done;
* 1: the work could not be done, or not all of it: missing or bad input data, a
  fetch or integrity failure, an output that cannot be written, recordings that could
  not be replayed (the others are kept);
* 2: the command line is wrong: malformed arguments (argparse) or an option value the
  command cannot use (:class:`~replay.errors.UsageError`: unknown object or sequence,
  no CUDA device for ``--device cuda``);
* 130: interrupted (Ctrl-C); results written so far are kept.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from replay.errors import ReplayError, UsageError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def say_error(message: str, prog: str | None = None) -> None:
    """Print ``<prog>: error: <message>`` to stderr (``prog``: the script's file name)."""
    prog = prog or os.path.basename(sys.argv[0] or "") or "replay"
    print(f"{prog}: error: {message}", file=sys.stderr)


def report(exc: ReplayError, prog: str | None = None) -> int:
    """Print ``<prog>: error: <message>`` to stderr, as argparse does (``prog`` defaults to
    the script's file name); return the exit status for ``exc`` (2 for a
    :class:`~replay.errors.UsageError`, else 1)."""
    say_error(str(exc), prog)
    return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_FAILED


def run(main: Callable[[], int | None]) -> int:
    """Call ``main()`` and turn expected failures into messages.

    Returns:
        ``main``'s exit status; for an escaping :class:`~replay.errors.ReplayError`
        the status of :func:`report` (2 for a usage error, 1 for bad input, fetch or
        integrity problem); 1 for an ``OSError`` (unreadable input, unwritable output:
        the message names the path); 130 on Ctrl-C.
    """
    try:
        return int(main() or 0)
    except ReplayError as exc:
        return report(exc)
    except OSError as exc:
        where = exc.filename if exc.filename is not None else ""
        what = exc.strerror or type(exc).__name__
        hint = ""
        if isinstance(exc, NotADirectoryError):
            hint = " (a parent of this path is a file, not a folder)"
        elif isinstance(exc, IsADirectoryError):
            hint = " (this path is a folder; give a file name)"
        say_error(f"{where}: {what}{hint}")
        return 1
    except KeyboardInterrupt:
        print("interrupted; results written so far are kept (rerun with --resume where offered)", file=sys.stderr)
        return 130


def size_arg(text: str) -> tuple[int, int]:
    """argparse type for a frame size ``WxH`` in pixels, e.g. ``640x480`` -> (640, 480)."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WxH in pixels (e.g. 640x480), got {text!r}") from None
    return w, h
