"""``python scripts/attribute.py ...``: the command :mod:`replay.commands.attribute` (its doc says what it does)."""

from replay.commands.attribute import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
