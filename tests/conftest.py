"""Shared fixtures.

Tests that need the real data mirror use the ``mirror`` fixture (or
``dataset_path``). Without ``REPLAY_MIRROR`` they are skipped, unless
``REPLAY_REQUIRE_DATA=1`` (as in CI), where a missing mirror is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REQUIRE_DATA = os.environ.get("REPLAY_REQUIRE_DATA") == "1"


@pytest.fixture(scope="session", autouse=True)
def _hermetic_cache(tmp_path_factory):
    """Derived files (CoACD parts, landmark IK) go to a per-session folder, not data/cache:
    tests never depend on, or leave behind, a cache from an earlier run."""
    mp = pytest.MonkeyPatch()
    mp.setenv("REPLAY_CACHE", str(tmp_path_factory.getbasetemp() / "replay_cache"))
    yield
    mp.undo()


def _missing(reason: str):
    if REQUIRE_DATA:
        pytest.fail(f"REPLAY_REQUIRE_DATA=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The offline data mirror (``$REPLAY_MIRROR``), e.g. ``../shared/datasets``."""
    value = os.environ.get("REPLAY_MIRROR")
    if not value:
        _missing("REPLAY_MIRROR is not set")
    root = Path(value).expanduser().resolve()
    if not root.is_dir():
        _missing(f"REPLAY_MIRROR={value} is not a folder")
    return root


@pytest.fixture(scope="session")
def manosim_dir(mirror: Path) -> Path:
    path = mirror / "manosim"
    if not path.is_dir():
        _missing(f"{path} missing")
    return path


@pytest.fixture(scope="session")
def grab_dir(mirror: Path) -> Path:
    path = mirror / "grab"
    if not path.is_dir():
        _missing(f"{path} missing")
    return path


@pytest.fixture(scope="session")
def taco_dir(mirror: Path) -> Path:
    path = mirror / "taco"
    if not path.is_dir():
        _missing(f"{path} missing")
    return path


@pytest.fixture(scope="session")
def capsule_rhand(manosim_dir: Path) -> Path:
    """The default hand: manosim ``myhand`` right capsule hand MJCF."""
    return manosim_dir / "assets" / "myhand" / "mano_rhand" / "capsule_hand.xml"
