"""Contact agreement (docs/fidelity.md): bones within :data:`TOUCH_DISTANCE_M` of the object at the recorded grasp
against those carrying over ``contact_force_min`` N at the agreement frame. Precision = |rec ∩ sim| / |sim|, recall =
|rec ∩ sim| / |rec|; None for an empty denominator or an engine without per-contact forces (all but MuJoCo C)."""

from __future__ import annotations

import functools
from pathlib import Path

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from replay.kinematics.hand_layout import finger_quats
from replay.kinematics.model import HandKinematics
from replay.protocol.pad_compression import Capsules, ObjectSDF, capsule_distance, capsule_mjcf
from replay.protocol.plan import PHASE_HOLD
from replay.sim.contact_table import BONE_NAMES
from replay.sim.world_builder import load_collision_parts

#: m: a bone this near cannot be told from one in contact (the landmark-IK fit's p90 error plus the hulls' offset
#: from the visual surface: ``scripts/validate_pose_mapping.py``, ``scripts/validate_object_frame.py``)
TOUCH_DISTANCE_M = 0.005


def _palm_vertices(mjcf: str | Path) -> np.ndarray:
    """(V, 3) vertices of the palm's (``mano_body_0``) collision mesh in the body frame, m."""
    m = mujoco.MjModel.from_xml_path(str(mjcf))
    b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "mano_body_0")
    out = []
    for g in range(m.ngeom):
        if m.geom_bodyid[g] != b:
            continue
        q = m.geom_quat[g]
        R = Rotation.from_quat([q[1], q[2], q[3], q[0]])  # MuJoCo wxyz
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            i = int(m.geom_dataid[g])
            v = m.mesh_vert[m.mesh_vertadr[i] : m.mesh_vertadr[i] + m.mesh_vertnum[i]]
            out.append(R.apply(v) + m.geom_pos[g])
        elif m.geom_type[g] in (mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_CAPSULE, mujoco.mjtGeom.mjGEOM_SPHERE):
            s = m.geom_size[g]
            corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * s[:3]
            out.append(R.apply(corners) + m.geom_pos[g])
    return np.concatenate(out) if out else np.zeros((0, 3))


@functools.lru_cache(maxsize=8)
def _hand_parts(cap: str) -> tuple[HandKinematics, Capsules, np.ndarray]:
    """The hand's kinematics, capsules and palm vertices of one capsule MJCF, read once per process."""
    return HandKinematics.from_mjcf(cap), Capsules.from_mjcf(cap), _palm_vertices(cap)


def recorded_bone_distances(rec, coords: np.ndarray, mjcf: str | Path) -> np.ndarray:
    """(16,) signed distance, m, of each bone to the object at the grasp frame; DataError: unreadable part or MJCF."""
    kin, caps, pv = _hand_parts(str(capsule_mjcf(mjcf)))
    g = int(rec.grasp_frame)
    obj = rec.target_object
    sdf = ObjectSDF(load_collision_parts(obj.asset), obj.pos[g], obj.quat[g])
    c = np.asarray(coords[g], float)
    wR, JR = Rotation.from_quat(c[3:7]).as_matrix(), Rotation.from_quat(finger_quats(c)).as_matrix()
    out = np.full(16, np.inf)
    out[1:] = capsule_distance(kin, caps, sdf, wrist_pos=c[:3], wrist_R=wR, joint_R=JR, bodies=range(1, 16))
    if len(pv):
        X, G, _ = kin.fk_frames(c[None, :3], wR[None], JR[None])
        out[0] = float(np.min(sdf(X[0, 0] + pv @ G[0, 0].T)))
    return out


def force_bones(batch, i: int, force_min: float) -> list[int] | None:
    """Bones (0-15) of world ``i`` with a hand-object contact over ``force_min`` N normal force now; None without a
    MuJoCo C ``MjData`` per world."""
    w = batch.worlds[i]
    d, m = getattr(w, "d", None), getattr(w, "m", None)
    if not isinstance(d, mujoco.MjData) or not isinstance(m, mujoco.MjModel):
        return None
    lay = batch.layout
    bone_of = {int(b): k for k, b in enumerate(lay.hand_bodies)}
    out = set()
    for c in d.contact[: d.ncon]:
        g1, g2 = int(c.geom1), int(c.geom2)
        if lay.hand_geoms[g1] and lay.object_geoms[g2]:
            h = g1
        elif lay.hand_geoms[g2] and lay.object_geoms[g1]:
            h = g2
        else:
            continue
        if c.efc_address >= 0 and float(d.efc_force[c.efc_address]) > force_min:
            out.add(bone_of[int(m.geom_bodyid[h])])
    return sorted(out)


def agreement_frame(plan, grasp_time: float | None = None) -> int | None:
    """The control frame the simulated set is read at: the first hold frame, else the one replaying ``grasp_time``."""
    hold = np.flatnonzero(plan.phase == PHASE_HOLD)
    if hold.size:
        return int(hold[0])
    if grasp_time is not None and plan.rec_time is not None and len(plan.rec_time):
        return int(np.argmin(np.abs(np.asarray(plan.rec_time, float) - grasp_time)))
    return None


def agreement_fields(distances: np.ndarray | None, simulated: list[int] | None) -> dict:
    """``contact_agreement_precision`` / ``_recall`` (0-1 or None), ``_recorded_bones`` / ``_simulated_bones`` (names or
    None), ``_touch_mm``."""
    rec = None if distances is None else {k for k in range(16) if distances[k] <= TOUCH_DISTANCE_M}
    sim = None if simulated is None else set(simulated)
    both = None if rec is None or sim is None else rec & sim
    return dict(
        contact_agreement_precision=None if both is None or not sim else len(both) / len(sim),
        contact_agreement_recall=None if both is None or not rec else len(both) / len(rec),
        contact_agreement_recorded_bones=None if rec is None else [BONE_NAMES[k] for k in sorted(rec)],
        contact_agreement_simulated_bones=None if sim is None else [BONE_NAMES[k] for k in sorted(sim)],
        contact_agreement_touch_mm=TOUCH_DISTANCE_M * 1000.0,
    )
