"""``python scripts/bridge.py ...``: the command :mod:`replay.commands.bridge` (its doc says what it does)."""

try:
    from replay.commands.bridge import main  # noqa: F401  (``main(argv)``: what the command runs)
except ModuleNotFoundError as e:  # not the project's environment: one line naming what to run, no traceback
    raise SystemExit(f"bridge.py: error: {e.name} is not importable by this python: run `make setup` once, then "
                     "`source .venv/bin/activate` (or run .venv/bin/python scripts/bridge.py)") from None

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
