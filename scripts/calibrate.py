"""``python scripts/calibrate.py ...``: the command :mod:`replay.commands.calibrate` (its doc says what it does)."""

from replay.commands.calibrate import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
