"""``python scripts/export_rollout.py ...``: the command :mod:`replay.commands.export_rollout` (its doc says what it does)."""

from replay.commands.export_rollout import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
