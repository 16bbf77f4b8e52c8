"""``python scripts/bridge.py ...``: the command :mod:`replay.commands.bridge` (its doc says what it does)."""

from replay.commands.bridge import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
