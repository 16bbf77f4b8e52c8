"""Rerun export of one rollout: a ``.rrd`` recording (``rerun-sdk``; entities in docs/results.md, exports)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from replay.errors import UsageError
from replay.output.export import standalone
from replay.output.export.mjcf import inputs_arrays
from replay.output.export.usd import phase_names
from replay.results.records import Phase


def _rerun():
    try:
        import rerun as rr
    except ImportError:
        raise UsageError("--format", "rrd needs rerun-sdk: pip install -e '.[rerun]'") from None
    return rr


def frame_contacts(log, force_min: float) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per control frame, the hand-object contacts of its last physics step: positions (n, 3) m,
    unit normals (n, 3) (MuJoCo's contact frame x axis, world) and normal forces (n,) N."""
    m = log.model
    z = inputs_arrays(log, force_min)
    hand, obj = log.hand_geoms, log.object_geoms
    out = []

    def on_frame(k, d):
        rows = []
        for c in range(d.ncon):
            g0, g1 = d.contact.geom[c]
            if (hand[g0] and obj[g1]) or (hand[g1] and obj[g0]):
                f = np.zeros(6)
                mujoco.mj_contactForce(m, d, c, f)
                rows.append((d.contact.pos[c].copy(), d.contact.frame[c, :3].copy(), float(f[0])))
        out.append(
            (
                np.array([r[0] for r in rows], float).reshape(-1, 3),
                np.array([r[1] for r in rows], float).reshape(-1, 3),
                np.array([r[2] for r in rows], float),
            )
        )

    standalone.replay(m, z, on_frame=on_frame)
    return out


def export_rrd(
    poses: dict, path: str | Path, object_vertices: np.ndarray, *, parents: list[int], contacts: list | None, name: str
) -> dict:
    """Write the recording to ``path``; returns ``{"rrd": path, "frames": F}``. ``poses``: ``body_pos`` (F, 17, 3) m,
    ``body_quat`` xyzw, ``time`` s; ``object_vertices`` (V, 3) m object frame; ``parents`` (16,) (-1: the wrist).
    UsageError: rerun-sdk is not installed."""
    rr = _rerun()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    stream = rr.RecordingStream("grasp-replay", recording_id=name)
    stream.save(str(path))
    pos, quat = np.asarray(poses["body_pos"], float), np.asarray(poses["body_quat"], float)
    phase = poses["phase"]
    lift = np.flatnonzero(phase == Phase.LIFT)
    z0 = np.where(
        np.arange(len(pos)) >= (lift[0] - 1 if lift.size else len(pos)),
        pos[lift[0] - 1, -1, 2] if lift.size else 0.0,
        pos[0, -1, 2],
    )
    rise = pos[:, -1, 2] - z0
    werr = np.asarray(poses["wrist_err"], float)
    skeleton = [(p, c) for c, p in enumerate(parents) if p >= 0]
    stream.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
    stream.log("world/object/vertices", rr.Points3D(object_vertices, radii=0.001), static=True)
    names = phase_names(phase)
    for k in range(len(pos)):
        stream.set_time("frame", sequence=k)
        stream.set_time("time", duration=float(poses["time"][k]))
        if k == 0 or names[k] != names[k - 1]:
            stream.log("phase", rr.TextLog(f"phase: {names[k]}"))
        stream.log("world/hand/bodies", rr.Points3D(pos[k, :16], radii=0.004))
        stream.log("world/hand/skeleton", rr.LineStrips3D([pos[k, [a, b]] for a, b in skeleton], radii=0.002))
        stream.log("world/object", rr.Transform3D(translation=pos[k, -1], quaternion=rr.Quaternion(xyzw=quat[k, -1])))
        stream.log("plots/rise_mm", rr.Scalars(rise[k] * 1000.0))
        if np.isfinite(werr[k]):
            stream.log("plots/wrist_error_mm", rr.Scalars(werr[k] * 1000.0))
        stream.log("plots/contacts", rr.Scalars(float(poses["contact_count"][k])))
        stream.log("plots/normal_force_N", rr.Scalars(float(poses["contact_force"][k])))
        if contacts is not None:
            p, nrm, f = contacts[k]
            stream.log("world/contacts", rr.Points3D(p, radii=0.002 + 0.0005 * np.sqrt(np.maximum(f, 0.0))))
            stream.log("world/contacts/normals", rr.Arrows3D(origins=p, vectors=nrm * (0.01 * f[:, None])))
    stream.flush()
    stream.disconnect()
    return {"rrd": str(path), "frames": int(len(pos))}
