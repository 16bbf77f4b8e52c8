"""Atomic writes, the scripts' error wrapper, and dataset location after a failed fetch."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from replay.cli import run
from replay.data.locate import dataset_dir
from replay.errors import DataError, UsageError
from replay.fileio import atomic_write_text


def test_atomic_write_gives_ordinary_permissions_and_leaves_no_temp(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "sub" / "a.json", "{}")
    finally:
        os.umask(old)
    assert path.read_text() == "{}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # not mkstemp's 0600
    assert [p.name for p in path.parent.iterdir()] == ["a.json"]


def test_atomic_write_into_a_file_parent_raises_and_cli_says_so(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert run(lambda: atomic_write_text(blocker / "out.json", "{}")) == 1
    err = capsys.readouterr().err
    assert ": error: " in err.splitlines()[0] and str(blocker) in err and "not a folder" in err
    assert "Traceback" not in err


def test_cli_turns_data_errors_into_one_line(capsys):
    def bad():
        raise DataError("x.pkl", "hand.wrist_rot", "expected shape (N, 4)")

    assert run(bad) == 1
    # "<script>: error: ...", as argparse words its own errors
    prog = os.path.basename(sys.argv[0])
    assert capsys.readouterr().err.strip() == f"{prog}: error: x.pkl [hand.wrist_rot]: expected shape (N, 4)"
    assert run(lambda: 0) == 0

    def bad_option():
        raise UsageError("--objects", "no grab sequence for ['unicorn']")

    assert run(bad_option) == 2
    assert capsys.readouterr().err.strip() == f"{prog}: error: --objects: no grab sequence for ['unicorn']"


def test_empty_staged_folder_does_not_hide_the_mirror(tmp_path, monkeypatch, mirror):
    # an interrupted online fetch leaves data/grab/objects/airplane/ behind, empty
    (tmp_path / "data" / "grab" / "objects" / "airplane").mkdir(parents=True)
    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    assert dataset_dir("grab", tmp_path / "data") == mirror / "grab"
    monkeypatch.delenv("REPLAY_MIRROR")
    with pytest.raises(DataError, match="fetch_data.py --dataset grab"):
        dataset_dir("grab", tmp_path / "data")


@pytest.mark.parametrize("exc", [
    DataError("x.pkl", "hand.wrist_rot", "expected shape (N, 4)"),
    DataError(None, "--effort", "must be positive"),
    UsageError("--objects", "no grab sequence for ['unicorn']"),
])
def test_errors_survive_a_process_boundary(exc):
    """A worker process hands its error to the study unchanged: pickling keeps the class,
    the message and the file/field attributes (a DataError without ``__reduce__`` fails to
    unpickle, since its ``__init__`` takes three arguments)."""
    import pickle

    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc)
    assert str(back) == str(exc)
    assert (back.field, getattr(back, "path", None)) == (exc.field, getattr(exc, "path", None))


def test_usage_error_is_not_a_data_error():
    """``except DataError`` (a bad recording, reported and skipped) must not swallow a
    usage error (the command line is wrong: exit 2)."""
    assert not isinstance(UsageError("--objects", "x"), DataError)
