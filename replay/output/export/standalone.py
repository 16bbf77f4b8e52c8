"""Replay one exported grasp-replay rollout with MuJoCo alone (``mujoco`` + ``numpy``).

This file is copied into every MJCF export as ``replay_export.py`` and runs there without
grasp-replay installed::

    python replay_export.py                 # model.mjb + inputs.npz beside it; prints the outcome JSON
    python replay_export.py --xml scene.xml # the same inputs on the exported MJCF instead of the binary model
    python replay_export.py --trajectory traj.npz   # also save the per-frame body poses

``model.mjb`` is the compiled model the rollout ran (``mujoco.mj_saveModel``: every edit already
applied, float64 exact). ``inputs.npz`` holds the state before the first step
(``mjSTATE_INTEGRATION``), and per physics step the ``ctrl``, ``xfrc_applied`` and
``qfrc_applied`` the rollout wrote just before ``mj_step``; ``frame_steps`` groups the steps
into 30 fps control frames. After each frame the recorded bodies' poses (world frame, Z up,
quaternions written xyzw as grasp-replay saves them; MuJoCo's own are wxyz) and the
hand-object contacts are read as grasp-replay reads them, and the outcome figures are
computed from them with grasp-replay's formulas (``replay/protocol/measures.py``):

* ``rise_m``: object origin z at the end of the hold minus at the lift start (last approach frame);
* ``clearance_m``: lowest object collision vertex above the support at the end of the hold;
* ``separation_mm`` / ``separation_deg``: object motion in the wrist frame from lift start to the end of the hold
  (grasp-replay's ``slip_mm`` when the object was lifted);
* ``contacts_at_lift``: hand-object contacts at the lift start; ``max_hand_object_contacts``;
* ``final_object_pos_m`` / ``final_object_quat_xyzw``: the object's pose after the last frame (float64).
"""

import argparse
import json
import sys
from pathlib import Path

import mujoco
import numpy as np


def quat_mul(a, b):
    """Hamilton product of (..., 4) quaternions, xyzw."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz], -1)


def quat_conj(q):
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_rotate(q, v):
    """Rotate (..., 3) vectors ``v`` by unit quaternions ``q`` (xyzw)."""
    u, w = q[..., :3], q[..., 3:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def unit(q):
    q = np.asarray(q, float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def hand_object_contacts(d, hand, obj, force_min, pyramidal):
    """(contacts, contacts carrying more than ``force_min`` N normal force) between hand and object geoms."""
    n = nf = 0
    for c in range(d.ncon):
        g0, g1 = d.contact.geom[c]
        if not ((hand[g0] and obj[g1]) or (hand[g1] and obj[g0])):
            continue
        n += 1
        a = d.contact.efc_address[c]
        if a < 0:
            continue
        rows = max(1, 2 * (int(d.contact.dim[c]) - 1)) if pyramidal else 1
        nf += float(d.efc_force[a:a + rows].sum()) > force_min
    return n, nf


def replay(m, z, on_frame=None):
    """Step the inputs; returns per-frame body positions (F, B, 3), quaternions xyzw (F, B, 4)
    (float64) and hand-object contact counts (F,). ``on_frame(k, d)`` is called after frame k."""
    d = mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    if mujoco.mj_stateSize(m, spec) == len(z["state0"]):
        mujoco.mj_setState(m, d, z["state0"], spec)
    else:  # another model of the scene (scene.xml): its coordinates and velocities only
        d.qpos[:], d.qvel[:] = z["qpos0"], z["qvel0"]
    bodies, hand, obj = z["bodies"], z["hand_geoms"], z["object_geoms"]
    pyramidal = int(m.opt.cone) == int(mujoco.mjtCone.mjCONE_PYRAMIDAL)
    ctrl, xfrc, qfrc = z["ctrl"], z["xfrc_applied"], z["qfrc_applied"]
    frames = len(z["frame_steps"])
    pos, quat = np.zeros((frames, len(bodies), 3)), np.zeros((frames, len(bodies), 4))
    contacts = np.zeros(frames, np.int64)
    s = 0
    for k, n in enumerate(z["frame_steps"]):
        for _ in range(int(n)):
            d.ctrl[:] = ctrl[s]
            d.xfrc_applied[:] = xfrc[s]
            d.qfrc_applied[:] = qfrc[s]
            mujoco.mj_step(m, d)
            s += 1
        mujoco.mj_kinematics(m, d)
        pos[k], quat[k] = d.xpos[bodies], d.xquat[bodies][:, [1, 2, 3, 0]]
        contacts[k] = hand_object_contacts(d, hand, obj, float(z["contact_force_min"]), pyramidal)[0]
        if on_frame is not None:
            on_frame(k, d)
    return pos, quat, contacts


def outcome(pos, quat, contacts, z):
    """The outcome figures (module doc) from per-frame poses, as grasp-replay computes them
    from its float32 saved poses."""
    p32, q32 = pos.astype(np.float32).astype(float), quat.astype(np.float32).astype(float)
    ls, judge = int(z["lift_start"]), int(z["judge"])
    out = {"frames": int(len(pos)), "steps": int(np.sum(z["frame_steps"])),
           "final_object_pos_m": pos[-1, -1].tolist(), "final_object_quat_xyzw": quat[-1, -1].tolist(),
           "max_hand_object_contacts": int(contacts.max()) if len(contacts) else 0}
    verts = z["object_vertices"]
    o = unit(q32[judge, -1])
    world = quat_rotate(np.broadcast_to(o, verts.shape[:-1] + (4,)), verts) + p32[judge, -1]
    out["clearance_m"] = float(world[:, 2].min() - float(z["support_height"]))
    if ls < 0:
        return out
    out["rise_m"] = float(p32[judge, -1, 2] - p32[ls, -1, 2])
    out["contacts_at_lift"] = int(contacts[ls])
    if ls < judge:
        w, ob = unit(q32[[ls, judge], 0]), unit(q32[[ls, judge], -1])
        rel_p = quat_rotate(quat_conj(w), p32[[ls, judge], -1] - p32[[ls, judge], 0])
        rel = quat_mul(quat_conj(w), ob)
        dq = quat_mul(quat_conj(rel[0]), rel[1])
        out["separation_mm"] = float(np.linalg.norm(rel_p[1] - rel_p[0]) * 1000.0)
        out["separation_deg"] = float(np.degrees(2.0 * np.arctan2(np.linalg.norm(dq[:3]), abs(dq[3]))))
    return out


def main(argv=None):
    here = Path(__file__).resolve().parent
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=str(here / "model.mjb"), help="compiled model (.mjb)")
    p.add_argument("--xml", default=None, help="load this MJCF (scene.xml) instead of --model")
    p.add_argument("--inputs", default=str(here / "inputs.npz"))
    p.add_argument("--trajectory", default=None, help="write per-frame body poses (npz) here")
    a = p.parse_args(argv)
    try:
        m = mujoco.MjModel.from_xml_path(a.xml) if a.xml else mujoco.MjModel.from_binary_path(a.model)
        z = dict(np.load(a.inputs))
    except (OSError, ValueError) as e:
        print(f"replay_export.py: error: {e}", file=sys.stderr)
        return 1
    pos, quat, contacts = replay(m, z)
    if a.trajectory:
        np.savez_compressed(a.trajectory, body_pos=pos, body_quat=quat, contact_count=contacts)
    print(json.dumps(outcome(pos, quat, contacts, z), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
