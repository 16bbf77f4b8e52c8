"""``python scripts/render_montage.py ...``: the command :mod:`replay.commands.render_montage` (its doc says what it does)."""

from replay.commands.render_montage import main  # noqa: F401  (``main(argv)``: what the command runs)

if __name__ == "__main__":
    from replay.cli import run

    raise SystemExit(run(main))
