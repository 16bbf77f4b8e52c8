"""``python scripts/fetch_data.py ...``: the command :mod:`replay.commands.fetch_data` (its doc says what it does)."""

from replay.commands.fetch_data import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
