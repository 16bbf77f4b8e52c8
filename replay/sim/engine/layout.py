"""Where the replay's pieces live in the compiled MuJoCo model: the one reader of ``SolverMuJoCo``'s index maps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.sim.engine import signals


def _row0(a) -> np.ndarray:
    a = a.numpy() if hasattr(a, "numpy") else np.asarray(a)
    return a[0] if a.ndim == 2 else a


def _finger_actuators(s, model, hand_q_start: int) -> tuple[list, list, list, np.ndarray]:
    """``(acts, joints, axes, qcj)``: (45,) finger ``<position>`` actuator ids, each one's joint 0..14 and component
    0..2, and (45, 4) the joint's child-anchor rotation (xyzw, Newton's ``joint_X_c``). Raises ValueError: not one
    actuator per component of each finger ball joint."""
    m = s.mj_model
    a2n = _row0(s.mjc_actuator_to_newton_idx)[: m.nu].astype(int)
    axis = _row0(s.mjc_actuator_to_target_q_axis_idx)[: m.nu].astype(int)
    ball = _row0(s.mjc_actuator_to_newton_ball_jnt)[: m.nu].astype(int)
    tq = _row0(s.mjc_actuator_to_newton_target_q_idx)[: m.nu].astype(int)
    f0 = hand_q_start + 7
    acts, joints, axes = [], [], []
    for a in range(m.nu):
        if a2n[a] >= 0 and axis[a] >= 0 and f0 <= tq[a] < f0 + 60:
            acts.append(a)
            joints.append((tq[a] - f0) // 4)
            axes.append(axis[a])
    lay = MANOSIM_HAND
    if len(acts) != lay.finger_dofs or sorted(zip(joints, axes)) != [
        (j, k) for j in range(lay.finger_joints) for k in range(3)
    ]:
        raise ValueError(
            f"expected {lay.finger_dofs} finger actuators ({lay.finger_joints} ball joints x 3), found {len(acts)}"
        )
    jxc = model.joint_X_c.numpy()
    qcj = np.stack([jxc[ball[a], 3:7] for a in acts]).astype(float)
    return acts, joints, axes, qcj


@dataclass(frozen=True)
class MjLayout:
    """Index arrays of one replay scene in its compiled MuJoCo model.

    Attributes:
        newton_of_mj_body: (nbody,) (-1: world). root: MuJoCo id of ``mano_body_0``. hand_bodies: (16,).
        hand_qadr / hand_vadr, object_qadr / object_vadr: the free joints' qpos / qvel addresses.
        hand_geoms / object_geoms: (ngeom,) bool masks.
        finger_act: (45,) actuator ids; finger_joint: (45,) 0..14; finger_axis: (45,) 0..2; finger_qcj: (45, 4)
            child-anchor rotation, xyzw."""

    nbody: int
    ngeom: int
    nu: int
    newton_of_mj_body: np.ndarray
    mj_of_newton_body: np.ndarray
    root: int
    hand_bodies: np.ndarray
    object_body: int
    hand_qadr: int
    hand_vadr: int
    object_qadr: int
    object_vadr: int
    hand_geoms: np.ndarray
    object_geoms: np.ndarray
    finger_act: np.ndarray
    finger_joint: np.ndarray
    finger_axis: np.ndarray
    finger_qcj: np.ndarray

    @classmethod
    def from_scene(cls, scene) -> MjLayout:
        """Read the maps of ``scene.solver``. Raises ValueError: a hand body, object or finger actuator missing."""
        s, model = scene.solver, scene.model
        m = s.mj_model
        b2n = _row0(s.mjc_body_to_newton)[: m.nbody].astype(int)
        n2b = np.full(model.body_count, -1, int)
        for b, n in enumerate(b2n):
            if n >= 0:
                n2b[n] = b
        hand = n2b[np.asarray(scene.hand_bodies, int)]
        obj = int(n2b[int(scene.object_body)])
        if np.any(hand < 0) or obj < 0:
            raise ValueError(f"hand or object bodies missing from the MuJoCo model (hand {hand}, object {obj})")

        def free_adr(body: int) -> tuple[int, int]:
            j = int(m.body_jntadr[body])
            if j < 0 or int(m.jnt_type[j]) != 0:
                raise ValueError(f"MuJoCo body {body} has no free joint")
            return int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])

        hq, hv = free_adr(int(hand[0]))
        oq, ov = free_adr(obj)
        g2s = _row0(s.mjc_geom_to_newton_shape)[: m.ngeom].astype(int)
        hand_shapes = set(int(x) for x in scene.hand_shapes)
        obj_shapes = set(int(x) for x in scene.object_shapes)
        hand_geoms = np.array([g in hand_shapes for g in g2s])
        object_geoms = np.array([g in obj_shapes for g in g2s])

        acts, joints, axes, qcj = _finger_actuators(s, model, scene.hand_q_start)
        return cls(
            nbody=int(m.nbody),
            ngeom=int(m.ngeom),
            nu=int(m.nu),
            newton_of_mj_body=b2n,
            mj_of_newton_body=n2b,
            root=int(hand[0]),
            hand_bodies=hand.astype(np.int64),
            object_body=obj,
            hand_qadr=hq,
            hand_vadr=hv,
            object_qadr=oq,
            object_vadr=ov,
            hand_geoms=hand_geoms,
            object_geoms=object_geoms,
            finger_act=np.asarray(acts, np.int64),
            finger_joint=np.asarray(joints, np.int64),
            finger_axis=np.asarray(axes, np.int64),
            finger_qcj=qcj,
        )

    def finger_ctrl(self, finger_quat_xyzw: np.ndarray, ctrl: np.ndarray) -> None:
        """Write MuJoCo ``ctrl`` (rad) for finger targets (15, 4) xyzw as Newton's control kernel does."""
        signals.finger_ctrl(
            np.ascontiguousarray(finger_quat_xyzw, dtype=np.float64),
            self.finger_joint,
            self.finger_axis,
            self.finger_act,
            self.finger_qcj,
            ctrl,
        )

    @property
    def bodies(self) -> np.ndarray:
        """(17,) MuJoCo ids of the recorded bodies: the 16 hand bodies, then the object."""
        return np.append(self.hand_bodies, self.object_body)
