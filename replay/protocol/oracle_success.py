"""The hug-oracle's success test (HUG arXiv:2606.17054, app. E.2): ``off_table`` when stable to the hold's end, no
object collision vertex at or below the support's top within its xy extent at any hold frame (MuJoCo's convex-on-box
contact condition with the pair's margin), and the origin above its lift-start height."""

from __future__ import annotations

import numpy as np

from replay.config import ReplayConfig
from replay.protocol.measures import Trace, object_row, object_vertices_world
from replay.protocol.plan import PHASE_HOLD, Plan, lift_start
from replay.results.oracle_fields import SUCCESS_OFF_TABLE
from replay.sim import finger_strength, physics


def support_contact(verts_world: np.ndarray, support_height: float, extent, *, margin: float = 0.0) -> bool:
    """Whether object vertices (V, 3) m touch the support's top: any at or below ``support_height + margin`` (m, world
    z) inside ``extent`` ``(xmin, ymin, xmax, ymax)`` m (None: a plane); ``margin``: the object-support pair's contact
    margin, m."""
    low = verts_world[:, 2] <= support_height + margin
    if extent is not None:
        x, y = verts_world[:, 0], verts_world[:, 1]
        low &= (x >= extent[0]) & (x <= extent[2]) & (y >= extent[1]) & (y <= extent[3])
    return bool(np.any(low))


def judge(
    plan: Plan,
    tr: Trace,
    verts: np.ndarray,
    *,
    support_height: float,
    extent,
    metrics: dict,
    cfg: ReplayConfig,
    margin: float = 0.0,
) -> dict:
    """``{"oracle": {success_test, off_table, hold_frames, support_contact_frames, end_rise_mm, lift_test_lifted,
    effort_limit N·m, hand_object_contact, dt s}}``, plus ``lifted`` / ``outcome`` / ``diagnosis`` under ``off_table``.
    ``verts`` (V, 3) m object frame; ``support_height``, ``margin`` m."""
    hold = np.flatnonzero(plan.phase == PHASE_HOLD)
    ref = lift_start(plan.phase)
    seen = hold[hold < tr.done]
    touching = 0
    for k in seen:
        touching += support_contact(
            object_vertices_world(object_row(tr, k), verts), support_height, extent, margin=margin
        )
    end = int(seen[-1]) if seen.size else min(tr.done, len(plan.phase)) - 1
    end_rise = float(tr.body_pos[end, -1, 2] - tr.body_pos[ref, -1, 2])
    off = bool(metrics["stable"] and metrics["completed"] and seen.size == hold.size and touching == 0 and end_rise > 0)
    fig = {
        "success_test": cfg.oracle.success,
        "off_table": off,
        "hold_frames": int(hold.size),
        "support_contact_frames": int(touching),
        "end_rise_mm": end_rise * 1000.0,
        "lift_test_lifted": bool(metrics["lifted"]),
        "effort_limit": float(finger_strength.profile(cfg)),
        "hand_object_contact": "manosim" if physics.choice_value(cfg, "contact_mixing") == "hand" else "compiled",
        "dt": float(cfg.dt),
    }
    out: dict = {"oracle": fig}
    if cfg.oracle.success == SUCCESS_OFF_TABLE:
        out["lifted"] = off
        if metrics["outcome"] != "unstable":
            out["outcome"] = "lifted" if off else "not_lifted"
        if off:
            out["diagnosis"] = None
        elif metrics.get("diagnosis") is None:  # the rise test passed, the table test did not
            out["diagnosis"] = {"class": "touches_table", "figure": f"{touching} of {hold.size} hold frames"}
    return out
