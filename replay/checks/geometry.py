"""Geometry the physical checks share: convex parts as half-spaces ``n.x + d <= 0`` (scipy's
``ConvexHull.equations``). m, object frame unless named world; quaternions xyzw."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from replay.data.objects import asset_meshes

#: m a part's bounding box grows before :meth:`ConvexParts.inside_any` tests faces (>> rounding, << any part)
BOX_MARGIN_M = 1e-6
#: faces tested at a time by :meth:`ConvexParts.inside_any`; points by :meth:`ConvexParts.part_plane_distance`
FACE_BLOCK = 64
POINT_BLOCK = 256


@dataclass(frozen=True)
class ConvexParts:
    """The hulls of an object's collision parts: per part ``equations`` (F_i, 4) outward unit normal and offset,
    ``vertices`` (V_i, 3) m; ``volumes`` (P,) m^3, ``centroids`` (P, 3) m."""

    equations: tuple
    vertices: tuple
    volumes: np.ndarray
    centroids: np.ndarray

    @classmethod
    def from_meshes(cls, parts: list[trimesh.Trimesh]) -> ConvexParts:
        hulls = [p.convex_hull for p in parts]
        return cls(
            tuple(ConvexHull(np.asarray(h.vertices)).equations for h in hulls),
            tuple(np.asarray(p.vertices, float) for p in parts),
            np.array([h.volume for h in hulls], float),
            np.array([h.center_mass for h in hulls], float),
        )

    def center_of_mass(self) -> np.ndarray:
        """(3,) m: volume-weighted centroid of the hulls, overlaps counted twice (a simulator at uniform density)."""
        return (self.volumes[:, None] * self.centroids).sum(axis=0) / self.volumes.sum()

    def part_plane_distance(self, pts: np.ndarray) -> np.ndarray:
        """(P, N) m, per part ``max(n.x + d)`` for ``pts`` (N, 3): -depth inside, a distance lower bound outside."""
        pts = np.asarray(pts, float)
        out = np.empty((len(self.equations), len(pts)))
        for i, eq in enumerate(self.equations):
            n, d = eq[:, :3].T, eq[:, 3]
            for k in range(0, len(pts), POINT_BLOCK):
                out[i, k : k + POINT_BLOCK] = (pts[k : k + POINT_BLOCK] @ n + d).max(axis=1)
        return out

    def inside_any(self, pts: np.ndarray) -> np.ndarray:
        """(N,) bool for ``pts`` (N, 3) m: inside or on at least one part (``part_plane_distance(pts) <= 0``)."""
        pts = np.asarray(pts, float)
        inside = np.zeros(len(pts), bool)
        for eq, v in zip(self.equations, self.vertices):
            lo, hi = v.min(axis=0) - BOX_MARGIN_M, v.max(axis=0) + BOX_MARGIN_M
            cand = np.flatnonzero(~inside & np.all((pts >= lo) & (pts <= hi), axis=1))
            for k in range(0, len(eq), FACE_BLOCK):  # a point outside one face is out: dropped
                if not cand.size:
                    break
                f = eq[k : k + FACE_BLOCK]
                cand = cand[(pts[cand] @ f[:, :3].T + f[:, 3]).max(axis=1) <= 0]
            inside[cand] = True
        return inside

    def core_depths(self) -> np.ndarray:
        """(P,) m: the depth of each hull's centroid inside it."""
        return np.array([-float((c @ eq[:, :3].T + eq[:, 3]).max()) for c, eq in zip(self.centroids, self.equations)])

    def plane_distance(self, pts: np.ndarray) -> np.ndarray:
        """(N,) m for ``pts`` (N, 3): the least over the parts of ``max(n.x + d)`` (< 0 inside)."""
        return self.part_plane_distance(pts).min(axis=0)


PARTS_CACHE_SIZE = 64
_PARTS: dict = {}


def collision_parts(asset) -> ConvexParts:
    """:class:`ConvexParts` of ``asset.collision_meshes``, kept per file version; DataError: a part unreadable."""
    try:
        key = tuple(
            (str(Path(p).resolve()), Path(p).stat().st_size, Path(p).stat().st_mtime_ns) for p in asset.collision_meshes
        )
    except OSError:  # the loader names the file and field
        return ConvexParts.from_meshes(asset_meshes(asset)[1])
    hit = _PARTS.get(key)
    if hit is None:
        hit = ConvexParts.from_meshes(asset_meshes(asset)[1])
        if len(_PARTS) >= PARTS_CACHE_SIZE:
            _PARTS.pop(next(iter(_PARTS)))
        _PARTS[key] = hit
    return hit


def to_object_frame(pos: np.ndarray, quat: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """World points (N, 3) m into the object frame of pose ``pos`` (3,) m / ``quat`` (4,) xyzw."""
    return Rotation.from_quat(quat).inv().apply(np.asarray(pts, float) - pos)


def frames_to_object_frame(pos: np.ndarray, quat: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """``pts`` (F, K, 3) m into each frame's object frame of ``pos`` (F, 3) m, ``quat`` (F, 4) xyzw."""
    pos, pts = np.asarray(pos, float), np.asarray(pts, float)
    R = Rotation.from_quat(np.asarray(quat, float)).as_matrix()  # (F, 3, 3), object -> world
    return np.einsum("fji,fkj->fki", R, pts - pos[:, None, :])  # R^T (p - pos)


def to_world(pos: np.ndarray, quat: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Object-frame points (N, 3) m into the world at pose ``pos`` (3,) m / ``quat`` (4,) xyzw."""
    return Rotation.from_quat(quat).apply(np.asarray(pts, float)) + pos
