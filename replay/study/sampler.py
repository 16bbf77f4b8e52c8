"""Seeded joint samples of the sampled verdict's variables (:mod:`replay.study.uncertainty`) as
:class:`~replay.sim.engine.variants.Variant` s: one Latin hypercube (``scipy.stats.qmc.LatinHypercube``) per
recording, seeded by ``(seed, CRC-32 of the recording's key)``, so every condition and corruption of a recording
sees the same samples; normal variables through ``norm.ppf``; a corruption's own draw is a second stream."""

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
    """``n`` joint samples of recording ``key``: each ``{variable name: value}`` (``friction``, ``softness``,
    ``torsional_friction``, ``object_mass_scale``, ``grip_force_n`` N and ``pad_compression_mm`` where the
    physics samples them, ``wrist_offset`` (3,) m, ``object_offset`` (3,) m).

    Args:
        seed: the study's ``--seed``. key: the recording's key (its sequence). n: samples (>= 1).
        sigmas: :func:`replay.study.uncertainty.data_sigmas` (``wrist_mm``, ``object_mm``).
        variables: the physics' variables (:func:`replay.study.uncertainty.variables`), or as the physics
            ``calibrated`` centres them (:func:`replay.study.calibration.variables_for`; the same dimensions,
            so the same draws).
        ranges: ``{name: (low, high)}`` of the ``object`` variables for this recording
            (:func:`replay.study.uncertainty.object_ranges`).

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
    """(n,) rad: a random horizontal direction per sample (the wrist-offset corruption's), uniform on
    [0, 2 pi), its own stream of ``(seed, key)``."""
    return _rng(seed, key, 1).uniform(0.0, 2.0 * np.pi, n)


def sample_variant(s: dict, variables: tuple):
    """The :class:`~replay.sim.engine.variants.Variant` of one sample ``s`` (:func:`draw_samples`): each of
    ``variables``' own edit (:func:`replay.study.uncertainty.sample_fields`)."""
    from replay.sim.engine.variants import Variant

    return Variant(**sample_fields(s, variables))


def driver_keys(samples: list[dict], variables: tuple) -> dict:
    """{variable: (n,) float}: each sampled variable as one number per sample, ordered as its effect
    is read (:func:`replay.protocol.p_lift_stats.driver`): each variable's own key
    (:meth:`replay.study.uncertainty.Variable.keys`: softness as its solref time constant, s, larger is softer;
    the offsets as their length, m; the others as they are)."""
    by = {v.name: v for v in variables}
    return {name: by[name].keys([s[name] for s in samples]) for name in samples[0]}
