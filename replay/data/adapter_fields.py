"""Helpers shared by the dataset adapters: fields with clear errors, quaternion order, lift onset, support height."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import trimesh

from replay.data.safe_pickle import load_pickle
from replay.errors import DataError

#: m above its start height: the lift onset (well above a resting tracked object's jitter)
LIFT_THRESHOLD_M = 0.01


def load_dict(path: Path) -> dict:
    """A recording's pickle (:func:`replay.data.safe_pickle.load_pickle`); DataError unless a dict at top level."""
    data = load_pickle(path)
    if not isinstance(data, dict):
        raise DataError(path, None, f"expected a dict at top level, got {type(data).__name__}")
    return data


def get_field(data: Any, dotted: str, source: Path) -> Any:
    """``data["a"]["b"]`` for ``dotted="a.b"``; DataError naming the file and field if absent."""
    cur = data
    for part in dotted.split("."):
        if not isinstance(cur, dict):
            raise DataError(source, dotted, f"expected a dict at {part!r}, got {type(cur).__name__}")
        if part not in cur:
            raise DataError(source, dotted, "missing field")
        cur = cur[part]
    return cur


def get_array(
    data: Any, dotted: str, source: Path, *, shape: tuple, dtype=np.float64, finite: bool = True
) -> np.ndarray:
    """A numeric array field, shape (``-1``: any) and (``finite``) finiteness checked; DataError names the frame."""
    value = get_field(data, dotted, source)
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError):
        raise DataError(source, dotted, f"expected a numeric array, got {type(value).__name__}") from None
    if arr.ndim != len(shape) or any(s != -1 and s != a for s, a in zip(shape, arr.shape)):
        raise DataError(source, dotted, f"expected shape {shape} (-1 = any), got {arr.shape}", cause="stream_shape")
    if finite and not np.all(np.isfinite(arr)):
        if arr.ndim >= 1 and arr.shape[0] > 0:
            bad = np.flatnonzero(~np.all(np.isfinite(arr.reshape(arr.shape[0], -1)), axis=1))
            raise DataError(
                source,
                dotted,
                f"non-finite values in {bad.size} frame(s), first at frame {int(bad[0])}",
                cause="untracked_frames",
            )
        raise DataError(source, dotted, "non-finite values", cause="untracked_frames")
    return arr


def wxyz_to_xyzw(q: np.ndarray, source: Path, field: str, *, tol: float = 1e-3) -> np.ndarray:
    """Scalar-first quaternions (..., 4) to scalar-last, normalised; raises DataError when ``| |q| - 1 | > tol``."""
    q = np.asarray(q, float)
    n = np.linalg.norm(q, axis=-1)
    if np.any(np.abs(n - 1.0) > tol):
        bad = int(np.flatnonzero(np.abs(n - 1.0).reshape(-1) > tol)[0])
        raise DataError(
            source,
            field,
            f"quaternion not unit length (first at index {bad}, |q|={n.reshape(-1)[bad]:.4f})",
            cause="quaternion",
        )
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1) / n[..., None]


def lift_onset(pos: np.ndarray, threshold: float = LIFT_THRESHOLD_M) -> int | None:
    """First frame whose z exceeds the first frame's by more than ``threshold`` m (``pos`` (T, 3) m, Z up), or None."""
    z = np.asarray(pos)[:, 2]
    above = np.flatnonzero(z > z[0] + threshold)
    return int(above[0]) if above.size else None


def required_onset(pos: np.ndarray, source: Path, field: str) -> int:
    """:func:`lift_onset` of ``pos`` (T, 3) m; DataError naming ``field`` where the object never rises."""
    onset = lift_onset(pos, LIFT_THRESHOLD_M)
    if onset is None:
        raise DataError(
            source, field, f"object never rises {LIFT_THRESHOLD_M * 100:.0f} cm above its start: no lift onset"
        )
    return onset


def top_surface_height(
    mesh: trimesh.Trimesh, xy: np.ndarray, *, loc: np.ndarray | None = None, rot: np.ndarray | None = None
) -> tuple[float, str]:
    """``(z m, "ray" | "max_z")``: the top of a support mesh below ``xy`` (2,) m by a ray cast down, else its highest
    z; the mesh (own frame) posed at ``loc`` (3,) m and ``rot`` (3, 3) own -> world (default: already world)."""
    loc = np.zeros(3) if loc is None else np.asarray(loc, float)
    rot = np.eye(3) if rot is None else np.asarray(rot, float)
    top = float((np.asarray(mesh.vertices, float) @ rot.T + loc)[:, 2].max())  # the posed mesh's bounds[1, 2]
    origin = np.array([xy[0], xy[1], top + 1.0])
    locs, _, _ = mesh.ray.intersects_location(((origin - loc) @ rot)[None], (np.array([0.0, 0.0, -1.0]) @ rot)[None])
    if len(locs):
        return float((locs @ rot.T + loc)[:, 2].max()), "ray"
    return top, "max_z"
