"""The public surface: one declared API, and an import of ``replay`` with no side effects."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PROBE = r"""
import json, os, sys
env, finders = dict(os.environ), list(sys.meta_path)
import replay, replay.data, replay.study, replay.checks, replay.datasets
print(json.dumps({"env_changed": sorted(k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k)),
                  "finders_added": len(sys.meta_path) - len(finders), "adapters": sorted(replay.datasets._ADAPTERS),
                  "old_paths": [hasattr(replay, "MOVED"), hasattr(replay.data, "__getattr__"),
                                hasattr(replay.study, "__getattr__")]}))
"""


def test_importing_replay_touches_neither_the_environment_nor_the_import_system():
    env = {"PATH": "/usr/bin:/bin", "REPLAY_MIRROR": "../shared/datasets", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["env_changed"] == []  # a relative REPLAY_MIRROR stays relative until a command resolves it
    assert got["finders_added"] == 0
    assert got["old_paths"] == [False, False, False]  # the 0.1 shims are gone
    # the adapters are registered by replay.data, from above the base registry
    assert got["adapters"] == ["grab", "hug-bench", "taco"]


def test_the_public_api_is_declared_once_and_documented():
    import replay.api as api

    assert len(api.__all__) == len(set(api.__all__)) > 20
    missing = [n for n in api.__all__ if not hasattr(api, n)]
    assert not missing, missing
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("**The public API**"):]
    section = section[:section.index("\n## ")] if "\n## " in section else section
    named = set(re.findall(r"`(\w+)`", section))
    assert set(api.__all__) - {"__version__"} <= named, set(api.__all__) - named


def test_the_readme_one_recording_example_runs(mirror, tmp_path):
    """The README's one-recording example (its second ``python`` block after "The public API"),
    run as a user would, from a script in a new folder (the suite's cache: its landmark IK is the
    other tests'): the cube is lifted (its rise past the success threshold,
    ``config.lift.lifted_min_rise``) and its contact ablation stays on the table (|rise| < 5 mm)."""
    import os

    from replay.config import ReplayConfig

    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("**The public API**"):]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert "replay_recording(" in blocks[1], "the README's one-recording example moved"
    script = tmp_path / "example.py"
    script.write_text(blocks[1])
    env = {"PATH": "/usr/bin:/bin", "REPLAY_MIRROR": str(mirror), "PYTHONPATH": str(ROOT),
           "REPLAY_CACHE": os.environ.get("REPLAY_CACHE", str(ROOT / "data" / "cache")),
           "HOME": os.environ.get("HOME", str(tmp_path))}  # the suite's Warp kernel cache
    out = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    first, second = out.stdout.strip().splitlines()[-2:]
    assert first.startswith("lifted rise ") and float(first.split()[2]) >= 1000.0 * ReplayConfig().lift.lifted_min_rise
    assert second.startswith("ablation: not_lifted rise ") and abs(float(second.split()[3])) < 5.0
