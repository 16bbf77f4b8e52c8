"""Generate study-contract rollouts (JSON + saved-pose npz) for renderer tests.

Real geometry, known motion: the manosim hand MJCF (posed by MuJoCo forward
kinematics, so every body pose is exactly what that MJCF's tree produces) next to
a GRAB object mesh resting on a support plane. The hand approaches the object from
+X with its palm facing it (right-hand wrist frame: fingers along body -X, palm
normal body -Y, thumb body +Z), curls its fingers and lifts by ``lift`` m; in a
``lifted`` rollout the object rises with it, in a ``not_lifted`` one it stays put.
Nothing here is simulated; it only exercises the renderer on the study's file
contract.
"""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import trimesh

from replay.results.records import FORMAT_VERSION

FPS = 30.0
#: world-from-hand-root rotation (rows: world axes; columns: body axes): body -X (fingers)
#: -> world +Y, body -Y (palm normal) -> world -X, body +Z (thumb) -> world +Z.
R_WORLD_HAND = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def _quat_wxyz(R: np.ndarray) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, R.ravel())
    return q


def hand_fk(hand_mjcf: Path, wrist_pos: np.ndarray, curl: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray]:
    """World poses of the hand bodies by MuJoCo FK.

    Args:
        wrist_pos: (F, 3) root position, m; orientation fixed to ``R_WORLD_HAND``.
        curl: (F,) finger flexion per joint, rad (about each bone's +Z; thumb left straight).

    Returns:
        body names, (F, B, 3) positions, (F, B, 4) xyzw quaternions.
    """
    m = mujoco.MjModel.from_xml_path(str(hand_mjcf))
    d = mujoco.MjData(m)
    names = [m.body(b).name for b in range(1, m.nbody)]
    F = wrist_pos.shape[0]
    pos = np.zeros((F, len(names), 3))
    quat = np.zeros((F, len(names), 4))
    qroot = _quat_wxyz(R_WORLD_HAND)
    for f in range(F):
        d.qpos[:] = m.qpos0
        for j in range(m.njnt):
            jn, adr = m.joint(j).name, int(m.jnt_qposadr[j])
            if jn in ("wrist_tx", "wrist_ty", "wrist_tz"):
                d.qpos[adr] = wrist_pos[f, "xyz".index(jn[-1])]
            elif jn == "wrist_rot":
                d.qpos[adr:adr + 4] = qroot
            elif jn.startswith("mano_joint_") and int(jn.rsplit("_", 1)[1]) <= 12:
                a = curl[f] / 2
                d.qpos[adr:adr + 4] = [np.cos(a), 0.0, 0.0, np.sin(a)]
        mujoco.mj_kinematics(m, d)
        pos[f] = d.xpos[1:]
        quat[f] = d.xquat[1:][:, [1, 2, 3, 0]]
    return names, pos, quat


def make_rollout(
    out_dir: Path,
    hand_mjcf: Path,
    object_mesh: Path,
    name: str,
    outcome: str = "lifted",
    seconds: tuple[float, float, float, float] = (0.2, 0.5, 0.5, 0.3),
    support_height: float = 0.8,
    lift: float = 0.12,
    with_ablation: bool = True,
    support: str | dict | None = None,
) -> dict:
    """Write ``out_dir/poses/<name>.npz`` (+ ablation) and return the rollout JSON entry.

    Phases (settle, approach, lift, hold) last ``seconds``; the object moves with the
    hand during lift/hold iff ``outcome == "lifted"``. ``support`` (``"plane"`` or
    ``{"table_top_xy": [...]}``, the study's field) is written when given.
    """
    v = np.asarray(trimesh.load(object_mesh, force="mesh", process=False).vertices)
    half_x, zmin = float(np.max(np.abs(v[:, 0]))), float(v[:, 2].min())
    n = [int(round(s * FPS)) for s in seconds]
    F = sum(n)
    phase = np.repeat(np.arange(4), n)
    t = np.arange(F) / FPS
    obj0 = np.array([0.0, 0.0, support_height - zmin])
    # palm centre is ~4.5 cm from the root along body -X (palm mesh offset in the MJCF)
    grasp = obj0 + np.array([half_x + 0.02, -0.045, 0.0])
    start = grasp + np.array([0.12, 0.0, 0.04])
    s = np.zeros(F)  # approach progress 0..1
    a0, a1 = n[0], n[0] + n[1]
    s[a0:a1] = np.linspace(0, 1, n[1])
    s[a1:] = 1.0
    h = np.zeros(F)  # lift height 0..lift
    l1 = a1 + n[2]
    h[a1:l1] = np.linspace(0, lift, n[2])
    h[l1:] = lift
    wrist = start + s[:, None] * (grasp - start) + h[:, None] * np.array([0, 0, 1.0])
    curl = 0.35 * np.clip((s - 0.7) / 0.3, 0, 1)
    names, hpos, hquat = hand_fk(hand_mjcf, wrist, curl)

    def save(tag: str, moves: bool) -> str:
        opos = np.tile(obj0, (F, 1)) + (h[:, None] * np.array([0, 0, 1.0]) if moves else 0.0)
        oquat = np.tile([0.0, 0.0, 0.0, 1.0], (F, 1))
        contact = np.where(phase >= 2, 6, 0) if moves else np.zeros(F, dtype=int)
        rel = Path("poses") / f"{tag}.npz"
        (out_dir / "poses").mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            out_dir / rel, time=t, body_names=np.array(names + ["object"]),
            body_pos=np.concatenate([hpos, opos[:, None]], axis=1),
            body_quat=np.concatenate([hquat, oquat[:, None]], axis=1),
            contact_count=contact.astype(np.int64), phase=phase.astype(np.int64),
            format_version=np.int32(FORMAT_VERSION),
        )
        return rel.as_posix()

    entry = {
        "object": name, "sequence": f"{name}_lift", "dataset": "grab",
        "hand_mjcf": str(hand_mjcf), "object_visual_mesh": str(object_mesh),
        "support_height": support_height, "outcome": outcome,
        "poses": save(name, outcome == "lifted"),
    }
    if support is not None:
        entry["support"] = support
    if with_ablation:
        entry["ablation"] = {"outcome": "not_lifted", "poses": save(f"{name}_ablation", False)}
    return entry


def make_study(out_dir: Path, hand_mjcf: Path, grab_objects: Path, objects: list[tuple[str, str]], **kw) -> Path:
    """Write ``out_dir/study.json`` with one rollout per (object, outcome); return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rollouts = [make_rollout(out_dir, hand_mjcf, grab_objects / o / f"{o}.stl", o, outcome=oc, **kw)
                for o, oc in objects]
    path = out_dir / "study.json"
    path.write_text(json.dumps({"format_version": FORMAT_VERSION, "rollouts": rollouts,
                                "config": {"fps": FPS, "generator": "tests/render_fixture.py"}}, indent=1))
    return path
