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
    """
    q = np.array(q, dtype=float, copy=True)
    flips = 0
    if q.shape[0] < 2:
        return q, 0
    flat = q.reshape(q.shape[0], -1, 4)
    ref = flat[0].copy()
    for t in range(1, flat.shape[0]):
        ok = np.all(np.isfinite(flat[t]), axis=-1) & np.all(np.isfinite(ref), axis=-1)
        neg = ok & (np.sum(flat[t] * ref, axis=-1) < 0)
        if neg.any():
            flat[t][neg] *= -1.0
            flips += int(neg.sum())
        fin = np.all(np.isfinite(flat[t]), axis=-1)
        ref[fin] = flat[t][fin]
    return flat.reshape(q.shape), flips


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
