"""``python scripts/penetration_table.py ...``: the command :mod:`replay.commands.penetration_table` (its doc says what it does)."""

from replay.commands.penetration_table import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
