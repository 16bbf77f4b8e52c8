"""USD export of one rollout: saved poses on the rebuilt scene's shapes through Newton's ViewerUSD, one time code per
frame, Z up, m; ``/root`` holds ``replay:phase`` and ``replay:contact_count`` per frame."""

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
    """Write ``scene`` posed by ``poses`` (``body_pos`` (F, 17, 3) m, ``body_quat`` (F, 17, 4) xyzw) at ``fps`` Hz to
    ``path``; returns ``{"usd", "frames", "fps"}``. UsageError: usd-core is not installed."""
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
