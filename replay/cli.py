"""What every command does around its ``main``: one-line errors ``<prog>: error: <file>: <what>`` (never a traceback
for bad input) and one exit status: 0 done; 1 some work not done (bad input, fetch, integrity, an unwritable output,
recordings not replayed); 2 a wrong command line; 130 interrupted, results so far kept."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from replay import console, resolve_path_env
from replay.errors import ReplayError, UsageError, did_you_mean, printable

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def say_error(message: str, prog: str | None = None) -> None:
    """Print ``<prog>: error: <message>`` to stderr, control characters escaped."""
    prog = prog or os.path.basename(sys.argv[0] or "") or "replay"
    console.err(printable(f"{prog}: error: {message}"))


def report(exc: ReplayError, prog: str | None = None) -> int:
    """Print ``exc`` as :func:`say_error`; its exit status (2 for a usage error, else 1)."""
    say_error(str(exc), prog)
    return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_FAILED


def run(main: Callable[[], int | None]) -> int:
    """``main()``'s exit status; an escaping ``ReplayError`` or ``OSError`` as one line (2 for a usage error, else 1),
    130 on Ctrl-C; path variables made absolute, output escaped, log records said on stderr."""
    resolve_path_env()
    console.configure_logging()
    with console.printable_output(bars=True):  # every line a command prints: a name's control characters escaped
        return _run(main)


def _run(main: Callable[[], int | None]) -> int:
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
        console.err("interrupted; results written so far are kept (rerun with --resume where offered)")
        return 130


#: argparse's message for a value outside ``choices`` (Python 3.11-3.13, with or without the colon)
_INVALID_CHOICE = re.compile(r"^(argument [^:]+): invalid choice: ?'(.*)' \(choose from (.*)\)$", re.S)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose error for a value outside ``choices`` is one line naming the nearest, exit 2."""

    def error(self, message: str):
        m = _INVALID_CHOICE.match(message)
        if m is None:
            super().error(message)
        where, got, listed = m.groups()
        choices = re.findall(r"'([^']*)'", listed) or [c.strip() for c in listed.split(",")]
        hint = did_you_mean(got, choices)
        self.exit(
            EXIT_USAGE,
            printable(f"{self.prog}: error: {where}: invalid choice {got!r}: {hint}(choose from {listed})") + "\n",
        )


def folder_arg(text: str) -> Path:
    """argparse type: a folder, absolute against the starting directory (workers run elsewhere)."""
    return Path(os.path.abspath(os.path.expanduser(text)))


def size_arg(text: str) -> tuple[int, int]:
    """argparse type: ``WxH`` pixels, ``640x480`` -> (640, 480)."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WxH in pixels (e.g. 640x480), got {text!r}") from None
    return w, h


#: ``grasp-replay`` subcommands: the module of :mod:`replay.commands` each one runs
COMMANDS = {
    "study": "run_study",
    "sweep": "run_sweep",
    "render": "render_montage",
    "report": "report",
    "fetch": "fetch_data",
    "validate pose-mapping": "validate_pose_mapping",
    "validate object-frame": "validate_object_frame",
    "render-scene": "render_scene",
    "attribute": "attribute",
    "agreement": "agreement",
    "gripper-check": "gripper_check",
    "export": "export_rollout",
    "bridge": "bridge",
    "penetration": "penetration_table",
    "tables": "tables",
    "calibrate": "calibrate",
}
#: one line per subcommand for ``grasp-replay --help``
ABOUT = {
    "study": "replay recordings (lift and/or recorded protocol, contact ablation) into a study",
    "sweep": "robustness maps: a recording over effort x friction, perturbations",
    "render": "the study's montage (and per-recording clips)",
    "report": "the study's HTML report page and CSV",
    "fetch": "stage datasets (mirror, GitHub, Hub, --local) with a SHA-256 manifest",
    "validate pose-mapping": "hand FK against the recorded landmarks, mm",
    "validate object-frame": "object meshes, frames, densities and placement",
    "export": "one rollout as plain MuJoCo (model, inputs, replay script), USD or Rerun",
    "render-scene": "one recording drawn: its study rollout, else the recorded motion",
    "attribute": "attribution: one factor at a time toward a HUG-style replay",
    "agreement": "outcome agreement across several studies",
    "gripper-check": "is each object liftable at all: a parallel-jaw grasp-and-lift",
    "bridge": "hug-oracle to the lift protocol, one element at a time (lifted / N per row)",
    "penetration": "how deep the recorded hand starts inside the object at the grasp (HUG table 7)",
    "tables": "a README/docs figure table written from a results file",
    "calibrate": "choose the physics 'calibrated' once on GRAB's lifts (real vs corrupted, balanced accuracy)",
}


def _usage() -> str:
    lines = ["usage: grasp-replay <command> [args]   (grasp-replay <command> --help for its options)", "", "commands:"]
    lines += [f"  {c:<24}{ABOUT[c]}" for c in COMMANDS]
    return "\n".join(lines)


def _command_main(module: str) -> Callable:
    """``main`` of ``replay.commands.<module>``, imported only now (``--help`` loads no physics)."""
    return importlib.import_module(f"{__package__}.commands.{module}").main


def main(argv: list[str] | None = None) -> int:
    """``grasp-replay <command> [args]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    words = {c.split()[0] for c in COMMANDS}
    if not argv or argv[0] in ("-h", "--help"):
        (console.out if argv else console.err)(_usage())
        return EXIT_OK if argv else EXIT_USAGE
    if argv[0] not in words:  # one line with the nearest command; the list of commands where none is near
        hint = did_you_mean(argv[0], sorted(words))
        if not hint:
            console.err(_usage())
        say_error(f"unknown command {argv[0]!r}; {hint}".rstrip("; "), "grasp-replay")
        return EXIT_USAGE
    cmd, rest = argv[0], argv[1:]
    if cmd == "validate":
        if not rest or f"validate {rest[0]}" not in COMMANDS:
            (console.out if rest and rest[0] in ("-h", "--help") else console.err)(_usage())
            if rest and rest[0] in ("-h", "--help"):
                return EXIT_OK
            hint = did_you_mean(rest[0], ("pose-mapping", "object-frame")) if rest else ""
            say_error(f"validate needs pose-mapping or object-frame; {hint}".rstrip("; "), "grasp-replay")
            return EXIT_USAGE
        cmd, rest = f"validate {rest[0]}", rest[1:]
    prog = f"grasp-replay {cmd}"
    sys.argv = [prog, *rest]  # argparse usage lines and say_error name the command
    fn = _command_main(COMMANDS[cmd])
    return run(lambda: fn(rest))
