"""Job functions for tests of replay.study.pool / replay.data.isolate (module-level: spawned children import them)."""

from __future__ import annotations

import os
import signal
import time


def crash_or_square(job):
    """``("ok", job * job)``; job 3 kills its own process with SIGSEGV, as a crash in native code does."""
    if job == 3:
        os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(0.05)
    return "ok", job * job


def hang_or_square(job):
    """``("ok", job * job)``; job 2 never returns."""
    if job == 2:
        time.sleep(3600)
    time.sleep(0.05)
    return "ok", job * job


def segfault():
    os.kill(os.getpid(), signal.SIGSEGV)


def sleep_forever():
    time.sleep(3600)


def raise_value_error(x):
    raise ValueError(f"bad value {x}")


def add(a, b):
    return a + b
