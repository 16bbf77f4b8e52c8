"""USD export of one rollout: its saved poses as a time-sampled stage through Newton's
:class:`newton.viewer.ViewerUSD` (needs ``usd-core``: ``pip install -e '.[usd]'``).

The stage holds the scene's shapes (hand bodies, object, table) as Newton's viewer draws
them, one time code per saved control frame (30 per second, ``timeCodesPerSecond`` 30, Z up,
metres), and on the ``/root`` prim a string attribute ``replay:phase`` with the protocol
phase of every frame (:class:`replay.results.records.Phase` names, lower case) and an int
attribute ``replay:contact_count`` (hand-object contacts). Nothing is re-simulated: the scene
is rebuilt (to get its shapes) and posed from the rollout's npz.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from replay.errors import UsageError
from replay.results.records import Phase


def _viewer_usd():
    try:
        from newton.viewer import ViewerUSD
        from pxr import Sdf  # noqa: F401  (usd-core present)
    except ImportError:
        raise UsageError("--format", "usd needs usd-core: pip install -e '.[usd]'") from None
    return ViewerUSD


def phase_names(phase: np.ndarray) -> list[str]:
    """Lower-case :class:`Phase` names of (F,) phase codes."""
    return [Phase(int(p)).name.lower() for p in phase]


def export_usd(scene, poses: dict, path: str | Path, *, fps: float) -> dict:
    """Write the stage (module doc) to ``path`` (``.usd``/``.usda``/``.usdc``).

    Args:
        scene: the rollout's rebuilt :class:`replay.sim.scene.Scene` (Newton model; ``hand_bodies``
            and ``object_body`` the Newton body indices of the 17 saved bodies).
        poses: the saved poses (``body_pos`` (F, 17, 3) m, ``body_quat`` (F, 17, 4) xyzw, ``phase`` (F,),
            ``contact_count`` (F,)).
        fps: control frames per second (30).

    Returns:
        ``{"usd": path, "frames": F, "fps": fps}``.

    Raises:
        UsageError: usd-core is not installed.
    """
    from pxr import Sdf, Usd

    ViewerUSD = _viewer_usd()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    model = scene.model
    ids = np.append(np.asarray(scene.hand_bodies, int), int(scene.object_body))
    state = model.state()
    body_q = state.body_q.numpy()
    viewer = ViewerUSD(str(path), fps=int(round(fps)), up_axis="Z", num_frames=None)
    viewer.set_model(model)
    root = viewer.stage.GetPrimAtPath(viewer._root_path)
    phase_attr = root.CreateAttribute("replay:phase", Sdf.ValueTypeNames.String)
    count_attr = root.CreateAttribute("replay:contact_count", Sdf.ValueTypeNames.Int)
    names = phase_names(poses["phase"])
    pos, quat = poses["body_pos"], poses["body_quat"]
    for k in range(len(pos)):
        body_q[ids, :3] = pos[k]
        body_q[ids, 3:] = quat[k]
        state.body_q.assign(body_q)
        viewer.begin_frame(k / fps)
        viewer.log_state(state)
        viewer.end_frame()
        phase_attr.Set(names[k], Usd.TimeCode(k))
        count_attr.Set(int(poses["contact_count"][k]), Usd.TimeCode(k))
    viewer.stage.SetEndTimeCode(max(0, len(pos) - 1))
    viewer.close()
    return {"usd": str(path), "frames": int(len(pos)), "fps": float(fps)}
