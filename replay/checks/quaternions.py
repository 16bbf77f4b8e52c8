"""Quaternion sign: every quaternion stream (xyzw) made sign-continuous before anything interpolates it; flips are
repaired and counted, not flagged."""

from __future__ import annotations

import dataclasses

import numpy as np

from replay.data.types import ObjectTrack, Recording


def sign_continuous(q: np.ndarray) -> tuple[np.ndarray, int]:
    """``(q', flips)``: quaternions (T, ..., 4) with ``q'_t . q'_{t-1} >= 0`` per stream (a non-finite frame left as is
    and skipped); ``flips``: frames changed."""
    q = np.array(q, dtype=float, copy=True)
    if q.shape[0] < 2:
        return q, 0
    flat = q.reshape(q.shape[0], -1, 4)
    flips = 0
    for k in range(flat.shape[1]):
        neg = _stream_signs(flat[:, k])
        if neg.any():
            flat[neg, k] = -flat[neg, k]
            flips += int(neg.sum())
    return flat.reshape(q.shape), flips


def _stream_signs(s: np.ndarray) -> np.ndarray:
    """(T,) bool: the frames of stream ``s`` (T, 4) that :func:`sign_continuous` negates."""
    fin = np.flatnonzero(np.all(np.isfinite(s), axis=-1))
    neg = np.zeros(s.shape[0], bool)
    if fin.size < 2:
        return neg
    d = np.sum(s[fin[1:]] * s[fin[:-1]], axis=-1)
    # per finite frame after the first: +1 keep, -1 swap, 0 reset (d == 0 or not a number)
    step = np.where(d > 0, 1, np.where(d < 0, -1, 0))
    idx = np.arange(1, fin.size)
    last_reset = np.maximum.accumulate(np.where(step == 0, idx, 0))  # run start (0: frame fin[0])
    swaps = np.concatenate([[0], np.cumsum(step < 0)])  # swaps up to each finite frame
    parity = (swaps[idx] - swaps[last_reset]) % 2
    neg[fin[1:]] = parity == 1
    return neg


def continuous_quaternions(rec: Recording) -> tuple[Recording, dict]:
    """``rec`` with every quaternion stream sign-continuous, and ``{stream: flips}`` of those that had any."""
    figs: dict = {}
    objects = []
    for tr in rec.objects:
        q, n = sign_continuous(tr.quat)
        if n:
            figs[f"objects[{tr.name}].quat"] = n
            tr = ObjectTrack(asset=tr.asset, pos=tr.pos, quat=q, tracked=tr.tracked)
        objects.append(tr)
    changes: dict = {"objects": objects}
    for name in ("wrist_quat", "finger_quat"):
        if getattr(rec, name) is not None:
            q, n = sign_continuous(getattr(rec, name))
            if n:
                figs[name] = n
                changes[name] = q
    meta = rec.meta
    if meta.get("grab_wrist_quat_xyzw") is not None:
        q, n = sign_continuous(meta["grab_wrist_quat_xyzw"])
        if n:
            figs["meta.grab_wrist_quat_xyzw"] = n
            meta = dict(meta, grab_wrist_quat_xyzw=q)
    if not figs:
        return rec, {}
    return dataclasses.replace(rec, meta=meta, **changes), figs
