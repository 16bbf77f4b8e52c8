"""``python scripts/run_sweep.py ...``: the command :mod:`replay.commands.run_sweep` (its doc says what it does)."""

from replay.commands.run_sweep import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
