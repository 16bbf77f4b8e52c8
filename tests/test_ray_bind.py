"""--executor ray without --address: the local Ray it starts listens on loopback only.

Ray has no authentication (CVE-2023-48022: whatever reaches its ports runs code), so the local
Ray a study starts must not be reachable from the network. Read with psutil: every listening
TCP socket of this process and of the processes it started (GCS, raylet, workers, agents).
"""

from __future__ import annotations

import ipaddress

import pytest

ray = pytest.importorskip("ray", reason="ray is in the dev extra: pip install -e '.[dev]'")
psutil = pytest.importorskip("psutil", reason="psutil is in the dev extra: pip install -e '.[dev]'")


def _listening() -> list[tuple[str, str]]:
    """(process name, bound address) of every listening TCP socket of this process and its descendants."""
    me = psutil.Process()
    pids = {me.pid} | {p.pid for p in me.children(recursive=True)}
    out = []
    for c in psutil.net_connections(kind="tcp"):
        if c.status == psutil.CONN_LISTEN and c.pid in pids:
            out.append((psutil.Process(c.pid).name(), c.laddr.ip))
    return out


def _loopback(ip: str) -> bool:
    a = ipaddress.ip_address(ip)
    if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None:  # ::ffff:127.0.0.1
        a = a.ipv4_mapped
    return a.is_loopback


def test_a_local_ray_listens_on_loopback_only():
    """Measured on Ray 2.60.0: 6 sockets (GCS, raylet x2, the driver, a worker, the runtime-env
    agent), each on 127.0.0.1; without the loopback setting 5 of them are on ``::``. About 5 s."""
    from ray._private import ray_constants

    from replay.study.ray_pool import _connect

    before = ray_constants.ENABLE_RAY_CLUSTER
    if ray.is_initialized():
        ray.shutdown()
    said = []
    _connect(ray, None, 1, said.append)
    try:
        # a task: a worker process starts and opens its own server
        assert ray.get(ray.remote(lambda: 1).remote()) == 1
        socks = _listening()
        names = {n for n, _ in socks}
        # the servers Ray starts are there (else the check below would pass on nothing)
        assert any("gcs_server" in n for n in names) and any("raylet" in n for n in names), socks
        wide = [(n, ip) for n, ip in socks if not _loopback(ip)]
        assert wide == [], f"listening beyond loopback: {wide}"
        gcs = ray.get_runtime_context().gcs_address
        assert gcs.startswith("127.0.0.1:")
        assert said == [f"ray: a local Ray, loopback only: GCS at {gcs}; no dashboard"]
    finally:
        ray.shutdown()
    # the setting that made it so is this call's only: a later cluster connection is as Ray has it
    assert ray_constants.ENABLE_RAY_CLUSTER == before
