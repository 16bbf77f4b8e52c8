"""What every script in ``scripts/`` does around its ``main``: one-line errors.

A user who passes a bad path or bad data gets ``error: <file>: <what is wrong>``
and a non-zero exit status, never a Python traceback from deep inside a library.
Programming errors (anything else) still raise with their traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from replay.errors import ReplayError


def run(main: Callable[[], int | None]) -> int:
    """Call ``main()`` and turn expected failures into messages.

    Returns:
        ``main``'s exit status; 1 for a :class:`~replay.errors.ReplayError` (bad input,
        fetch or integrity problem) or an ``OSError`` (unreadable input, unwritable
        output: the message names the path); 130 on Ctrl-C.
    """
    try:
        return int(main() or 0)
    except ReplayError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        where = exc.filename if exc.filename is not None else ""
        what = exc.strerror or type(exc).__name__
        hint = ""
        if isinstance(exc, NotADirectoryError):
            hint = " (a parent of this path is a file, not a folder)"
        elif isinstance(exc, IsADirectoryError):
            hint = " (this path is a folder; give a file name)"
        print(f"error: {where}: {what}{hint}", file=sys.stderr)
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
