"""Options and selections several commands share."""

from __future__ import annotations

import argparse

from replay.cli import folder_arg


def named_recordings(dataset: str, data, objects: str | None, *, lifts: bool = True) -> list[str]:
    """The dataset's recordings ``objects`` names (comma-separated objects or sequences); without, its ``*_lift``
    recordings (all where it has none, or with ``lifts=False``). Raises DataError: the dataset is not staged;
    UsageError: an unknown name."""
    from replay.data import list_sequences
    from replay.study.prepare import select_sequences

    seqs = list_sequences(dataset, data)
    if objects:
        return select_sequences(dataset, seqs, objects)
    return ([s for s in seqs if s.endswith("_lift")] or seqs) if lifts else seqs


def add_rollouts_option(ap: argparse.ArgumentParser, which: str) -> None:
    """``--protocol``: ``which`` rollouts of the study a render command draws."""
    ap.add_argument(
        "--protocol",
        choices=("lift", "recorded"),
        default="lift",
        help=f"{which}: lift (default) or recorded (the recorded object drawn as a translucent ghost beside the "
        "simulated one)",
    )


def add_data_dir_option(ap: argparse.ArgumentParser) -> None:
    """``--data`` / ``--data-dir``: the staged data folder (``dest="data_dir"``)."""
    ap.add_argument(
        "--data",
        "--data-dir",
        dest="data_dir",
        type=folder_arg,
        default=None,
        help="staged data folder (default data/ or $REPLAY_DATA, then $REPLAY_MIRROR)",
    )
