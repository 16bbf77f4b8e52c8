"""The parallel-jaw check's grasp lines (``thumb_index`` as recorded, ``principal_1`` / ``principal_2`` through the
COM) and their span through the collider, a bundle over the pad face cut with each convex hull. Positions m, world."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from replay.data.types import Recording
from replay.errors import DataError

#: manopth landmark ids of the thumb tip and the index tip (replay.data.types.LANDMARK_NAMES)
THUMB_TIP, INDEX_TIP = 4, 8
#: the grasp lines' names, in the order the check tries them
LINE_NAMES = ("thumb_index", "principal_1", "principal_2")
#: lines per side of the grid over the pad face (7 x 7 reaches the pads' span on cubesmall's diagonal line)
BUNDLE = 7


@dataclass(frozen=True)
class GraspLine:
    """One grasp line: ``point`` (3,) m and unit ``direction`` (3,), world; ``source``: how it was made."""

    name: str
    point: np.ndarray
    direction: np.ndarray
    source: str

    def to_dict(self) -> dict:
        return dict(
            name=self.name,
            point=[float(x) for x in self.point],
            direction=[float(x) for x in self.direction],
            source=self.source,
        )


def _pose(pos, quat_xyzw):
    return np.asarray(pos, float), Rotation.from_quat(np.asarray(quat_xyzw, float))


def thumb_index_line(rec: Recording, settled_origin: np.ndarray) -> GraspLine:
    """The recorded thumb-index line at the grasp frame, moved with the object onto ``settled_origin`` (7,) (m, xyzw,
    world). DataError: no landmarks, or the tips coincide / are not finite."""
    g = int(rec.grasp_frame)
    if rec.landmarks is None:
        raise DataError(rec.source, "landmarks", "no landmarks: no thumb-index grasp line")
    a, b = rec.landmarks[g, THUMB_TIP].astype(float), rec.landmarks[g, INDEX_TIP].astype(float)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or np.linalg.norm(b - a) < 1e-4:
        raise DataError(rec.source, f"landmarks[{g}]", "thumb and index tips coincide or are not finite")
    obj = rec.target_object
    t_g, r_g = _pose(obj.pos[g], obj.quat[g])
    t_s, r_s = _pose(settled_origin[:3], settled_origin[3:7])
    a_s, b_s = (r_s.apply(r_g.inv().apply(p - t_g)) + t_s for p in (a, b))
    d = b_s - a_s
    return GraspLine(
        "thumb_index",
        0.5 * (a_s + b_s),
        d / np.linalg.norm(d),
        f"landmarks {THUMB_TIP}->{INDEX_TIP} at grasp frame {g}, in the settled object pose",
    )


def principal_lines(com: np.ndarray, inertia_body: np.ndarray, quat_xyzw: np.ndarray) -> list[GraspLine]:
    """The principal horizontal axes through ``com`` (3,) m world of ``inertia`` (3, 3) kg·m^2 body frame; largest
    first."""
    R = Rotation.from_quat(np.asarray(quat_xyzw, float)).as_matrix()
    iw = R @ np.asarray(inertia_body, float) @ R.T
    vals, vecs = np.linalg.eigh(iw[:2, :2])
    out = []
    for k, i in enumerate(np.argsort(vals)[::-1]):
        d = np.array([vecs[0, i], vecs[1, i], 0.0])
        out.append(
            GraspLine(
                f"principal_{k + 1}",
                np.asarray(com, float).copy(),
                d / np.linalg.norm(d),
                f"horizontal principal axis {k + 1} (moment {vals[i]:.3g} kg m^2) through the centre of mass",
            )
        )
    return out


def hull_planes(vertices_world: list[np.ndarray]) -> list[np.ndarray]:
    """Half-space form (n, 4) ``[normal, offset]`` (``normal . x + offset <= 0`` inside) of each part's hull."""
    return [ConvexHull(np.asarray(v, float)).equations for v in vertices_world]


def _chord(eqs: np.ndarray, p: np.ndarray, u: np.ndarray) -> tuple[float, float] | None:
    """Parameter interval ``[t0, t1]`` (m) of the line ``p + t u`` inside one convex hull, or None."""
    n, off = eqs[:, :3], eqs[:, 3]
    a = n @ u
    b = -(n @ p + off)  # a t <= b
    lo, hi = -np.inf, np.inf
    par = np.abs(a) < 1e-12
    if np.any(b[par] < 0):
        return None
    pos, neg = a > 1e-12, a < -1e-12
    if np.any(pos):
        hi = float(np.min(b[pos] / a[pos]))
    if np.any(neg):
        lo = float(np.max(b[neg] / a[neg]))
    return (lo, hi) if lo <= hi else None


def line_span(planes: list[np.ndarray], line: GraspLine, frame: np.ndarray, *, half_width: float) -> dict:
    """Where the line and the pad-face bundle about it meet the collider: ``{"centre_hit": bool, "span": [t0, t1] m
    along the direction from the point, or None}``. ``planes``: per part, :func:`hull_planes` in the world; ``frame``:
    (3, 3) columns jaw axis, across, up; ``half_width``: the pad face's, m."""
    u = line.direction
    spans, centre = [], False
    grid = np.concatenate([[0.0], np.linspace(-half_width, half_width, BUNDLE)])
    for dv in grid:
        for dw in grid:
            p = line.point + dv * frame[:, 1] + dw * frame[:, 2]
            for eqs in planes:
                c = _chord(eqs, p, u)
                if c is not None:
                    spans.append(c)
                    centre = centre or (dv == 0.0 and dw == 0.0)
    if not spans:
        return {"centre_hit": False, "span": None}
    return {"centre_hit": centre, "span": [float(min(s[0] for s in spans)), float(max(s[1] for s in spans))]}
