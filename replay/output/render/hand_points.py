"""A hand drawn from recorded points when the manosim hand cannot be posed
(:mod:`replay.output.render.recording`): landmarks as a capsule skeleton, MANO vertices as spheres."""

from __future__ import annotations

import mujoco
import numpy as np

from replay.output.render.style import SKIN_RGBA

#: landmark skeleton (manopth order): parent of each landmark, -1 for the wrist.
LANDMARK_PARENT = (-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19)
#: MANO vertices drawn when nothing better exists: every VERTEX_STRIDE-th of 778, as
#: spheres of POINT_RADIUS_M (m; about MANO's mean vertex spacing at that stride).
VERTEX_STRIDE = 2
POINT_RADIUS_M = 0.004


def points_decorator(points: np.ndarray):
    """Scene decorator drawing (W, K, 3) hand points (MANO vertices) as small skin spheres."""
    rgba = np.asarray(SKIN_RGBA, np.float32)
    size = np.array([POINT_RADIUS_M, 0.0, 0.0])

    def decorate(i: int, scene) -> None:
        for p in points[i]:
            if scene.ngeom >= scene.maxgeom:
                return
            mujoco.mjv_initGeom(
                scene.geoms[scene.ngeom], mujoco.mjtGeom.mjGEOM_SPHERE, size, p, np.eye(3).ravel(), rgba
            )
            scene.ngeom += 1

    return decorate


def skeleton_decorator(landmarks: np.ndarray):
    """Scene decorator drawing (W, 21, 3) landmarks as skin-coloured capsules."""
    rgba = np.asarray(SKIN_RGBA, np.float32)

    def decorate(i: int, scene) -> None:
        p = landmarks[i]
        for k, par in enumerate(LANDMARK_PARENT):
            if par < 0 or scene.ngeom >= scene.maxgeom:
                continue
            g = scene.geoms[scene.ngeom]
            mujoco.mjv_initGeom(g, mujoco.mjtGeom.mjGEOM_CAPSULE, np.zeros(3), np.zeros(3), np.eye(3).ravel(), rgba)
            mujoco.mjv_connector(g, mujoco.mjtGeom.mjGEOM_CAPSULE, 0.007, p[par], p[k])
            scene.ngeom += 1

    return decorate
