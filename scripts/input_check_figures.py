"""``python scripts/input_check_figures.py ...``: the command :mod:`replay.commands.input_check_figures` (its doc says what it does)."""

from replay.commands.input_check_figures import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
