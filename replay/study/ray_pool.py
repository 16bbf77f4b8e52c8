"""Run a study's jobs as Ray tasks: one task per recording, on a local Ray or a cluster that
shares nothing but Ray.

The process pool (:mod:`replay.study.pool`) stays the default; this executor is for studies that
outgrow one machine (``run_study.py --executor ray --address auto`` on a cluster's head node, or
``--address <head>:6379``). Each job is a Ray task of one CPU; no node needs the study's data or
its folder (:mod:`replay.study.ray_transfer`): the dataset's shared files and the hand models are
put in the object store once per study, a recording's own file travels as its task's argument,
and the task sends its results back to this process, which alone writes the study's folder, as
each task ends, so resume and the study JSON work as with the pool. At most
:func:`_in_flight` tasks are submitted at a time (their arguments held by Ray until they end).

A task lost with its node (the node killed, preempted, out of the cluster) is rerun by Ray on
another (``max_retries`` = :data:`TASK_RETRIES`, Ray's retry on system failures). An error in
our code is never retried: :func:`replay.study.job.run_job_safe` turns it into that recording's
``"error"`` result (and ``retry_exceptions=False`` covers anything that escapes it). Ray cannot
tell a worker process killed by a crash in native code from one lost with its node: such a
recording runs up to 1 + :data:`TASK_RETRIES` times, then is reported as an error
(``WorkerCrashedError``); the process pool isolates it instead (``REPLAY_ISOLATE=0 --workers 0``
to debug it). Ctrl-C (or a study stopped for want of storage) cancels every task not yet
finished (``ray.cancel(force=True)`` ends running ones) and re-raises.

Requires ``ray`` (``pip install 'grasp-replay[cluster]'``), the same version and this package on
every node; see https://docs.ray.io/en/latest/cluster/vms/user-guides/launching-clusters/on-premises.html.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from replay.errors import DataError, UsageError
from replay.study.ray_transfer import job_inputs, keep_outputs, shared_inputs

#: Reruns of a task lost with its node (Ray's ``max_retries``): a second node lost while the
#: same recording runs again is rare; three covers a few preempted nodes in a row.
TASK_RETRIES = 3


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError("--executor", "ray is not installed: pip install 'grasp-replay[cluster]'") from None
    return ray


def _task(fn: Callable, job, staging, shared_box: list, own: dict, study_files: dict):
    """The Ray task: :func:`replay.study.ray_stage.run_staged` on this node; the shared files are
    fetched from the object store (``shared_box[0]``) only where the node has not staged them."""
    import ray

    from replay.study.ray_stage import run_staged

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
    """Join the cluster at ``address`` or start a local Ray (``num_cpus``) bound to loopback only
    (:func:`_init_loopback`), unless connected; ``say`` (a console line) where it listens.

    Raises:
        UsageError: the cluster at ``address`` cannot be reached; a local Ray cannot start, or does
            not listen on loopback.
    """
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
    """Start a local Ray whose every server listens on 127.0.0.1 only, without its dashboard.

    Ray has no authentication: whatever reaches its ports runs code (CVE-2023-48022). Ray 2.60
    turns a node address of 127.0.0.1 into the machine's reachable IP and binds its gRPC servers
    to every interface, unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` is false (its default on
    macOS and Windows, ``ray/_private/ray_constants.py``: ``ENABLE_RAY_CLUSTER``, read by
    ``services.get_node_ip_address``): for the call it is false and the node address 127.0.0.1,
    and the workers inherit the setting. Measured with psutil on Ray 2.60.0 (tests/test_ray_bind.py):
    6 listening sockets, all on 127.0.0.1 (without: 5 of them on ``::``).
    """
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
    """Tasks submitted at a time: twice the cluster's CPUs (a node's next task is queued while
    its current one ends), at least 2; read again as nodes come and go."""
    return max(2, 2 * int(ray.cluster_resources().get("CPU", 0)))


def _failure(e: Exception) -> str:
    """One line for a task Ray could not run to its end: an exception that escaped the job (its
    own type and message, ``RayTaskError.cause``), or Ray's reason (worker crashed, retries spent)."""
    cause = getattr(e, "cause", None)
    what = e if cause is None else cause
    first = str(what).strip().splitlines()[0] if str(what).strip() else ""
    return f"the Ray task of this recording failed: {type(what).__name__}: {first}"


class _Shared:
    """The shared inputs of each (dataset, data, hand) the jobs name, put in the object store once."""

    def __init__(self, ray):
        self.ray, self.puts = ray, {}

    def of(self, job) -> tuple:
        """(its :class:`~replay.study.ray_transfer.Staging`, ``[ObjectRef]`` of the shared files: a
        list so that Ray hands the task the reference, not the files)."""
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
        jobs: :class:`replay.study.job.Job` s.
        fn: module-level ``fn(job) -> (status, value)`` (:func:`replay.study.job.run_job_safe`).
        on_result: called in this process as each task ends, after its results are written to
            the study's folder (:func:`replay.study.ray_transfer.keep_outputs`); a task Ray could
            not finish (retries spent, worker crashed) gets ``("error", <one line>)``.
        address: a Ray cluster to join (``ray.init(address=...)``); None starts a local Ray
            (``num_cpus`` CPUs, default all) bound to loopback only, unless this process is
            already connected. say: a console line, told where Ray listens.

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
                except OSError as e:  # unreadable here: this recording fails, the study goes on
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
