"""Module-level functions for tests/test_throughput.py (spawned pool workers import them)."""

from __future__ import annotations

import os

_WARMED: list[int] = []


def mark_warm() -> None:
    """A pool ``warm`` function: remembers, in this worker process, that it ran."""
    _WARMED.append(os.getpid())


def warmed_before(job):
    """``("ok", (job, whether this worker's warm function ran before this job))``."""
    return "ok", (job, os.getpid() in _WARMED)


def frame_by_frame_signs(q):
    """The frame-by-frame rule of replay.checks.quaternions.sign_continuous, written as the rule
    reads (the reference its vectorised form must match bit for bit): each finite frame takes the
    sign whose dot product with the last finite frame (as already chosen) is >= 0."""
    import numpy as np

    q = np.array(q, dtype=float, copy=True)
    if q.shape[0] < 2:
        return q, 0
    flat = q.reshape(q.shape[0], -1, 4)
    ref = flat[0].copy()
    flips = 0
    with np.errstate(invalid="ignore"):
        for t in range(1, flat.shape[0]):
            ok = np.all(np.isfinite(flat[t]), axis=-1) & np.all(np.isfinite(ref), axis=-1)
            neg = ok & (np.sum(flat[t] * ref, axis=-1) < 0)
            flat[t][neg] *= -1.0
            flips += int(neg.sum())
            fin = np.all(np.isfinite(flat[t]), axis=-1)
            ref[fin] = flat[t][fin]
    return flat.reshape(q.shape), flips
