"""``python scripts/validate_object_frame.py ...``: the command :mod:`replay.commands.validate_object_frame` (its doc says what it does)."""

from replay.commands.validate_object_frame import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
