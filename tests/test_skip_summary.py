"""``make test``'s closing lines (tests/conftest.py's terminal summary): every skipped test, grouped by
reason, with the one command that enables it (issue #40: a skip must never go unexplained)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ENABLE, enabling_command

TESTS = Path(__file__).resolve().parent


def test_every_skip_of_the_suite_has_its_command():
    """The skip reasons the suite raises (chromium, the mirror, CUDA, tmpfs, an extra) each map to a
    command, and an unknown one says so."""
    for reason in ("chromium is not installed (apt-get install chromium); CI runs this test",
                   "REPLAY_MIRROR is not set", "no CUDA device (Warp)",
                   "cannot mount a tmpfs here (1): needs root in a sandbox that permits mount",
                   "rerun not installed (pip install -e '.[dev]')"):
        assert enabling_command(reason) in {c for _, c in ENABLE}, reason
    assert enabling_command("REPLAY_MIRROR is not set").startswith("REPLAY_MIRROR=")
    assert "chromium" in enabling_command("chromium is not installed")
    assert enabling_command("something else") == "none known: read the reason"


def test_the_summary_lists_skips_with_their_command(tmp_path):
    """A run with two tests skipped for Chromium and one passing ends with the group, the test names
    and the enabling command (the conftest loaded as a plugin into a run of its own)."""
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "def test_a():\n    pytest.skip('chromium is not installed (apt-get install chromium)')\n"
        "def test_b():\n    pytest.skip('chromium is not installed (apt-get install chromium)')\n"
        "def test_c():\n    assert True\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), str(TESTS.parent)]))
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q",
                          str(tmp_path / "test_x.py")], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    tail = res.stdout[res.stdout.index("2 skipped test(s) and what enables them"):]
    assert "2 skipped: chromium is not installed" in tail and "test_x.py::test_a, " in tail
    assert "enable: make setup as root" in tail
