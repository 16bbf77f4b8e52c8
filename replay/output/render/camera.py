"""A fixed camera that frames hand and object while they interact."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from replay.output.render.clip import Clip, PoseTrack, SceneObject
from replay.output.render.model import _load_mesh
from replay.output.render.style import FOVY_DEG

#: a study clip's camera frames the hand from where it comes this close to the object's bounding sphere, m (issue 49)
CLIP_REACH_M = 0.06

#: object positions more than this far below the support are fallen off and not framed, m
FALLEN_BELOW_M = 0.05


@dataclass
class CameraView:
    """A fixed free camera: ``lookat`` (3,) m, ``distance`` m, ``azimuth``/``elevation`` deg
    (MuJoCo ``mjvCamera`` conventions: azimuth about +Z from +X, elevation < 0 looks down)."""

    lookat: np.ndarray
    distance: float
    azimuth: float
    elevation: float

    def mjv(self) -> mujoco.MjvCamera:
        cam = mujoco.MjvCamera()
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = self.lookat
        cam.distance = self.distance
        cam.azimuth = self.azimuth
        cam.elevation = self.elevation
        return cam


def frame_camera(
    track: PoseTrack,
    hand_bodies: Sequence[str],
    objects: Sequence[SceneObject],
    *,
    aspect: float,
    elevation: float = -25.0,
    frames: slice | np.ndarray | None = None,
    reach: float | None = 0.25,
    fallen_below: float | None = None,
    also_in_view: np.ndarray | None = None,
    top_clear: float = 0.0,
) -> CameraView:
    """A fixed camera that keeps hand and objects in view while they interact (docs/architecture.md, rendering).

    Args:
        frames: a slice or (F,) bool mask of the frames that aim the view (default all).
        reach: only from the first frame a hand body origin is within this of an object's bounding sphere, m.
        fallen_below: an object's positions from the first frame its origin is below this z are ignored, m.
        also_in_view: (F,) bool, frames kept inside the bounds without turning the view.
        aspect: width / height; ``elevation`` deg (MuJoCo ``mjvCamera``).
        top_clear: top fraction of the image height kept clear (the overlay's text).
    """
    hand_cols = [track.body_names.index(b) for b in hand_bodies if b in track.body_names]
    use = _frames_used(track.num_frames, frames)
    radii, keep_obj = _object_extent(track, objects, fallen_below)
    if reach is not None and hand_cols and objects:
        _from_reach(track, hand_cols, objects, radii, keep_obj, reach, use)
    box = use | (np.asarray(also_in_view, bool) if also_in_view is not None else False)
    lo, hi, obj_centres = _bounds(track, hand_cols, objects, radii, keep_obj, use, box)
    centre = 0.5 * (lo + hi)
    half = np.maximum(0.5 * (hi - lo), 0.025)  # at least a 5 cm box
    azimuth = 90.0
    if hand_cols and obj_centres:
        wrist = track.body_pos[use][:, hand_cols[0]].mean(axis=0)
        d = wrist - np.mean(obj_centres, axis=0)
        if np.hypot(d[0], d[1]) > 1e-3:
            azimuth = math.degrees(math.atan2(d[1], d[0])) + 90.0 - 30.0
    distance, shift = _fit_box(half, azimuth, elevation, aspect, top_clear)
    e, a = math.radians(elevation), math.radians(azimuth)
    up = np.array([-math.sin(e) * math.cos(a), -math.sin(e) * math.sin(a), math.cos(e)])  # the image's up, world
    return CameraView(centre + up * shift * distance, distance, azimuth, elevation)


def _fit_box(
    half: np.ndarray, azimuth: float, elevation: float, aspect: float, top_clear: float
) -> tuple[float, float]:
    """(distance m, look-at shift up per m of distance) of a pinhole camera at ``azimuth`` / ``elevation`` deg
    looking at a box of half extents ``half`` (3,) m: the nearest at which every corner fits the view below the top
    ``top_clear`` with a 10 % margin (a corner at (x, y, z) right/up/depth fits when ``|x| <= tan_h (d + z)``)."""
    tan_v = math.tan(math.radians(FOVY_DEG) / 2)
    tv, th = (1.0 - top_clear) * tan_v, tan_v * aspect
    e, a = math.radians(elevation), math.radians(azimuth)
    fwd = np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])  # camera -> look-at
    right = np.array([math.sin(a), -math.cos(a), 0.0])
    up = np.cross(right, fwd)
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
    x, y, z = np.abs(corners @ right), corners @ up, corners @ fwd
    # the view is centred below the kept-clear band: a corner's y is measured from there
    d = max(float(np.max(1.1 * x / th - z)), float(np.max(1.1 * np.abs(y) / tv - z)), float(np.max(-z)) + 0.05)
    return d, top_clear * tan_v


def _bounds(
    track: PoseTrack,
    hand_cols: list[int],
    objects: Sequence[SceneObject],
    radii: dict,
    keep_obj: dict,
    use: np.ndarray,
    box: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(low (3,), high (3,) m of the ``box`` frames' hand body origins padded 3 cm and every object's bounding
    sphere; each object's mean position (3,) m over the ``use`` frames, which aim the view)."""
    pts = []
    if hand_cols:
        hp = track.body_pos[box][:, hand_cols].reshape(-1, 3)
        pts += [hp - 0.03, hp + 0.03]
    obj_centres = []
    for obj in objects:
        m = box & keep_obj[obj.body]
        if not m.any():  # fell before the framed frames: frame where it was last seen above
            m = keep_obj[obj.body] if keep_obj[obj.body].any() else np.ones(track.num_frames, bool)
        p = track.body_pos[m][:, track.index(obj.body)]
        r = radii[obj.body]
        pts += [p - r, p + r]
        seen = use & keep_obj[obj.body]  # the view turns on the interaction frames only
        obj_centres.append(
            track.body_pos[seen][:, track.index(obj.body)].mean(axis=0) if seen.any() else p.mean(axis=0)
        )
    pts = np.concatenate(pts, axis=0)
    return pts.min(axis=0), pts.max(axis=0), obj_centres


def _frames_used(F: int, frames: slice | np.ndarray | None) -> np.ndarray:
    """(F,) bool: the frames ``frames`` selects (a slice or a bool mask; None or none: all)."""
    use = np.zeros(F, bool)
    if frames is None:
        use[:] = True
    elif isinstance(frames, slice):
        use[frames] = True
    else:
        use[np.asarray(frames, bool)] = True
    if not use.any():
        use[:] = True
    return use


def _object_extent(
    track: PoseTrack, objects: Sequence[SceneObject], fallen_below: float | None
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Per object body: its bounding-sphere radius about the origin, m; (F,) bool, False once below ``fallen_below``."""
    F = track.num_frames
    keep_obj, radii = {}, {}
    for obj in objects:
        v, _ = _load_mesh(str(obj.mesh))
        radii[obj.body] = float(np.max(np.linalg.norm(v, axis=1)))
        ok = np.ones(F, bool)
        if fallen_below is not None:
            low = track.body_pos[:, track.index(obj.body), 2] < fallen_below
            if low.any():
                ok[int(np.argmax(low)) :] = False
        keep_obj[obj.body] = ok
    return radii, keep_obj


def _from_reach(
    track: PoseTrack,
    hand_cols: list[int],
    objects: Sequence[SceneObject],
    radii: dict,
    keep_obj: dict,
    reach: float,
    use: np.ndarray,
) -> None:
    """Drop from ``use`` (in place) the frames before a hand body origin is first within ``reach`` m of an object."""
    near = np.zeros(track.num_frames, bool)
    for obj in objects:
        p = track.body_pos[:, track.index(obj.body)]
        d = np.linalg.norm(track.body_pos[:, hand_cols] - p[:, None], axis=-1).min(axis=1)
        near |= (d < radii[obj.body] + reach) & keep_obj[obj.body]
    near &= use
    if near.any():
        use[: int(np.argmax(near))] = False


#: phases a study clip's camera is aimed on (approach, lift) and also keeps in view (hold, shake)
FRAMED_PHASES, ALSO_IN_VIEW_PHASES = (1, 2), (3, 4)
#: top fraction of a study clip's image kept clear for its overlay text (at most 4 lines)
CLIP_TOP_CLEAR = 0.2


def clip_camera(clip: Clip, aspect: float, top_clear: float = CLIP_TOP_CLEAR) -> CameraView:
    """A study clip's :func:`frame_camera`: aimed on :data:`FRAMED_PHASES` (else all frames), from
    :data:`CLIP_REACH_M`, with :data:`ALSO_IN_VIEW_PHASES` in view, the top ``top_clear`` left to the overlay."""
    hand = [n for n in clip.track.body_names if n.startswith("mano_body_")]
    phases = np.isin(clip.phase, FRAMED_PHASES)
    return frame_camera(
        clip.track,
        hand,
        clip.objects,
        aspect=aspect,
        frames=phases if phases.any() else None,
        reach=CLIP_REACH_M,
        fallen_below=clip.support.height - FALLEN_BELOW_M,
        also_in_view=np.isin(clip.phase, ALSO_IN_VIEW_PHASES) if phases.any() else None,
        top_clear=top_clear,
    )
