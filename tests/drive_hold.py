"""A test helper: the hand alone, held at a pose by its own drives, stepped through
Newton's ``SolverMuJoCo`` (a check of the imported drives' damping, not a replay)."""

from __future__ import annotations

from pathlib import Path

import newton
import numpy as np

from replay.config import GRAVITY, ReplayConfig
from replay.kinematics.hand_layout import BALL_DOFS, MANOSIM_HAND
from replay.sim import finger_strength, physics
from replay.sim.scene import make_solver
from replay.sim.world_builder import import_hand, model_device


def build_hand_only(
    mjcf: str | Path,
    coords: np.ndarray,
    config: ReplayConfig,
    gravity: bool = True,
    drives: bool = True,
    finger_damping: float | None = None,
    finger_kd: float | None = None,
):
    """The hand alone (no object, no support) at ``coords``, for drive/stability checks.

    Args:
        mjcf: manosim MJCF. coords: (67,) Newton joint_q order, xyzw.
        gravity: -9.81 m/s^2 along Z, or none.
        drives: False sets every finger kp and kd to 0 (no actuator force).
        finger_damping: override passive finger damping, N·m·s/rad (None: as imported).
        finger_kd: override the finger drive damping, N·m·s/rad (None: dampratio-resolved).

    Returns:
        ``(model, report)``; finger targets in ``model.joint_target_q`` are ``coords``.
    """
    builder = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=(0.0, 0.0, -GRAVITY if gravity else 0.0))
    newton.solvers.SolverMuJoCo.register_custom_attributes(builder)
    builder.rigid_gap = float(physics.choice_value(config, "contact_gap"))
    report = import_hand(builder, Path(mjcf))
    qd0 = report.dof_start
    per_joint = finger_strength.joint_limits(config, mjcf)
    builder.joint_q[report.coord_start : report.coord_start + MANOSIM_HAND.coords] = [float(x) for x in coords]
    builder.joint_target_q[report.coord_start : report.coord_start + MANOSIM_HAND.coords] = [float(x) for x in coords]
    for d in range(qd0 + MANOSIM_HAND.finger_dof_start, qd0 + MANOSIM_HAND.dofs):
        builder.joint_effort_limit[d] = float(per_joint[(d - qd0 - MANOSIM_HAND.finger_dof_start) // BALL_DOFS])
        if not drives:
            builder.joint_target_ke[d] = 0.0
            builder.joint_target_kd[d] = 0.0
        else:
            if finger_kd is not None:
                builder.joint_target_kd[d] = float(finger_kd)
        if finger_damping is not None:
            builder.joint_damping[d] = float(finger_damping)
    model = builder.finalize(device=model_device(config))
    return model, report

def drive_hold_test(
    mjcf,
    coords: np.ndarray,
    config,
    seconds: float = 1.0,
    gravity: bool = False,
    contacts: bool = False,
    drives: bool = True,
    finger_damping: float | None = None,
    finger_kd: float | None = None,
) -> dict:
    """Hold the hand alone at ``coords`` with finger targets = ``coords`` and watch |qd|.

    With gravity, contacts and drives off the hand must be exactly static; with the
    drives on at their own target a ball-joint drive stays bounded only if total
    damping exceeds the flutter bound (:func:`replay.sim.silent_failures.flutter_bound`). The
    wrist (free joint) gets no wrench.

    Args:
        mjcf: manosim MJCF. coords: (67,) Newton joint_q order, xyzw.
        config: timing and solver options (``dt``, ``substeps``, solver kwargs).
        seconds: simulated time, s.
        gravity / contacts / drives: switch each off.
        finger_damping / finger_kd: overrides, N·m·s/rad (None: as imported).

    Returns:
        dict with ``max_qd`` (frames,) largest finger |qd| per control frame, rad/s;
        ``finger_damping`` and ``finger_kd`` (45,) as compiled by MuJoCo (read back);
        ``finite`` bool.
    """
    model, report = build_hand_only(mjcf, coords, config, gravity=gravity, drives=drives,
                                    finger_damping=finger_damping, finger_kd=finger_kd)
    solver = make_solver(model, config, None, disable_contacts=not contacts)
    m = solver.mj_model
    mj2n = solver.mjc_dof_to_newton_dof.numpy()
    mj2n = mj2n[0] if mj2n.ndim == 2 else mj2n
    f0 = report.dof_start + 6
    damp = np.zeros(45)
    for i, n in enumerate(mj2n[: m.nv]):
        if f0 <= n < f0 + 45:
            damp[n - f0] = m.dof_damping[i]
    a2n = solver.mjc_actuator_to_newton_idx.numpy()
    kd = np.zeros(45)
    for a, n in enumerate(a2n[: m.nu]):
        if f0 <= n < f0 + 45:
            kd[n - f0] = -m.actuator_biasprm[a][2]
    s0, s1 = model.state(), model.state()
    control = model.control()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    frames = int(round(seconds * config.control_fps))
    out = np.zeros(frames)
    finite = True
    for k in range(frames):
        for _ in range(config.substeps):
            solver.step(s0, s1, control, None, config.dt)
            s0, s1 = s1, s0
        qd = s0.joint_qd.numpy()[f0 : f0 + 45]
        if not np.all(np.isfinite(qd)):
            finite = False
            out[k:] = np.inf
            break
        out[k] = float(np.max(np.abs(qd)))
    return {"max_qd": out, "finger_damping": damp, "finger_kd": kd, "finite": finite,
            "wrist_qd_max": float(np.max(np.abs(s0.joint_qd.numpy()[report.dof_start : f0])))}
