"""``python scripts/gripper_check.py ...``: the command :mod:`replay.commands.gripper_check` (its doc says what it does)."""

from replay.commands.gripper_check import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
