"""Ctrl-C on a running study: back within 2 s, finished recordings kept, how to resume said."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_study import SHORT, _children

from replay.config import ReplayConfig

pytestmark = pytest.mark.needs_data

ROOT = Path(__file__).resolve().parent.parent
#: enough recordings that the study cannot end in the moment between its first rollout and the Ctrl-C
#: (3 short ones took 1 s each after the first on a quiet machine: the signal came after the end)
OBJECTS = ["cubesmall", "cylindersmall", "mug", "stapler", "stamp", "elephant", "waterbottle", "duck"]


def _running_worker(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, IndexError):
        return False
    return state != "Z" and b"spawn_main" in cmd


@pytest.mark.slow  # a run_study.py subprocess run until its first rollout, then Ctrl-C: 17 s on 2 shared cores (make test-slow)
def test_ctrl_c_stops_within_2s_and_keeps_what_is_done(tmp_path, mirror):
    cfg_path = tmp_path / "cfg.json"
    ReplayConfig(**SHORT).save(cfg_path)
    out = tmp_path / "study.json"
    cmd = [sys.executable, str(ROOT / "scripts" / "run_study.py"), "--dataset", "grab", "--out", str(out),
           "--objects", ",".join(OBJECTS), "--config", str(cfg_path), "--no-ablation", "--workers", "1",
           "--data", str(mirror)]
    # its own process group, as a shell gives a foreground job: Ctrl-C signals the whole group
    # and with Ctrl-C's default action, as a shell starts it: a disposition of SIG_IGN left in this
    # test process (by anything run in it before) would be inherited, and Python would then ignore Ctrl-C
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    rdir = tmp_path / "study_rollouts"
    t0 = time.time()
    while time.time() - t0 < 240 and proc.poll() is None and not list(rdir.glob("*.json")):
        time.sleep(0.05)
    time.sleep(0.3)  # the next recording is running in the worker now
    workers = _children(proc.pid)
    assert proc.poll() is None, "the study ended before it could be interrupted"
    t_sig = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - t_sig
    assert proc.returncode == 130, err[-2000:]
    assert took < 2.0, f"took {took:.2f} s to stop"
    assert "Traceback" not in err and "--resume" in err, err[-2000:]
    # no worker left simulating (multiprocessing's resource tracker may linger a moment as a zombie)
    time.sleep(0.5)
    assert not [w for w in workers if _running_worker(w)], "workers outlived the study"
    assert err.count("interrupted") == 1  # said once
    on_disk = sorted(p.stem for p in rdir.glob("*.json"))
    study = json.loads(out.read_text())
    assert 1 <= len(on_disk) < len(OBJECTS)
    assert sorted(r["sequence"] for r in study["rollouts"]) == on_disk  # every finished one is in the study
    assert not [p for p in rdir.iterdir() if p.name.endswith(".tmp")]
