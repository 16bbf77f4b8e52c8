"""Quaternion sign: every quaternion stream of a recording made sign-continuous before anything
interpolates or differences it.

``q`` and ``-q`` are one rotation, so a tracker or an export may flip the sign of any frame;
a slerp or a frame-to-frame difference across a flip takes the long way round (the same
rotation read as a 360 deg turn). :func:`continuous_quaternions` chooses, frame by frame,
the sign nearer the previous frame (``q_t . q_{t-1} >= 0``), keeping the first frame's sign as
recorded, for every stream: each object's ``quat`` (T, 4), ``wrist_quat`` (T, 4) and
``finger_quat`` (T, 15, 4) where the adapter gives them, and the GRAB recorded wrist
(``meta["grab_wrist_quat_xyzw"]``). A take with any set of frames after the first negated
therefore becomes the clean take exactly (negation is exact in floating point), and replays
bit for bit like it (``tests/test_bad_inputs.py``).

Not a fault, so not a flag: the flips repaired are counted in ``meta["input_checks"]``. The
clean mirror has none (0 in the 40 GRAB recordings' object and wrist streams, 0 in TACO's),
so it is unchanged. All quaternions xyzw.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from replay.data.types import ObjectTrack, Recording


def sign_continuous(q: np.ndarray) -> tuple[np.ndarray, int]:
    """``(q', flips)``: quaternions (T, ..., 4) with each frame's sign chosen so that
    ``q'_t . q'_{t-1} >= 0`` per stream (the first frame as given); ``flips`` frames changed.

    A frame that is not finite (an untracked frame) is left as it is and the next frame is
    compared with the last finite one.

    Vectorised over frames (:func:`_stream_signs`), the same result bit for bit as the
    frame-by-frame rule: negation is exact, so ``q_t . (-r) == -(q_t . r)`` and each frame's
    sign is the previous finite frame's times the sign of the raw dot product (``+1`` again
    where that product is 0, as the rule keeps such a frame as given).
    """
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
    """(T,) bool: the frames of one stream ``s`` (T, 4) that :func:`sign_continuous` negates.

    Over the finite frames in order (frame 0 counted only where finite), ``d_i`` = raw
    ``q_i . q_{i-1}``; frame i is negated when the product of ``sign(d)`` since the last
    ``d <= 0``-free run start is negative: ``d > 0`` keeps the previous frame's sign, ``d < 0``
    swaps it, ``d == 0`` (or no previous finite frame) resets it to as given.
    """
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
    """A copy of ``rec`` with every quaternion stream sign-continuous (module doc).

    Returns:
        (recording, figures ``{stream: flips}`` of the streams that had any; empty when none).
    """
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
