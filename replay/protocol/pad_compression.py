"""Finger pad compression at the grasp frame (docs/sources.md, Pad compression): each finger within ``pad_near_mm``
closed along its recorded flexion until its pad is ``pad_compression`` mm inside the object. Signed distance m,
negative inside; hand coords (67,): wrist m, wrist xyzw, 15 finger xyzw (joint-local)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from replay.kinematics.hand_layout import MANOSIM_HAND, finger_quats
from replay.kinematics.model import HandKinematics
from replay.protocol.pad_depth_table import SeatFrames, depth_table, frame_angles, object_pose_at
from replay.sim.world_builder import load_collision_parts

#: manosim bodies of each finger chain, proximal to distal (manosim README body order)
FINGERS = {"index": (1, 2, 3), "middle": (4, 5, 6), "pinky": (7, 8, 9), "ring": (10, 11, 12), "thumb": (13, 14, 15)}
#: palm normal in the wrist (mano_body_0) frame of the right hand (manosim README: palm normal -Y)
PALM_NORMAL = np.array([0.0, -1.0, 0.0])
#: points sampled along each capsule axis
AXIS_SAMPLES = 9
#: a joint whose recorded closure is below this (deg) takes only its small share of the closure
RECORDED_MIN_DEG = 3.0
#: the closure axis rules (``pad_axis``): each joint's own recorded closure axis, or bone x palm normal
AXIS_RECORDED, AXIS_ANATOMICAL = "recorded", "anatomical"
#: bisection tolerance on the closure angle, rad (0.05 deg: ~0.05 mm at a fingertip 6 cm out)
ANGLE_TOL = math.radians(0.05)
#: coarse search step of the closure angle, rad
ANGLE_STEP = math.radians(1.0)
#: manopth fingertip landmark of each finger
TIP_LANDMARK = {"thumb": 4, "index": 8, "middle": 12, "ring": 16, "pinky": 20}


@dataclass(frozen=True)
class Capsules:
    """Capsule of each manosim body (16 rows): centre (3,) m and unit axis (3,) in the body frame, half length m, radius
    m (NaN: no capsule, the palm)."""

    pos: np.ndarray
    axis: np.ndarray
    half: np.ndarray
    radius: np.ndarray

    @classmethod
    def from_mjcf(cls, path: str | Path) -> Capsules:
        """The capsules of ``mano_body_0..15`` of a manosim capsule MJCF (axis: the geom's local z)."""
        m = mujoco.MjModel.from_xml_path(str(path))
        pos, axis, half, rad = np.zeros((16, 3)), np.zeros((16, 3)), np.zeros(16), np.full(16, np.nan)
        for b in range(16):
            bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"mano_body_{b}")
            g = [
                i for i in range(m.ngeom) if m.geom_bodyid[i] == bid and m.geom_type[i] == mujoco.mjtGeom.mjGEOM_CAPSULE
            ]
            if not g:
                continue
            q = m.geom_quat[g[0]]
            pos[b] = m.geom_pos[g[0]]
            axis[b] = Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()[:, 2]
            rad[b], half[b] = m.geom_size[g[0]][0], m.geom_size[g[0]][1]
        return cls(pos, axis, half, rad)


class ObjectSDF:
    """Signed distance (m, negative inside) to the union of convex ``parts`` ([(vertices (V, 3) m object frame,
    faces)], :func:`load_collision_parts`) placed at ``pos`` (3,) m world, ``quat_xyzw`` (4,)."""

    def __init__(self, parts: list[tuple[np.ndarray, np.ndarray]], pos, quat_xyzw):
        R = Rotation.from_quat(np.asarray(quat_xyzw, float))
        self.eqs = [ConvexHull(R.apply(np.asarray(v, float)) + np.asarray(pos, float)).equations for v, _ in parts]

    def __call__(self, pts: np.ndarray) -> np.ndarray:
        """(N,) signed distance, m, of (N, 3) world points (a lower bound near edges)."""
        pts = np.asarray(pts, float).reshape(-1, 3)
        best = np.full(len(pts), np.inf)
        for e in self.eqs:  # (nf, 4): n . x + c <= 0 inside
            best = np.minimum(best, np.max(pts @ e[:, :3].T + e[:, 3], axis=1))
        return best


def capsule_distance(
    kin: HandKinematics, caps: Capsules, sdf: ObjectSDF, *, wrist_pos, wrist_R, joint_R, bodies
) -> np.ndarray:
    """(len(bodies),) signed distance, m, of each capsule for ``wrist_pos`` (3,) m, ``wrist_R`` (3, 3), ``joint_R``
    (15, 3, 3) local."""
    X, G, _ = kin.fk_frames(
        np.asarray(wrist_pos, float)[None], np.asarray(wrist_R, float)[None], np.asarray(joint_R, float)[None]
    )
    t = np.linspace(-1.0, 1.0, AXIS_SAMPLES)
    out = []
    for b in bodies:
        c = X[0, b] + G[0, b] @ caps.pos[b]
        pts = c + np.outer(t * caps.half[b], G[0, b] @ caps.axis[b])
        out.append(float(np.min(sdf(pts))) - float(caps.radius[b]))
    return np.array(out)


def closure_axes(
    kin: HandKinematics, q_open: np.ndarray, q_grasp: np.ndarray, *, bodies, rule: str = AXIS_RECORDED
) -> tuple[np.ndarray, np.ndarray, str]:
    """``(axes (3, 3) in each joint's grasp frame, applied as R_grasp exp(s w_i u_i); shares w (3,); rule used)`` of one
    finger from ``q_open`` / ``q_grasp`` (15, 4) xyzw. ``"recorded"`` falls back to ``"anatomical"`` (bone x palm
    normal) for a finger closed less than :data:`RECORDED_MIN_DEG` at every joint."""
    local = []
    for b in bodies:
        rg = Rotation.from_quat(q_grasp[b - 1])
        d = (rg * Rotation.from_quat(q_open[b - 1]).inv()).as_rotvec()
        local.append(rg.inv().apply(d))  # R_g = exp(d) R_o  ->  R_g exp(u), u = R_g^T d
    ang = np.array([np.linalg.norm(u) for u in local])
    if rule == AXIS_RECORDED and ang.max() >= math.radians(RECORDED_MIN_DEG):
        axes = np.zeros((3, 3))
        for i, b in enumerate(bodies):
            if ang[i] >= math.radians(RECORDED_MIN_DEG):
                axes[i] = local[i] / ang[i]
            else:
                a = np.cross(kin.bone_dir[b], PALM_NORMAL)
                axes[i] = a / np.linalg.norm(a)
        return axes, ang / ang.max(), AXIS_RECORDED
    axes = np.array([np.cross(kin.bone_dir[b], PALM_NORMAL) for b in bodies])
    return axes / np.linalg.norm(axes, axis=1, keepdims=True), np.ones(3), AXIS_ANATOMICAL


def _closed(joint_R: np.ndarray, bodies, axes, w, s: float) -> np.ndarray:
    """(15, 3, 3) joint rotations with the finger ``bodies`` closed by angle ``s`` rad."""
    out = joint_R.copy()
    for i, b in enumerate(bodies):
        out[b - 1] = joint_R[b - 1] @ Rotation.from_rotvec(axes[i] * w[i] * s).as_matrix()
    return out


def _root(f, smax: float) -> float | None:
    """Smallest angle in (0, smax] rad with ``f`` <= 0, to :data:`ANGLE_TOL`; None if none."""
    lo, x = 0.0, ANGLE_STEP
    while x <= smax + 1e-12:
        if f(x) <= 0:
            hi = x
            while hi - lo > ANGLE_TOL:
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
            return hi
        lo, x = x, x + ANGLE_STEP
    return None


def most_open_pose(kin: HandKinematics, coords: np.ndarray, start: int, *, g: int) -> np.ndarray:
    """(67,) coords of frame ``g``, each finger from the frame in ``[start, g]`` with its tip farthest from g's."""
    fq = finger_quats(coords[start : g + 1])
    n = len(fq)
    lm = kin.fk_landmarks(np.zeros((n, 3)), np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)), fq)
    out = np.array(coords[g], dtype=np.float64, copy=True)
    oq = finger_quats(out)
    for name, bodies in FINGERS.items():
        tip = lm[:, TIP_LANDMARK[name]]
        k = int(np.argmax(np.linalg.norm(tip - tip[-1], axis=1)))
        for b in bodies:
            oq[b - 1] = fq[k, b - 1]
    return out


@dataclass(frozen=True)
class DeepFingers:
    """A value of ``pad_deep_fingers``; ``opens``: a finger deeper than the pad depth opens to it over the approach."""

    name: str
    opens: bool


#: the values of the physics choice ``pad_deep_fingers`` (:data:`replay.results.physics_table.VALUES`)
DEEP_FINGERS = {d.name: d for d in (DeepFingers("as_recorded", False), DeepFingers("opened", True))}


@dataclass
class PadPlan:
    """A lift plan's pad compression, applied per control frame as ``q_k exp(rv w_k)``: ``raw`` (F, 15, 4) xyzw
    uncompressed targets, ``weight`` (F,) 0-1 blend, ``grasp_at`` the approach's last control frame, ``grasp`` /
    ``open_coords`` (67,) grasp-frame and most open hand coords."""

    raw: np.ndarray
    weight: np.ndarray
    grasp_at: int
    grasp: np.ndarray
    open_coords: np.ndarray
    depth_mm: float
    cfg: object
    kin: HandKinematics
    caps: Capsules
    sdf: ObjectSDF
    _solved: dict
    seat: SeatFrames | None = None
    _tables: dict = field(default_factory=dict)

    @classmethod
    def build(
        cls, rec, coords: np.ndarray, mjcf: str | Path, *, cfg, plan, depth_mm: float, open_deep: bool = False
    ) -> PadPlan:
        """The pad plan of ``plan`` (release appended) from ``coords`` (T, 67); DataError for an unreadable collision
        part or MJCF."""
        from replay.protocol.lift_plan import recorded_times
        from replay.protocol.plan import PHASE_APPROACH, replayed_frames
        from replay.protocol.release import opening_fraction

        cap = capsule_mjcf(mjcf)
        obj, g = rec.target_object, int(rec.grasp_frame)
        times, _, start = replayed_frames(rec, coords, cfg.approach_window_s, stop=g + 1)
        t = recorded_times(plan, times, cfg)
        t_g = float(times[-1])
        if cfg.lift.pad_blend_s > 0:
            x = np.clip((t - (t_g - cfg.lift.pad_blend_s)) / cfg.lift.pad_blend_s, 0.0, 1.0)
            w = x * x * (3 - 2 * x)
        else:
            w = (t >= t_g).astype(float)
        at = int(np.flatnonzero(plan.phase == PHASE_APPROACH)[-1])
        w[at:] = 1.0
        w = w * (1.0 - opening_fraction(plan.phase, cfg.frame_dt, cfg.lift.release_s))
        kin = HandKinematics.from_mjcf(cap)
        parts = load_collision_parts(obj.asset)
        app = np.flatnonzero(plan.phase == PHASE_APPROACH)
        pos, quat = object_pose_at(rec, t[app]) if open_deep else (None, None)
        return cls(
            raw=finger_quats(plan.coords).copy(),
            weight=w,
            grasp_at=at,
            grasp=np.array(plan.coords[at], float),
            open_coords=most_open_pose(kin, coords, start, g=g),
            depth_mm=float(depth_mm),
            cfg=cfg,
            kin=kin,
            caps=Capsules.from_mjcf(cap),
            sdf=ObjectSDF(parts, obj.pos[g], obj.quat[g]),  # the recorded relation
            _solved={},
            seat=SeatFrames(app, plan.coords[app, :7].copy(), pos, quat, ObjectSDF(parts, np.zeros(3), [0, 0, 0, 1]))
            if open_deep
            else None,
        )

    def solve(self, depth_mm: float, fingers: np.ndarray | None = None) -> tuple[dict, np.ndarray]:
        """``(summary, rv (15, 3) rotation vectors)`` for ``fingers`` (F, 15, 4) xyzw (None: the plan's), cached: each
        finger within ``pad_near_mm`` of the grasp closed to ``depth_mm`` past the surface, at most ``pad_max_deg``;
        per finger ``{near_mm, before_mm, after_mm, closure_deg, joint_deg [3], rule, status}``, status ``closed``,
        ``already``, ``far`` or ``unreached``."""
        q = self.raw if fingers is None else fingers
        at = np.ascontiguousarray(q[self.grasp_at], dtype=np.float64)
        key = (round(float(depth_mm), 9), at.tobytes())
        if key not in self._solved:
            pose = (self.grasp[:3], Rotation.from_quat(self.grasp[3:7]).as_matrix(), Rotation.from_quat(at).as_matrix())
            qo = finger_quats(self.open_coords)
            res, rv = {}, np.zeros((MANOSIM_HAND.finger_joints, 3))
            for name, bodies in FINGERS.items():
                res[name], rv[[b - 1 for b in bodies]] = self._solve_finger(bodies, pose, qo, at, float(depth_mm) / 1e3)
            self._solved[key] = (summary(res, depth_mm, self.cfg.lift.pad_near_mm), rv)
        return self._solved[key]

    def _solve_finger(self, bodies, pose: tuple, q_open, q_grasp, depth_m: float) -> tuple[dict, np.ndarray]:
        """One finger's figures and (3, 3) local rotation vectors (:meth:`solve`); ``pose``: wrist m, wrist (3, 3),
        joints (15, 3, 3)."""
        kin, caps, sdf, lift = self.kin, self.caps, self.sdf, self.cfg.lift
        wp, wR, JR = pose
        d_all = capsule_distance(kin, caps, sdf, wrist_pos=wp, wrist_R=wR, joint_R=JR, bodies=bodies)
        axes, w, rule = closure_axes(kin, q_open, q_grasp, bodies=bodies, rule=lift.pad_axis)
        tip = bodies[1:]  # middle and distal segments carry the pad

        def f(s):
            closed = _closed(JR, bodies, axes, w, s)
            return (
                float(capsule_distance(kin, caps, sdf, wrist_pos=wp, wrist_R=wR, joint_R=closed, bodies=tip).min())
                + depth_m
            )

        info = {"near_mm": float(d_all.min() * 1e3), "before_mm": float(d_all[1:].min() * 1e3), "rule": rule}
        s = 0.0
        if d_all.min() > lift.pad_near_mm / 1000.0:
            info["status"] = "far"
        elif f(0.0) <= 0:
            info["status"] = "already"
        else:
            root = _root(f, math.radians(lift.pad_max_deg))
            info["status"] = "unreached" if root is None else "closed"
            s = 0.0 if root is None else root
        info.update(
            closure_deg=math.degrees(s),
            joint_deg=[float(math.degrees(s * wi)) for wi in w],
            after_mm=float((f(s) - depth_m) * 1e3),
        )
        return info, axes * (w * s)[:, None]

    def compressed(
        self, depth_mm: float, fingers: np.ndarray | None = None, figures: bool = True
    ) -> tuple[np.ndarray, dict | None]:
        """``(targets (F, 15, 4) xyzw, summary)``: ``fingers`` (None: the plan's) closed to ``depth_mm`` (0: as they
        are); ``figures=False``: summary None."""
        q = self.raw if fingers is None else fingers
        if not depth_mm > 0:
            return q, summary({}, 0.0, self.cfg.lift.pad_near_mm)
        if self.seat is not None:
            return self.seated(float(depth_mm), q, figures)
        res, rv = self.solve(depth_mm, q)
        moved = np.flatnonzero(np.any(rv != 0.0, axis=1))  # joints of closed fingers; the rest stay bit for bit
        out = np.array(q, dtype=np.float64, copy=True)
        for k in np.flatnonzero(self.weight > 0) if moved.size else ():
            out[k, moved] = (
                Rotation.from_quat(out[k, moved]) * Rotation.from_rotvec(rv[moved] * self.weight[k])
            ).as_quat()
        return out, res

    def table(self, fingers: np.ndarray):
        """``(DepthTable, axes (5, 3, 3), shares (5, 3), rules)`` of ``fingers`` (F, 15, 4) xyzw; cached per pose."""
        seat = self.seat
        q = np.ascontiguousarray(fingers[seat.frames], dtype=np.float64)
        key = q.tobytes()
        if key not in self._tables:
            qo = finger_quats(self.open_coords)
            ax = [closure_axes(self.kin, qo, q[-1], bodies=b, rule=self.cfg.lift.pad_axis) for b in FINGERS.values()]
            axes, shares = np.array([a[0] for a in ax]), np.array([a[1] for a in ax])
            coords = np.concatenate([seat.wrist, q.reshape(len(q), -1)], axis=1)
            blend = np.flatnonzero(self.weight[seat.frames] > 0)  # the closure's blend: its closing side is read
            tab = depth_table(
                self.kin,
                self.caps,
                seat.sdf,
                fingers=FINGERS,
                coords=coords,
                obj_pos=seat.obj_pos,
                obj_quat=seat.obj_quat,
                axes=axes,
                shares=shares,
                max_rad=math.radians(self.cfg.lift.pad_max_deg),
                samples=AXIS_SAMPLES,
                near_m=self.cfg.lift.pad_near_mm / 1000.0,
                close_from=int(blend[0]) if blend.size else len(q),
            )
            self._tables[key] = (tab, axes, shares, [a[2] for a in ax])
        return self._tables[key]

    def seated(self, depth_mm: float, fingers: np.ndarray, figures: bool = True) -> tuple[np.ndarray, dict | None]:
        """``(targets (F, 15, 4) xyzw, summary)``: every near finger at ``depth_mm`` in the object, not deeper;
        ``figures=False``: summary None."""
        tab, axes, shares, rules = self.table(fingers)
        cfg = self.cfg
        rate = (
            math.radians(cfg.lift.pad_max_deg) * cfg.frame_dt * cfg.replay_speed / cfg.lift.pad_blend_s
            if cfg.lift.pad_blend_s > 0
            else np.inf
        )
        S, status = frame_angles(
            tab,
            depth_mm / 1000.0,
            cfg.lift.pad_near_mm / 1000.0,
            weight=self.weight,
            frames=self.seat.frames,
            rate=rate,
        )
        Sj = np.repeat(S, 3, axis=1)  # (F, 15): each joint its finger's angle
        k, j = np.nonzero(Sj != 0.0)
        rv = (axes * shares[..., None]).reshape(15, 3)[j] * Sj[k, j][:, None]
        out = np.array(fingers, dtype=np.float64, copy=True)
        out[k, j] = (Rotation.from_quat(out[k, j]) * Rotation.from_rotvec(rv)).as_quat()
        if not figures:
            return out, None
        at = self.grasp_at
        wR, JR = Rotation.from_quat(self.grasp[3:7]).as_matrix(), Rotation.from_quat(out[at]).as_matrix()
        pads = [b for bs in FINGERS.values() for b in bs[1:]]
        after = (
            capsule_distance(
                self.kin, self.caps, self.sdf, wrist_pos=self.grasp[:3], wrist_R=wR, joint_R=JR, bodies=pads
            )
            .reshape(5, 2)
            .min(1)
        )
        opening = np.degrees(np.maximum(-S[: at + 1], 0.0).max(axis=0))
        res = {}
        for f, name in enumerate(FINGERS):
            s = float(S[at, f])
            res[name] = dict(
                near_mm=float(tab.near[-1, f] * 1e3),
                before_mm=float(tab.pad0[-1, f] * 1e3),
                rule=rules[f],
                status=str(status[f]),
                closure_deg=math.degrees(s),
                joint_deg=[float(math.degrees(s * w)) for w in shares[f]],
                after_mm=float(after[f] * 1e3),
                opening_max_deg=float(opening[f]),
                opened_frames=int(np.sum(S[: at + 1, f] < 0)),
            )
        out_summary = summary(res, depth_mm, self.cfg.lift.pad_near_mm, deep_fingers="opened")
        out_summary.update(
            fingers_opened=[n for n, f in res.items() if f["closure_deg"] < 0],
            fingers_opened_approach=[n for n, f in res.items() if f["opening_max_deg"] > 0],
            max_opening_deg=float(opening.max()),
        )
        return out, out_summary


def summary(res: dict, depth_mm: float, near_mm: float, *, deep_fingers: str = "as_recorded") -> dict:
    """The record of one closure; ``max_joint_change_deg`` at the grasp frame."""
    joint_deg = [abs(d) for f in res.values() for d in f["joint_deg"]]
    return {
        "depth_mm": float(depth_mm),
        "near_mm": float(near_mm),
        "deep_fingers": deep_fingers,
        "fingers": res,
        "fingers_closed": [n for n, f in res.items() if f["status"] == "closed"],
        "max_joint_change_deg": float(max(joint_deg, default=0.0)),
    }


def capsule_mjcf(mjcf: str | Path) -> Path:
    """The capsule MJCF beside ``mjcf`` (a mesh hand's sibling), else ``mjcf`` itself."""
    cap = Path(mjcf).with_name("capsule_hand.xml")
    return cap if cap.is_file() else Path(mjcf)
