"""The hand points the input checks look at: landmarks (manopth order), else MANO vertices, else the wrist."""

from __future__ import annotations

import numpy as np

from replay.data.types import Recording

#: manopth landmark ids of the palm's rigid points (wrist, thumb CMC, index MCP, pinky MCP).
WRIST, THUMB_CMC, INDEX_MCP, PINKY_MCP = 0, 1, 5, 17
#: per finger (manopth order), (first, second, third, fourth) landmark ids from the wrist outward (tip left out)
CHAINS = {
    "thumb": (0, 1, 2, 3),
    "index": (0, 5, 6, 7),
    "middle": (0, 9, 10, 11),
    "ring": (0, 13, 14, 15),
    "pinky": (0, 17, 18, 19),
}


def hand_points(rec: Recording) -> tuple[np.ndarray | None, str]:
    """((T, K, 3) world m, field): 21 landmarks, else 778 MANO vertices, else the wrist; (None, "") without any."""
    if rec.landmarks is not None:
        return np.asarray(rec.landmarks, float), "landmarks"
    m = rec.mano
    if m is not None and m.vertices is not None:
        return np.asarray(m.vertices, float), "mano.vertices"
    if m is not None and m.T_world_wrist is not None:
        return np.asarray(m.T_world_wrist, float)[:, None, :3, 3], "mano.T_world_wrist"
    if m is not None and m.trans is not None:
        return np.asarray(m.trans, float)[:, None, :], "mano.trans"
    if rec.wrist_pos is not None:
        return np.asarray(rec.wrist_pos, float)[:, None, :], "wrist_pos"
    return None, ""


def wrist_track(rec: Recording) -> np.ndarray | None:
    """(T, 3) world m: the wrist landmark, else the MANO vertex centroid, else the wrist; None without hand points."""
    pts, name = hand_points(rec)
    if pts is None:
        return None
    if name == "landmarks":
        return pts[:, WRIST]
    return pts.mean(axis=1)
