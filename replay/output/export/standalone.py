"""Replay one exported grasp-replay rollout with MuJoCo alone (``mujoco`` + ``numpy``).

This file is copied into every MJCF export as ``replay_export.py`` (:data:`MADE_WITH` set to the
MuJoCo version the export was made with) and runs there without grasp-replay installed::

    pip install mujoco==<MADE_WITH> numpy    # the version the export names (python replay_export.py --help)
    python replay_export.py                 # model.mjb + inputs.npz beside it; prints the outcome JSON
    python replay_export.py --xml scene.xml # the same inputs on the exported MJCF instead of the binary model
    python replay_export.py --trajectory traj.npz   # also save the per-frame body poses

``model.mjb`` (the compiled model, float64 exact) loads only in the MuJoCo version that wrote it; under another the
script replays ``scene.xml`` with the compiled model's fields copied on (:func:`apply_model_fields`) and reports how far
that lands (``differs_from_rollout``), or stops naming the version it needs. ``inputs.npz`` holds the initial state
and, per physics step, ``ctrl``, ``xfrc_applied`` and ``qfrc_applied`` (layout: grasp-replay's docs/results.md).
Poses world frame, Z up, quaternions xyzw (MuJoCo's own are wxyz); outcome figures as ``replay/protocol/measures.py``:

* ``rise_m``: object origin z at the end of the hold minus at the lift start (last approach frame);
* ``clearance_m``: lowest object collision vertex above the support at the end of the hold;
* ``separation_mm`` / ``separation_deg``: object motion in the wrist frame from lift start to the end of the hold
  (grasp-replay's ``slip_mm`` when the object was lifted; printed whatever the outcome, where the study leaves
  ``separation_mm`` blank for an object that never rose);
* ``contacts_at_lift``: hand-object contacts at the lift start; ``max_hand_object_contacts``;
* ``final_object_pos_m`` / ``final_object_quat_xyzw``: the object's pose after the last frame (float64).
"""

import argparse
import json
import sys
from pathlib import Path

import mujoco
import numpy as np

#: the MuJoCo version this export was made with (set when the export writes this file; None: read inputs.npz)
MADE_WITH = None

#: integer fields copied onto ``scene.xml``'s model with the float ones: the collision bits (the
#: contact ablation), contact dimension and priority; none of them holds an address into another array
INT_FIELDS = ("geom_contype", "geom_conaffinity", "geom_condim", "geom_priority")


def model_fields(m):
    """``{"model.<field>": array, "opt.<field>": value}``: ``m``'s float arrays, :data:`INT_FIELDS`, numeric options."""
    out = {}
    for name in dir(m):
        v = getattr(m, name, None) if not name.startswith("_") else None
        if isinstance(v, np.ndarray) and v.size and (v.dtype.kind == "f" or name in INT_FIELDS):
            out[f"model.{name}"] = v.copy()
    for name in dir(m.opt):
        v = getattr(m.opt, name, None) if not name.startswith("_") else None
        if isinstance(v, (int, float, np.ndarray)) and not isinstance(v, bool):
            out[f"opt.{name}"] = np.asarray(v).copy()
    return out


def apply_model_fields(m, z):
    """Copy :func:`model_fields`' arrays in ``z`` onto ``m`` where name, shape and kind agree; returns (copied,
    [left])."""
    copied, left = 0, []
    for key in sorted(k for k in z if k.startswith(("model.", "opt."))):
        part, name = key.split(".", 1)
        owner = m if part == "model" else m.opt
        have = getattr(owner, name, None)
        want = np.asarray(z[key])
        try:
            if isinstance(have, np.ndarray) and have.shape == want.shape and have.dtype.kind == want.dtype.kind:
                have[...] = want
            elif (
                part == "opt" and have is not None and np.shape(have) == want.shape and not isinstance(have, np.ndarray)
            ):
                setattr(owner, name, type(have)(want))
            else:
                left.append(key)
                continue
        except (TypeError, ValueError, AttributeError):
            left.append(key)
            continue
        copied += 1
    return copied, left


def quat_mul(a, b):
    """Hamilton product of (..., 4) quaternions, xyzw."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        -1,
    )


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


def hand_object_contacts(d, hand, obj):
    """Contacts between hand and object geoms (``hand``, ``obj``: per-geom masks)."""
    pairs = (d.contact.geom[c] for c in range(d.ncon))
    return sum(bool((hand[g0] and obj[g1]) or (hand[g1] and obj[g0])) for g0, g1 in pairs)


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
        contacts[k] = hand_object_contacts(d, hand, obj)
        if on_frame is not None:
            on_frame(k, d)
    return pos, quat, contacts


def outcome(pos, quat, contacts, *, z):
    """The outcome figures (module doc) from per-frame poses, rounded to float32 as grasp-replay saves them."""
    p32, q32 = pos.astype(np.float32).astype(float), quat.astype(np.float32).astype(float)
    ls, judge = int(z["lift_start"]), int(z["judge"])
    out = {
        "frames": int(len(pos)),
        "steps": int(np.sum(z["frame_steps"])),
        "final_object_pos_m": pos[-1, -1].tolist(),
        "final_object_quat_xyzw": quat[-1, -1].tolist(),
        "max_hand_object_contacts": int(contacts.max()) if len(contacts) else 0,
    }
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


def differs_from_rollout(pos, z):
    """Largest and final object position difference, mm, and the rise's, mm, against ``rollout_object_pos`` (F, 3) m in
    ``z`` (None: no rollout poses)."""
    if "rollout_object_pos" not in z:
        return None
    ref = np.asarray(z["rollout_object_pos"], float)
    got = pos[: len(ref), -1].astype(np.float32).astype(float)
    gap = np.linalg.norm(got - ref[: len(got)], axis=1) * 1000.0
    out = {"max_object_pos_mm": float(gap.max()), "final_object_pos_mm": float(gap[-1])}
    ls, judge = int(z["lift_start"]), int(z["judge"])
    if 0 <= ls < judge < len(got):
        out["rise_mm"] = float(((got[judge, 2] - got[ls, 2]) - (ref[judge, 2] - ref[ls, 2])) * 1000.0)
    return out


def load_model(a, z, here):
    """(model, what was loaded, note or None): the .mjb, else ``scene.xml`` with the model's fields applied; OSError /
    ValueError naming the version needed where neither loads."""
    made = MADE_WITH or (str(z["mujoco_version"]) if "mujoco_version" in z else None)
    ours = mujoco.__version__
    if not a.xml and (made is None or made == ours):
        try:
            return mujoco.MjModel.from_binary_path(a.model), "model.mjb", None
        except ValueError as e:
            raise ValueError(
                f"MuJoCo {ours} cannot load {a.model} ({str(e).splitlines()[0]}); the export was made "
                f"with MuJoCo {made}"
            ) from None
    xml = a.xml or str(here / "scene.xml")
    try:
        m = mujoco.MjModel.from_xml_path(xml)
    except ValueError as e:
        need = f"mujoco=={made}" if made else "the MuJoCo version that made it"
        raise ValueError(
            f"MuJoCo {ours} cannot load {xml} ({str(e).splitlines()[0]}); this export needs {need}: pip install {need}"
        ) from None
    copied, left = apply_model_fields(m, z)
    note = (
        None
        if a.xml
        else (
            f"MuJoCo {ours} here, the export was made with MuJoCo {made}, whose model.mjb no "
            f"other version reads: replaying {Path(xml).name} with {copied} fields of the "
            f"compiled model applied ({len(left)} left as {ours} compiles them); "
            "'differs_from_rollout' says how far the result lands from the rollout"
        )
    )
    return m, f"{Path(xml).name} ({copied} compiled fields applied, {len(left)} not)", note


def main(argv=None):
    here = Path(__file__).resolve().parent
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] + f" Made with MuJoCo {MADE_WITH}; this is MuJoCo {mujoco.__version__}."
    )
    p.add_argument("--model", default=str(here / "model.mjb"), help="compiled model (.mjb)")
    p.add_argument("--xml", default=None, help="load this MJCF (scene.xml) instead of --model")
    p.add_argument("--inputs", default=str(here / "inputs.npz"))
    p.add_argument("--trajectory", default=None, help="write per-frame body poses (npz) here")
    a = p.parse_args(argv)
    try:
        z = dict(np.load(a.inputs))
        m, loaded, note = load_model(a, z, here)
    except (OSError, ValueError) as e:
        print(f"replay_export.py: error: {e}", file=sys.stderr)
        return 1
    if note:
        print(f"replay_export.py: note: {note}", file=sys.stderr)
    pos, quat, contacts = replay(m, z)
    if a.trajectory:
        np.savez_compressed(a.trajectory, body_pos=pos, body_quat=quat, contact_count=contacts)
    made = MADE_WITH or (str(z["mujoco_version"]) if "mujoco_version" in z else None)
    figures = dict(
        outcome(pos, quat, contacts, z=z),
        mujoco=mujoco.__version__,
        made_with_mujoco=made,
        model=loaded,
        differs_from_rollout=differs_from_rollout(pos, z),
    )
    try:  # what scene.xml gave under the export's own version: how far a replay from it may land
        figures["scene_xml_under_made_with"] = json.loads((here / "export.json").read_text()).get("scene_xml_replay")
    except (OSError, ValueError):
        pass
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
