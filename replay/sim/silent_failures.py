"""The failures that are otherwise silent (docs/engine.md, "Silent failures"). MuJoCo arrays read at world 0 through
:class:`replay.sim.solver_view.SolverView`; MuJoCo quaternions wxyz, Newton's xyzw."""

from __future__ import annotations

import logging
import math

import mujoco
import numpy as np

from replay.errors import ReadbackError
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.sim import physics
from replay.sim.contact_table import hand_object_table
from replay.sim.option_readback import check_options
from replay.sim.solver_view import SolverView

log = logging.getLogger(__name__)


def count_contacts(solver, model, state) -> int:
    """Contacts MuJoCo detects at ``state`` (its forward pass; no time advances)."""
    view = SolverView(solver)
    view.push_state(model, state)
    view.forward()
    return view.contact_count()


def dof_inertia(solver, model, state) -> np.ndarray:
    """(joint_dof_count,) generalized mass-matrix diagonal incl. armature, Newton DOF order, kg or kg·m^2, by MuJoCo C's
    ``mj_fullM`` at ``state`` (mujoco-warp: a MuJoCo C copy at world 0)."""
    view = SolverView(solver)
    m, d = view.mujoco_c_at(model, state)
    mujoco.mj_forward(m, d)
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    diag_mj = np.diag(full)
    mj2n = view.to_newton("mjc_dof_to_newton_dof")
    out = np.zeros(model.joint_dof_count)
    for i, n in enumerate(mj2n[: m.nv]):
        if n >= 0:
            out[n] = diag_mj[i]
    return out


def hand_object_contacts(solver, hand_shapes, object_shapes, *, force_min: float) -> tuple[int, int]:
    """``(n_contacts, n_carrying_force)`` between hand and object shapes in the last step; carrying: normal force
    (elliptic: the first row; pyramidal: the sum of its 2 (dim - 1) edge rows) over ``force_min`` N."""
    hand = set(int(s) for s in hand_shapes)
    obj = set(int(s) for s in object_shapes)
    view = SolverView(solver)
    g2s = view.to_newton("mjc_geom_to_newton_shape")
    c = view.contacts()
    if c.count == 0:
        return 0, 0
    s0 = g2s[c.geom[:, 0]]
    s1 = g2s[c.geom[:, 1]]
    mask = (np.isin(s0, list(hand)) & np.isin(s1, list(obj))) | (np.isin(s1, list(hand)) & np.isin(s0, list(obj)))
    idx = np.flatnonzero(mask)
    carrying = 0
    for i in idx:
        a = int(c.efc_address[i])
        if a < 0:
            continue
        if c.pyramidal and c.dim[i] > 1:
            fn = float(np.sum(c.efc_force[a : a + 2 * (int(c.dim[i]) - 1)]))
        else:
            fn = float(c.efc_force[a])
        if fn > force_min:
            carrying += 1
    return int(idx.size), int(carrying)


class OverflowMonitor:
    """Per-step overflow check: MuJoCo C's ``mjWARN_CONTACTFULL`` / ``CNSTRFULL`` counters and ``ncon`` against
    ``capacity``; mujoco-warp's ``overflow`` observable."""

    def __init__(self, solver, capacity: int):
        self.solver = solver
        self.view = SolverView(solver)
        self.capacity = int(capacity)
        self.peak = 0
        self.observables = None
        self._base = self.view.drop_warnings()
        if self._base is None:
            self.observables = solver.observables([solver.ObservableKind.OVERFLOW])

    def check(self) -> str | None:
        """Why anything overflowed in the last step, else None."""
        n = self.view.contact_count()
        self.peak = max(self.peak, n)
        if self.observables is not None:
            bits = int(self.observables.overflow.numpy()[0])
            if bits:
                return f"solver overflow bitmask {bits:#x} (contacts or constraints dropped, {n} contacts)"
            return None
        for k, number in self.view.drop_warnings().items():
            if number > self._base[k]:
                return f"MuJoCo mjWARN_{k}: contacts/constraints dropped (arena full, {n} contacts)"
        if n > self.capacity:
            return f"contact overflow: {n} contacts exceed the capacity {self.capacity}"
        return None


def state_problem(state, max_linear: float, max_angular: float) -> str | None:
    """Why ``state`` is non-finite or a body runs away (``max_linear`` m/s, ``max_angular`` rad/s), else None."""
    q = state.joint_q.numpy()
    bq = state.body_q.numpy()
    bqd = state.body_qd.numpy()
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(bq)) and np.all(np.isfinite(bqd))):
        return "non-finite state"
    v = np.linalg.norm(bqd[:, :3], axis=1)
    w = np.linalg.norm(bqd[:, 3:], axis=1)
    if v.max() > max_linear:
        return f"runaway linear velocity {v.max():.3g} m/s on body {int(v.argmax())}"
    if w.max() > max_angular:
        return f"runaway angular velocity {w.max():.3g} rad/s on body {int(w.argmax())}"
    return None


def quat_angle(q: np.ndarray) -> np.ndarray:
    """Rotation angle from identity, rad, of xyzw quaternions (..., 4)."""
    w = np.clip(np.abs(q[..., 3]) / np.linalg.norm(q, axis=-1), 0.0, 1.0)
    return 2.0 * np.arccos(w)


def flutter_bound(m: float, kp: float, theta: float) -> float:
    """Critical total damping ``d_c = sqrt(m kp (theta/2) tan(theta/2))``, N·m·s/rad, of a ``<position>`` drive on a
    ball joint (manosim-in-Newton report): ``m`` effective inertia kg·m^2, ``kp`` N·m/rad, ``theta`` angle from
    identity, rad (clamped below pi)."""
    h = min(float(theta), 3.0) / 2.0
    return math.sqrt(max(m * kp * h * math.tan(h), 0.0))


def flutter_margins(
    commanded: np.ndarray, inertia: np.ndarray, *, ke: np.ndarray, damping: np.ndarray, kd: np.ndarray, config
) -> list[dict]:
    """Flutter margin per finger ball joint, warning for every joint it raises.

    Args:
        commanded: (T, 15, 4) finger targets, xyzw. inertia: (45,) mass-matrix diagonal, kg·m^2.
        ke, damping, kd: (45,) drive stiffness, passive damping, drive damping.

    Returns per joint: ``joint`` (0..14), ``theta_max`` rad, ``m`` kg·m^2, ``kp``, ``d_total`` (passive + kd),
    ``d_crit`` (bound x discrete factor), ``margin``, ``raised_to`` (new passive damping or None)."""
    bound = physics.choice_value(config, "finger_flutter_bound")
    safety, factor = float(bound["safety"]), float(bound["discrete_factor"])
    theta = quat_angle(commanded).max(axis=0)  # (15,)
    out = []
    for j in range(theta.shape[0]):  # one per finger ball joint
        sl = slice(3 * j, 3 * j + 3)
        m = float(np.max(inertia[sl]))
        kp = float(np.max(ke[sl]))
        d_total = float(np.min(damping[sl] + kd[sl]))
        d_crit = flutter_bound(m, kp, float(theta[j])) * factor
        margin = d_total / d_crit if d_crit > 0 else math.inf
        raised = None
        if margin < safety:
            raised = float(safety * d_crit - np.min(kd[sl]))
            log.warning(
                "finger joint %d: total damping %.4g N·m·s/rad is below %s x its ball-drive flutter bound %.4g "
                "(commanded angle %.2f rad); passive damping raised to %.4g (recorded in the rollout's `flutter`)",
                j + 1,
                d_total,
                safety,
                d_crit,
                theta[j],
                raised,
            )
        out.append(
            dict(
                joint=j,
                theta_max=float(theta[j]),
                m=m,
                kp=kp,
                d_total=d_total,
                d_crit=d_crit,
                margin=float(margin),
                raised_to=raised,
            )
        )
    return out


def _close(a, b, rtol=1e-4, atol=1e-7) -> bool:
    return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=atol))


def check_readback(scene) -> dict:
    """Compare what the solver compiled with what the scene set (options, gravity, finger actuators, wrist, per-DOF
    damping and armature, object geoms, excluded pairs); raises ReadbackError listing every mismatch.

    Returns the values read (into the rollout JSON): ``finger_kp`` N·m/rad, ``finger_kd_range`` N·m·s/rad,
    ``finger_forcerange`` N·m, ``finger_forcerange_per_joint`` (15,) N·m, ``finger_damping`` N·m·s/rad, ``impratio``
    (MuJoCo C only), ``n_actuators``, ``ablation_excluded_body_pairs``, ``contact_pairs``."""
    view = SolverView(scene.solver)
    m = view.mj_model
    errs = check_options(view, scene.config)
    act_errs, acts = _check_actuators(view, scene)
    dof_errs, dof_damping = _check_dofs(view, scene.model)
    errs += act_errs + dof_errs + _check_object_geoms(view, scene)
    excluded = _excluded_pairs(view, scene) if scene.ablation else None

    rows = acts["finger_rows"]
    gain, bias, frange = acts["gain"], acts["bias"], acts["frange"]
    f0, f1 = scene.finger_qd_start, scene.finger_qd_start + MANOSIM_HAND.finger_dofs
    mj2n = view.to_newton("mjc_dof_to_newton_dof")
    result = {
        "finger_kp": float(gain[rows[0]][0]) if rows else None,
        "finger_kd_range": [float(min(-bias[a][2] for a in rows)), float(max(-bias[a][2] for a in rows))]
        if rows
        else None,
        "finger_forcerange": float(frange[rows[0]][1]) if rows else None,
        "finger_forcerange_per_joint": _per_joint(frange, rows, view.to_newton("mjc_actuator_to_newton_idx"), f0),
        "finger_damping": sorted({round(float(dof_damping[i]), 6) for i, n in enumerate(mj2n[: m.nv]) if f0 <= n < f1}),
        "impratio": float(m.opt.impratio) if view.is_cpu else None,
        "n_actuators": int(m.nu),
        "ablation_excluded_body_pairs": excluded,
        "contact_pairs": hand_object_table(scene),
    }
    if errs:
        raise ReadbackError("solver read-back mismatch:\n  " + "\n  ".join(errs))
    return result


def _per_joint(frange, rows, a2n, f0: int) -> list | None:
    """(15,) the upper force range, N·m, of each finger joint's actuators (their largest), or None without them."""
    if not rows:
        return None
    out = np.zeros(MANOSIM_HAND.finger_joints)
    for a in rows:
        j = (int(a2n[a]) - f0) // 3
        out[j] = max(out[j], float(frange[a][1]))
    return [float(x) for x in out]


def _check_actuators(view: SolverView, scene) -> tuple[list[str], dict]:
    """``(errors, read)``: each finger DOF has one actuator with kp = ``joint_target_ke``, bias [0, -ke, -kd], force
    range +- ``joint_effort_limit``; none on the wrist. ``read``: ``finger_rows``, ``gain``, ``bias``, ``frange``."""
    model, m = scene.model, view.mj_model
    ke = model.joint_target_ke.numpy()
    kd = model.joint_target_kd.numpy()
    eff = model.joint_effort_limit.numpy()
    a2n = view.to_newton("mjc_actuator_to_newton_idx")
    gain = view.model_field("actuator_gainprm")
    bias = view.model_field("actuator_biasprm")
    frange = view.model_field("actuator_forcerange")
    flim = np.asarray(m.actuator_forcelimited)
    f0, f1 = scene.finger_qd_start, scene.finger_qd_start + MANOSIM_HAND.finger_dofs
    w0 = scene.hand_qd_start
    errs, finger_rows = [], []
    for a, n in enumerate(a2n[: m.nu]):
        if n < 0:
            continue
        if w0 <= n < f0:
            errs.append(f"actuator {a} targets wrist DOF {n} (free joint: MuJoCo ignores it)")
        if f0 <= n < f1:
            finger_rows.append(a)
            if not _close(gain[a][0], ke[n]):
                errs.append(f"actuator {a} (DOF {n}) kp {gain[a][0]} != {ke[n]}")
            if not _close(bias[a][1], -ke[n]) or not _close(bias[a][2], -kd[n]):
                errs.append(f"actuator {a} (DOF {n}) bias {bias[a][:3]} != [0, {-ke[n]}, {-kd[n]}]")
            if not (flim[a] == 1 or flim[a] == 2) or not _close(frange[a], [-eff[n], eff[n]]):
                errs.append(f"actuator {a} (DOF {n}) forcerange {frange[a]} (limited={flim[a]}) != +-{eff[n]}")
    if len(finger_rows) != MANOSIM_HAND.finger_dofs:
        errs.append(f"{len(finger_rows)} finger actuators compiled, expected {MANOSIM_HAND.finger_dofs}")
    return errs, {"finger_rows": finger_rows, "gain": gain, "bias": bias, "frange": frange}


def _check_dofs(view: SolverView, model) -> tuple[list[str], np.ndarray]:
    """``(mismatches of per-DOF damping and armature, dof_damping)``."""
    damp = model.joint_damping.numpy()
    arm = model.joint_armature.numpy()
    mj2n = view.to_newton("mjc_dof_to_newton_dof")
    dof_damping = view.model_field("dof_damping")
    dof_arm = view.model_field("dof_armature")
    errs = []
    for i, n in enumerate(mj2n[: view.mj_model.nv]):
        if n < 0:
            continue
        if not _close(dof_damping[i], damp[n]):
            errs.append(f"MuJoCo dof {i} damping {dof_damping[i]} != Newton DOF {n} {damp[n]}")
        if not _close(dof_arm[i], arm[n]):
            errs.append(f"MuJoCo dof {i} armature {dof_arm[i]} != Newton DOF {n} {arm[n]}")
    return errs, dof_damping


def _check_object_geoms(view: SolverView, scene) -> list[str]:
    """Mismatches of the object geoms' friction and condim (every object shape must reach the solver)."""
    model, m = scene.model, view.mj_model
    g2s = view.to_newton("mjc_geom_to_newton_shape")
    mu = model.shape_material_mu.numpy()
    gfric = view.model_field("geom_friction")
    gcondim = np.asarray(m.geom_condim)
    cd = model.mujoco.condim.numpy() if hasattr(model, "mujoco") and hasattr(model.mujoco, "condim") else None
    obj = set(int(x) for x in scene.object_shapes)
    errs, seen = [], 0
    for g, sh in enumerate(g2s[: m.ngeom]):
        if sh in obj:
            seen += 1
            if not _close(gfric[g][0], mu[sh]):
                errs.append(f"object geom {g} friction {gfric[g][0]} != {mu[sh]}")
            if cd is not None and int(gcondim[g]) != int(cd[sh]):
                errs.append(f"object geom {g} condim {gcondim[g]} != {cd[sh]}")
    if seen != len(obj):
        errs.append(f"{seen} of {len(obj)} object collision parts reached the solver")
    return errs


def _excluded_pairs(view: SolverView, scene) -> int:
    """Hand-object body pairs in MuJoCo's ``<exclude>`` list (``exclude_signature`` = ``b1 << 16 | b2``)."""
    m = view.mj_model
    b2n = view.to_newton("mjc_body_to_newton")
    pairs = set()
    for k in range(m.nexclude):
        sig = int(m.exclude_signature[k])
        b1, b2 = sig >> 16, sig & 0xFFFF
        pairs.add(frozenset((int(b2n[b1]), int(b2n[b2]))))
    need = {frozenset((int(h), int(scene.object_body))) for h in scene.hand_bodies}
    return len(need & pairs)
