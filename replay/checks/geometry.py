"""Geometry the physical-consistency checks share: convex collision parts as half-spaces,
points in the object frame, signed depth inside the parts, the simulator's centre of mass.

A convex part is the intersection of its hull's face half-spaces ``n.x + d <= 0`` (``n`` the
outward unit normal, scipy's ``ConvexHull.equations``); for a point, ``max(n.x + d)`` over
the faces is exactly minus its depth inside the part, and a lower bound of its distance to
the part outside it. The union of the parts is what the simulator collides with (MuJoCo
and Newton collide with each mesh's convex hull). Lengths in m, object frame unless named
world; quaternions xyzw.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from replay.data.objects import asset_meshes

#: m: a part's vertex bounding box grown by this much before :meth:`ConvexParts.inside_any` tests
#: its faces (far above the ~1e-16 m rounding of ``n.x + d`` and qhull's facet merging, far below
#: any part's size)
BOX_MARGIN_M = 1e-6
#: faces tested at a time by :meth:`ConvexParts.inside_any`
FACE_BLOCK = 64
#: points taken at a time by :meth:`ConvexParts.part_plane_distance`: a (256, faces) block of float64
#: products is 2 MB for a 1,000-face hull and 11 MB for GRAB's largest visual hull (5,298 faces), where
#: all 4,000 points of the mass check at once made 170 MB
POINT_BLOCK = 256


@dataclass(frozen=True)
class ConvexParts:
    """The convex hulls of an object's collision parts, object frame.

    Attributes:
        equations: one (F_i, 4) array per part: outward unit normal and offset of each hull
            face (``n.x + d <= 0`` inside).
        vertices: one (V_i, 3) array per part: the part mesh's vertices, m.
        volumes: (P,) hull volumes, m^3.
        centroids: (P, 3) hull centroids, m.
    """

    equations: tuple
    vertices: tuple
    volumes: np.ndarray
    centroids: np.ndarray

    @classmethod
    def from_meshes(cls, parts: list[trimesh.Trimesh]) -> ConvexParts:
        """From the collision part meshes (object frame, m)."""
        hulls = [p.convex_hull for p in parts]
        return cls(
            tuple(ConvexHull(np.asarray(h.vertices)).equations for h in hulls),
            tuple(np.asarray(p.vertices, float) for p in parts),
            np.array([h.volume for h in hulls], float),
            np.array([h.center_mass for h in hulls], float),
        )

    def center_of_mass(self) -> np.ndarray:
        """(3,) m: the volume-weighted centroid of the part hulls, the centre of mass a simulator
        gives the object at uniform density (overlapping parts counted twice, as it does)."""
        return (self.volumes[:, None] * self.centroids).sum(axis=0) / self.volumes.sum()

    def part_plane_distance(self, pts: np.ndarray) -> np.ndarray:
        """(P, N) m for ``pts`` (N, 3): per part, ``max(n.x + d)`` over its faces: minus the depth
        inside it (< 0), or a lower bound of the distance to it (> 0).

        The points go through a part :data:`POINT_BLOCK` at a time, so the (block, faces) products
        stay in cache instead of one (N, faces) array (4,000 points against a 5,000-face visual
        hull: 160 MB); each ``n.x + d`` is the same product as over all points at once
        (``tests/test_throughput.py`` checks the result bit for bit on the GRAB hulls).
        """
        pts = np.asarray(pts, float)
        out = np.empty((len(self.equations), len(pts)))
        for i, eq in enumerate(self.equations):
            n, d = eq[:, :3].T, eq[:, 3]
            for k in range(0, len(pts), POINT_BLOCK):
                out[i, k : k + POINT_BLOCK] = (pts[k : k + POINT_BLOCK] @ n + d).max(axis=1)
        return out

    def inside_any(self, pts: np.ndarray) -> np.ndarray:
        """(N,) bool for ``pts`` (N, 3) m: inside (or on) at least one part, i.e.
        ``(part_plane_distance(pts) <= 0).any(axis=0)``, computed part by part only for the
        points not yet inside an earlier part and within the part's vertex bounding box grown by
        :data:`BOX_MARGIN_M` (a point farther out lies outside the part by at least that much,
        ~10^10 times the rounding of ``n.x + d``, so it cannot test inside), and faces taken
        :data:`FACE_BLOCK` at a time, a point dropped at its first face with ``n.x + d > 0``.
        Each ``n.x + d`` tested is the same product as in :meth:`part_plane_distance`; on the
        mirror's 31 GRAB objects (the 40,000 points of
        :func:`replay.checks.object_mass.part_overlap` each) every point's answer is the same.
        """
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
        """(P,) m: how deep each part's hull centroid lies inside it (the inradius of a box or a
        sphere; at most the depth any point can reach in a part of that thickness)."""
        return np.array([-float((c @ eq[:, :3].T + eq[:, 3]).max()) for c, eq in zip(self.centroids, self.equations)])

    def plane_distance(self, pts: np.ndarray) -> np.ndarray:
        """(N,) m for ``pts`` (N, 3): the smallest over the parts of ``max(n.x + d)``: minus the
        depth inside the deepest-containing part (< 0 inside), else a lower bound of the
        distance to the nearest part (> 0 outside)."""
        return self.part_plane_distance(pts).min(axis=0)


#: ConvexParts kept per process by :func:`collision_parts` (one object's parts per recording)
PARTS_CACHE_SIZE = 64
_PARTS: dict = {}


def collision_parts(asset) -> ConvexParts:
    """The :class:`ConvexParts` of ``asset.collision_meshes`` (object frame, m), built once per
    process and file version (resolved path, size, modification time: as the mesh cache of
    :func:`replay.data.mesh_io.load_mesh`), so the checks of one recording that test points
    against the parts (mass, rest, penetration) share one set of hulls.

    Raises:
        DataError: a part missing or unreadable (:func:`replay.data.objects.asset_meshes`).
    """
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
    """World points of many frames into the object frame of each: ``pos`` (F, 3) m, ``quat`` (F, 4)
    xyzw, ``pts`` (F, K, 3) m -> (F, K, 3) m; frame ``f`` is :func:`to_object_frame` of
    ``(pos[f], quat[f], pts[f])`` (the same rotation matrices; equal to rounding), in one call."""
    pos, pts = np.asarray(pos, float), np.asarray(pts, float)
    R = Rotation.from_quat(np.asarray(quat, float)).as_matrix()  # (F, 3, 3), object -> world
    return np.einsum("fji,fkj->fki", R, pts - pos[:, None, :])  # R^T (p - pos)


def to_world(pos: np.ndarray, quat: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Object-frame points (N, 3) m into the world at pose ``pos`` (3,) m / ``quat`` (4,) xyzw."""
    return Rotation.from_quat(quat).apply(np.asarray(pts, float)) + pos
