"""Run a study's jobs as Ray tasks, one per recording, on a local Ray or a cluster (docs/study.md, "On Ray").
Requires ``ray`` (``pip install 'grasp-replay[cluster]'``) on every node."""

from __future__ import annotations

import logging
import os
import socket
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from replay.errors import DataError, UsageError
from replay.study.ray_transfer import job_inputs, keep_outputs, shared_inputs

#: reruns of a task lost with its node (Ray's ``max_retries``): a few preempted nodes in a row
TASK_RETRIES = 3


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError("--executor", "ray is not installed: pip install 'grasp-replay[cluster]'") from None
    return ray


def _task(fn: Callable, job, staging, shared_box: list, own: dict, study_files: dict):
    """The Ray task: :func:`~replay.study.ray_transfer.run_staged`; ``shared_box[0]`` fetched only if needed."""
    import ray

    from replay.study.ray_transfer import run_staged

    try:
        return run_staged(fn, job, staging, get_shared=lambda: ray.get(shared_box[0]), own=own, study_files=study_files)
    except OSError as e:  # this node's staging folder: the recording fails, the study goes on
        return (
            "error",
            f"Ray node {socket.gethostname()} could not stage this recording's files: {type(e).__name__}: {e}",
            {},
            {},
            [],
        )


def _connect(ray, address: str | None, num_cpus: int | None, say: Callable[[str], None] | None = None) -> None:
    """Join the cluster at ``address`` or start a local Ray bound to loopback only, unless connected. Raises UsageError:
    the cluster cannot be reached; a local Ray cannot start, or not on loopback only."""
    if ray.is_initialized():
        return
    try:
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
        else:
            _init_loopback(ray, num_cpus)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise UsageError(
            "--address" if address else "--executor",
            f"cannot connect to Ray at {address!r}: {e}" if address else f"cannot start a local Ray: {e}",
        ) from None
    gcs = ray.get_runtime_context().gcs_address
    if not address and not gcs.startswith("127.0.0.1:"):  # a Ray that binds otherwise: not used
        ray.shutdown()
        raise UsageError(
            "--executor", f"the local Ray listens at {gcs}, not on loopback only; start one yourself and pass --address"
        )
    if say is not None:
        say(
            f"ray: {'joined the cluster' if address else 'a local Ray, loopback only'}: GCS at {gcs}"
            + ("" if address else "; no dashboard")
        )


def _init_loopback(ray, num_cpus: int | None) -> None:
    """Start a local Ray whose every server listens on 127.0.0.1 only, without its dashboard (CVE-2023-48022:
    Ray has no authentication). ``ENABLE_RAY_CLUSTER`` false (``ray/_private/ray_constants.py``) keeps Ray from
    binding every interface; tests/test_ray_bind.py checks the sockets."""
    from ray._private import ray_constants

    # a local Ray's workers import this very checkout (not whatever is installed)
    root = str(Path(__file__).resolve().parent.parent.parent)
    env = {
        "PYTHONPATH": os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR: "0",
    }
    saved = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
            runtime_env={"env_vars": env},
            _node_ip_address="127.0.0.1",
        )
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved


def _in_flight(ray) -> int:
    """Tasks submitted at a time: twice the cluster's CPUs, at least 2."""
    return max(2, 2 * int(ray.cluster_resources().get("CPU", 0)))


def _failure(e: Exception) -> str:
    """One line for a task Ray could not finish: the escaped exception (``RayTaskError.cause``) or Ray's reason."""
    cause = getattr(e, "cause", None)
    what = e if cause is None else cause
    first = str(what).strip().splitlines()[0] if str(what).strip() else ""
    return f"the Ray task of this recording failed: {type(what).__name__}: {first}"


class _Shared:
    """The shared inputs of each (dataset, data, hand) the jobs name, put in the object store once."""

    def __init__(self, ray):
        self.ray, self.puts = ray, {}

    def of(self, job) -> tuple:
        """(its Staging, ``[ObjectRef]`` of the shared files: a list, so Ray passes the reference, not the files)."""
        key = (job.dataset, job.data_dir, job.manosim_dir)
        if key not in self.puts:
            staging, files = shared_inputs(*key)
            self.puts[key] = staging, [self.ray.put(files)]
        return self.puts[key]


def run_jobs_ray(
    jobs: Sequence,
    fn: Callable,
    on_result: Callable[[object, str, object], None],
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    say: Callable[[str], None] | None = None,
) -> None:
    """Run ``fn(job)`` for every job as a Ray task; ``on_result(job, status, value)`` as each ends.

    Args:
        fn: module-level ``fn(job) -> (status, value)``.
        on_result: called after a task's results are written; a task Ray could not finish gets ``("error", line)``.
        address: a Ray cluster to join; None starts a local Ray (``num_cpus``, default all) on loopback only.

    Raises:
        UsageError: ray not installed, or the cluster at ``address`` cannot be reached.
        DataError, OSError: the study's shared inputs cannot be read.
        KeyboardInterrupt: Ctrl-C, after the unfinished tasks are cancelled.
    """
    ray = _ray()
    _connect(ray, address, num_cpus, say)
    task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)(_task)
    shared, queue, running = _Shared(ray), deque(jobs), {}
    try:
        while queue or running:
            room = _in_flight(ray) - len(running)
            while queue and room > 0:
                job = queue.popleft()
                staging, box = shared.of(job)
                try:
                    own, study_files = job_inputs(job)
                except DataError as e:  # as the pool's job would refuse it
                    on_result(job, "refused", str(e))
                    continue
                except OSError as e:
                    on_result(job, "error", f"{type(e).__name__}: {e}")
                    continue
                running[task.remote(fn, job, staging, box, own, study_files)] = job, staging
                room -= 1
            if not running:
                continue
            ready, _ = ray.wait(list(running), num_returns=1, timeout=0.5)
            for ref in ready:
                job, staging = running.pop(ref)
                try:
                    status, value = keep_outputs(job, staging, ray.get(ref))
                except ray.exceptions.RayError as e:
                    status, value = "error", _failure(e)
                on_result(job, status, value)
    except BaseException:  # Ctrl-C, or the study stops (replay.fileio.stop_on_storage_fault): end what runs
        for ref in running:
            ray.cancel(ref, force=True)
        raise
