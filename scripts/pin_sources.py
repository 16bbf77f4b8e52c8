"""``python scripts/pin_sources.py ...``: the command :mod:`replay.commands.pin_sources` (its doc says what it does)."""

from replay.commands.pin_sources import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
