"""--executor ray on a real local cluster that shares nothing but Ray: a head (no CPUs for tasks)
and two worker nodes of one CPU, each in its own mount namespace where the study's data, its
folder and the temp dir are empty tmpfs mounts. A study of the GRAB lifts runs on it, one worker
node is killed while it runs a task, and the study must hold the process pool's verdicts for
the same recordings, nothing lost.

Needs root (``unshare -m``, ``mount -t tmpfs``): CI runs as root; elsewhere it is skipped
without it (failed in CI). The nodes are this test's own processes, ended by id; in CI ``ray
stop --force`` then sweeps up anything left (on a shared machine it would end others' Ray too).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.needs_data, pytest.mark.slow]

ray = pytest.importorskip("ray", reason="ray is in the dev extra: pip install -e '.[dev]'")

ROOT = Path(__file__).resolve().parent.parent
RAY = str(Path(sys.executable).with_name("ray"))
IN_CI = os.environ.get("CI", "").lower() == "true"
#: what a study decides about a recording (docs/results.md): must be the pool's on every recording
VERDICTS = ("outcome", "diagnosis", "stable", "lifted", "slip_in_hand", "shake_held", "ablation_clean",
            "ablation_no_rise", "ablation_lifted")
#: environment the study's process has that would point a node at the driver's folders
DRIVER_ONLY_ENV = ("REPLAY_MIRROR", "REPLAY_CACHE", "REPLAY_DATA", "REPLAY_RAY_STAGE", "RAY_ADDRESS")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_ports() -> list[str]:
    """Ports of one node's own services (several nodes share this host's network)."""
    out = []
    for flag in ("--node-manager-port", "--object-manager-port", "--dashboard-agent-listen-port",
                 "--dashboard-agent-grpc-port", "--runtime-env-agent-port", "--metrics-export-port"):
        out += [flag, str(_free_port())]
    return out


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (Linux /proc)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                kids.setdefault(int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(int(d.name))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [pid], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Cluster:
    """A head and worker nodes on this host, each ``ray start --block`` in its own session."""

    def __init__(self, logs: Path, hide: list[Path]):
        self.logs, self.hide, self.nodes = logs, hide, []
        self.temp = tempfile.mkdtemp(prefix="ray-")  # short: Ray's socket paths live below it
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        # a token of its own (Ray's token authentication): nothing of ~/.ray/auth_token or another Ray here
        self.env = {k: v for k, v in os.environ.items() if k not in DRIVER_ONLY_ENV and not k.startswith("RAY_AUTH")}
        self.env.update(PYTHONPATH=str(ROOT), RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))

    def driver_env(self) -> dict:
        """The environment of a process that joins the cluster from this host (the study's data in view)."""
        return dict(os.environ, PYTHONPATH=str(ROOT), RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.env["RAY_AUTH_TOKEN"])

    def _start(self, cmd: list[str]) -> subprocess.Popen:
        log = open(self.logs / f"node{len(self.nodes)}.log", "w")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        self.nodes.append(p)
        return p

    def start(self, workers: int) -> None:
        common = ["--block", "--disable-usage-stats", "--object-store-memory", str(200 * 2**20)]
        head = self._start([RAY, "start", "--head", "--port", str(self.port), "--num-cpus", "0",
                            "--include-dashboard=false", "--temp-dir", self.temp, *common, *_node_ports()])
        self._wait_log(head, 0)
        mounts = " && ".join(f"mount -t tmpfs replay-hidden {d}" for d in self.hide)
        for _ in range(workers):
            cmd = [RAY, "start", "--address", self.address, "--num-cpus", "1", *common, *_node_ports()]
            self._start(["unshare", "-m", "--propagation", "private", "sh", "-c",
                         f"{mounts} && exec {' '.join(cmd)}"])

    def _wait_log(self, p: subprocess.Popen, i: int, timeout_s: float = 120.0) -> None:
        t0 = time.time()
        while time.time() - t0 < timeout_s:
            if "Ray runtime started" in (self.logs / f"node{i}.log").read_text():
                return
            if p.poll() is not None:
                break
            time.sleep(0.3)
        raise RuntimeError(f"ray node {i} did not start: {(self.logs / f'node{i}.log').read_text()[-2000:]}")

    def kill(self, p: subprocess.Popen) -> None:
        """End a node and every process below it at once (SIGKILL: a node lost, not shut down)."""
        for pid in _descendants(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        p.wait()

    def running_task(self, p: subprocess.Popen) -> bool:
        """A worker below node ``p`` runs a task now (Ray titles it ``ray::<task function>``)."""
        return any(_cmdline(pid).startswith("ray::_task") for pid in _descendants(p.pid))

    def stop(self) -> None:
        for p in self.nodes:
            if p.poll() is None:
                self.kill(p)
        if IN_CI:  # nothing of ours may outlive the test; on a shared machine this would end others' Ray too
            subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)
        shutil.rmtree(self.temp, ignore_errors=True)


def _can_hide(folder: Path) -> str | None:
    """Why an empty tmpfs cannot be mounted over ``folder`` in a new mount namespace, or None."""
    if shutil.which("unshare") is None:
        return "unshare not found (util-linux)"
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        f"mount -t tmpfs replay-hidden {folder} && test -z \"$(ls -A {folder})\""],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else f"cannot mount a tmpfs in a mount namespace: {r.stderr.strip()}"


@pytest.fixture
def cluster(tmp_path, mirror):
    hide = [mirror, tmp_path, Path(tempfile.gettempdir()).resolve()]
    why = _can_hide(tmp_path)
    if why:
        if IN_CI:
            pytest.fail(why)
        pytest.skip(why)
    (tmp_path / "logs").mkdir()
    c = Cluster(tmp_path / "logs", hide)
    try:
        c.start(workers=2)
        yield c
    finally:
        c.stop()


PROBE = """
import json, os, sys, time
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
t0 = time.time()
while time.time() - t0 < 120:
    nodes = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU")]
    if len(nodes) >= 2:
        break
    time.sleep(0.5)
exists = ray.remote(num_cpus=1)(lambda paths: [os.path.exists(p) for p in paths])
refs = [exists.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(sys.argv[2:])
        for n in nodes]
print("PROBE", json.dumps([[n["NodeID"], r] for n, r in zip(nodes, ray.get(refs, timeout=300))]))
"""


def _probe(cluster: Cluster, folders: list[Path]) -> list:
    """[node id, whether each folder exists there] for every alive node with CPUs, once two are in."""
    r = subprocess.run([sys.executable, "-c", PROBE, cluster.address, *map(str, folders)], env=cluster.driver_env(),
                       capture_output=True, text=True, timeout=400)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(next(ln for ln in r.stdout.splitlines() if ln.startswith("PROBE "))[6:])


def _study_cmd(mirror: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, str(ROOT / "scripts" / "run_study.py"), "--dataset", "grab", "--data", str(mirror),
            "--out", str(out), "--quiet", *extra]


def _kill_midway(cluster: Cluster, proc: subprocess.Popen, rdir: Path, after: int) -> int:
    """Kill the first worker node once ``after`` rollouts are in and it runs a task; returns the
    rollouts in at that moment."""
    victim = cluster.nodes[1]
    t0 = time.time()
    while time.time() - t0 < 900 and proc.poll() is None:
        done = len(list(rdir.glob("*_lift.json")))
        if done >= after and cluster.running_task(victim):
            cluster.kill(victim)
            return done
        time.sleep(0.05)
    raise AssertionError(f"the study ended (rc {proc.poll()}) before a worker node could be killed midway")


def test_a_study_on_a_cluster_that_shares_nothing_loses_no_recording_to_a_lost_node(tmp_path, mirror, cluster):
    seen = _probe(cluster, [mirror / "grab", mirror / "manosim", tmp_path])  # the mirror: an empty tmpfs
    assert len(seen) == 2 and all(not any(there) for _, there in seen), f"a worker node sees the data: {seen}"

    pool_out, ray_out = tmp_path / "pool" / "study.json", tmp_path / "ray" / "study.json"
    env = cluster.driver_env()
    pool = subprocess.run(_study_cmd(mirror, pool_out, "--workers", "2"), env=env, capture_output=True, text=True,
                          timeout=900)
    assert pool.returncode == 0, pool.stderr[-2000:]
    proc = subprocess.Popen(_study_cmd(mirror, ray_out, "--executor", "ray", "--address", cluster.address), env=env,
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "ray_study.err", "w"))
    try:
        at_kill = _kill_midway(cluster, proc, ray_out.parent / "study_rollouts", after=6)
        rc = proc.wait(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 0, (tmp_path / "ray_study.err").read_text()[-3000:]

    a, b = json.loads(pool_out.read_text()), json.loads(ray_out.read_text())
    assert a["failed"] == b["failed"] == {} and a["sequences"] == b["sequences"] and len(a["sequences"]) == 30
    assert at_kill < 30 and b["counts"]["rollouts"] == 30  # killed midway, nothing lost
    for key in ("rollouts", "stable", "lifted", "not_lifted", "unstable"):
        assert b["counts"][key] == a["counts"][key], key
    rows_a, rows_b = ({r["sequence"]: r for r in s["rollouts"]} for s in (a, b))
    assert set(rows_a) == set(rows_b) == set(a["sequences"])
    for seq, ra in rows_a.items():
        assert {k: ra[k] for k in VERDICTS} == {k: rows_b[seq][k] for k in VERDICTS}, seq
        da = json.loads((pool_out.parent / ra["json"]).read_text())
        db = json.loads((ray_out.parent / rows_b[seq]["json"]).read_text())
        # the files it read, as this machine has them (paths, digests, manifest state)
        assert da["inputs"] == db["inputs"] and da["hand_mjcf"] == db["hand_mjcf"], seq
        assert da["object_visual_mesh"] == db["object_visual_mesh"] and da["crop"] == db["crop"], seq
        assert abs(da["lift"]["rise"] - db["lift"]["rise"]) < 1e-3, seq  # m: the same physics, on the same CPU type
        for rel in (da["poses"], da["ablation"]["poses"]):
            pa, pb = np.load(pool_out.parent / rel), np.load(ray_out.parent / rel)
            assert pa["body_pos"].shape == pb["body_pos"].shape and list(pa["body_names"]) == list(pb["body_names"])
