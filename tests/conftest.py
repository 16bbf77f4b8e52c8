"""Shared fixtures.

Tests that need the real data mirror use the ``mirror`` fixture (or
``dataset_path``). Without ``REPLAY_MIRROR`` they are skipped, unless
``REPLAY_REQUIRE_DATA=1`` (as in CI), where a missing mirror is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import replay

# a relative REPLAY_MIRROR is made absolute here, once, as every command does (replay.cli.run)
replay.resolve_path_env()

REQUIRE_DATA = os.environ.get("REPLAY_REQUIRE_DATA") == "1"


@pytest.fixture(scope="session", autouse=True)
def _hermetic_cache(tmp_path_factory):
    """Derived files (CoACD parts, landmark IK) go to a per-session folder, not data/cache:
    tests never depend on, or leave behind, a cache from an earlier run."""
    mp = pytest.MonkeyPatch()
    mp.setenv("REPLAY_CACHE", str(tmp_path_factory.getbasetemp() / "replay_cache"))
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _no_scene_from_an_earlier_test():
    """Every test starts with no kept scene (replay.sim.scene_cache): a test that patches a builder or
    edits a scene sees its own build, never one an earlier test left in this process."""
    import sys

    cache = sys.modules.get("replay.sim.scene_cache")
    if cache is not None:
        cache.clear()
    yield


_SKIPPED_FOR_DATA: list[str] = []


def _missing(reason: str):
    if REQUIRE_DATA:
        pytest.fail(f"REPLAY_REQUIRE_DATA=1 but {reason}")
    _SKIPPED_FOR_DATA.append(reason)
    pytest.skip(reason)


#: what enables a skipped test: (a phrase of its skip reason, the one command or condition that runs it)
ENABLE = (
    ("chromium", "make setup as root or with passwordless sudo (installs Debian's chromium), "
                 "or: sudo apt-get install chromium"),
    ("REPLAY_MIRROR", "REPLAY_MIRROR=../shared/datasets make test"),
    ("missing", "REPLAY_MIRROR=<a complete mirror> make test (the mirror lacks a dataset folder)"),
    ("cases folder", "put the bad-input cases at ../shared/cases (beside the repository)"),
    ("CUDA", "an NVIDIA GPU machine: REPLAY_MIRROR=../shared/datasets make test-cuda"),
    ("a GPU machine", "none: it tests the CPU-only message, so it runs only where no GPU is"),
    ("tmpfs", "run the suite as root where mount(8) is allowed (a container with CAP_SYS_ADMIN)"),
    ("not installed", ".venv/bin/pip install -e '.[dev]'"),
    ("ray", ".venv/bin/pip install -e '.[dev]'"),
    ("make docs-results", "REPLAY_MIRROR=../shared/datasets make docs-results (remakes docs/results/ on this tree)"),
)


def enabling_command(reason: str) -> str:
    """The command (or condition) of :data:`ENABLE` that runs a test skipped for ``reason``."""
    for phrase, command in ENABLE:
        if phrase.lower() in reason.lower():
            return command
    return "none known: read the reason"


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """At the very end (outermost wrapper: after pytest's short summary): every skipped test, grouped by
    reason, with the one command that enables it, so no skip goes unexplained; and loudly when the
    real-data tests did not run (a green run without them checks little of the pipeline)."""
    yield
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    by_reason: dict[str, list[str]] = {}
    for rep in skipped:
        by_reason.setdefault(_skip_reason(rep), []).append(rep.nodeid)
    terminalreporter.write_sep("-", f"{len(skipped)} skipped test(s) and what enables them")
    for reason, ids in by_reason.items():
        names = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        terminalreporter.write_line(f"{len(ids)} skipped: {reason}\n    tests: {names}\n"
                                    f"    enable: {enabling_command(reason)}")
    if _SKIPPED_FOR_DATA:
        terminalreporter.write_sep("!", "real-data tests were SKIPPED", yellow=True, bold=True)
        terminalreporter.write_line(
            f"the data ones because {_SKIPPED_FOR_DATA[0]}. This run checked only what needs "
            "no data. Run with REPLAY_MIRROR=<mirror folder> (e.g. ../shared/datasets) for the full suite, "
            "and REPLAY_REQUIRE_DATA=1 to make a missing mirror fail instead of skip (as CI does).")


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


@pytest.fixture(scope="session")
def cases_dir(mirror: Path) -> Path:
    """The bad-input cases (``../shared/cases`` beside the repository, as in CI; else beside
    the mirror), each a folder laid out like the mirror (see its README)."""
    for root in (Path(__file__).resolve().parents[2] / "shared" / "cases", mirror.parent / "cases"):
        if (root / "README.md").is_file():
            return root
    _missing(f"no bad-input cases folder (looked for ../shared/cases and {mirror.parent / 'cases'})")


@pytest.fixture(scope="session")
def small_refine_study(mirror: Path, tmp_path_factory) -> tuple[dict, Path]:
    """(study, its JSON path): ``run_study`` in process on cubesmall with ``refine`` (4 worlds), the
    short window of tests/test_study.py, no ablation: shared by the refine and the tables tests."""
    from replay.config import ReplayConfig
    from replay.study.runner import run_study

    out = tmp_path_factory.mktemp("small_refine") / "study.json"
    short = dict(approach_window_s=0.3, settle_s=0.1, lift={"lift_height": 0.04, "lift_s": 0.3, "hold_s": 0.2, "lifted_min_rise": 0.02})
    study = run_study("grab", out, ReplayConfig(**short), objects=["cubesmall"], workers=1, ablation=False,
                      progress=False, data_dir=mirror, refine={"seed": 0, "worlds": 4})
    return study, out


@pytest.fixture(scope="session")
def grab_staged(mirror: Path, tmp_path_factory) -> Path:
    """GRAB staged from the mirror by ``fetch_data`` (hardlinks where the file system allows):
    the 30 lifts and the 10 recordings of other intents (``grab_intents/recordings`` in the
    mirror) in one ``grab/recordings`` folder; the staging root (``--data``)."""
    from replay.data.fetch import fetch

    dest = tmp_path_factory.mktemp("grab_staged")
    fetch("grab", dest, mirror=mirror, link="hardlink", progress=False)
    return dest
