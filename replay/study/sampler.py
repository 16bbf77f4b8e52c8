"""Seeded joint samples of the sampled verdict's variables: one Latin hypercube per recording, seeded by ``(seed,
CRC-32 of the recording's key)`` so every condition and corruption of a recording sees the same samples."""

from __future__ import annotations

import zlib

import numpy as np
from scipy.stats import norm, qmc

from replay.study.uncertainty import sample_fields


def _rng(seed: int, key: str, stream: int = 0) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(str(key).encode()), int(stream)])


def draw_samples(
    seed: int, key: str, n: int, *, sigmas: dict, variables: tuple, ranges: dict | None = None
) -> list[dict]:
    """``n`` joint samples ``{variable name: value}`` of recording ``key`` (``grip_force_n`` N,
    ``pad_compression_mm`` mm, ``wrist_offset`` (3,) m, ``object_offset`` (3,) m).

    Args:
        sigmas: :func:`replay.study.uncertainty.data_sigmas` (``wrist_mm``, ``object_mm``).
        ranges: ``{name: (low, high)}`` of the ``object`` variables for this recording.

    Raises:
        ValueError: ``n`` < 1, or an ``object`` variable without its range."""
    if n < 1:
        raise ValueError(f"samples must be >= 1, got {n}")
    ranges = ranges or {}
    missing = [v.name for v in variables if v.kind == "object" and v.name not in ranges]
    if missing:
        raise ValueError(f"no per-recording range for {missing}")
    dims = sum(v.dims for v in variables)
    u = qmc.LatinHypercube(d=dims, seed=_rng(seed, key)).random(n)  # (n, dims) in [0, 1)
    out = [dict() for _ in range(n)]
    col = 0
    for v in variables:
        x = u[:, col : col + v.dims]
        col += v.dims
        for i in range(n):
            out[i][v.name] = _value(v, x[i], sigmas, ranges)
    return out


def _value(v, x: np.ndarray, sigmas: dict, ranges: dict):
    if v.kind == "uniform":
        return float(v.low + (v.high - v.low) * x[0])
    if v.kind == "object":
        lo, hi = (float(a) for a in ranges[v.name])
        return float(lo + (hi - lo) * x[0])
    if v.kind == "choice":
        return v.levels[min(int(x[0] * len(v.levels)), len(v.levels) - 1)]
    z = norm.ppf(np.clip(x, 1e-9, 1 - 1e-9))
    sigma_m = float(sigmas[v.sigma]) / 1000.0
    xyz = np.zeros(3)
    xyz[: v.dims] = z * sigma_m
    return tuple(float(a) for a in xyz)


def directions(seed: int, key: str, n: int) -> np.ndarray:
    """(n,) rad, uniform on [0, 2 pi): the wrist-offset corruption's direction per sample, its own stream."""
    return _rng(seed, key, 1).uniform(0.0, 2.0 * np.pi, n)


def sample_variant(s: dict, variables: tuple):
    """The :class:`~replay.sim.engine.variants.Variant` of one sample ``s``."""
    from replay.sim.engine.variants import Variant

    return Variant(**sample_fields(s, variables))


def driver_keys(samples: list[dict], variables: tuple) -> dict:
    """{variable: (n,) float}: each variable as one number per sample (softness: its solref time constant, s;
    offsets: their length, m)."""
    by = {v.name: v for v in variables}
    return {name: by[name].keys([s[name] for s in samples]) for name in samples[0]}
