"""The compiled model's solver options against the config: a value Newton did not pass on is a failure."""

from __future__ import annotations

import mujoco
import numpy as np

from replay.sim import physics
from replay.sim.solver_view import SolverView


def _close(a, b, rtol=1e-4, atol=1e-7) -> bool:
    return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=atol))


_SOLVERS = {"newton": mujoco.mjtSolver.mjSOL_NEWTON, "cg": mujoco.mjtSolver.mjSOL_CG}
_INTEGRATORS = {
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
    "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
    "euler": mujoco.mjtIntegrator.mjINT_EULER,
    "rk4": mujoco.mjtIntegrator.mjINT_RK4,
}
_CONES = {"elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC, "pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL}


def check_options(view: SolverView, cfg) -> list[str]:
    """Mismatches of ``mj_model.opt`` against the config: solver, integrator, cone; on MuJoCo C also impratio,
    iterations and gravity (m/s^2, world Z up)."""
    errs = []
    opt = view.mj_model.opt

    val = {k: physics.choice_value(cfg, k) for k in ("integrator", "cone", "impratio", "multiccd")}
    want = {"solver": _SOLVERS[cfg.solver], "integrator": _INTEGRATORS[val["integrator"]], "cone": _CONES[val["cone"]]}
    for k, v in want.items():
        if int(getattr(opt, k)) != int(v):
            errs.append(f"opt.{k} = {int(getattr(opt, k))}, set {int(v)}")
    if view.is_cpu:
        if not _close(opt.impratio, val["impratio"]):
            errs.append(f"opt.impratio = {opt.impratio}, set {val['impratio']}")
        if int(opt.iterations) != cfg.iterations:
            errs.append(f"opt.iterations = {opt.iterations}, set {cfg.iterations}")
        if not _close(opt.gravity, [0, 0, -9.81]):
            errs.append(f"opt.gravity = {list(opt.gravity)}")
    multi = not (int(opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_MULTICCD))
    if multi != bool(val["multiccd"]):
        errs.append(
            f"multi-CCD {'on' if multi else 'off'} (opt.disableflags {int(opt.disableflags)}), set {val['multiccd']}"
        )
    if not _close(opt.tolerance, cfg.tolerance) or int(opt.ls_iterations) != cfg.ls_iterations:
        errs.append(
            f"opt.tolerance / ls_iterations = {opt.tolerance} / {opt.ls_iterations}, set {cfg.tolerance} / "
            f"{cfg.ls_iterations}"
        )
    if int(opt.noslip_iterations) != 0:
        errs.append(f"opt.noslip_iterations = {opt.noslip_iterations}, set 0 (MuJoCo's default, both physics)")
    return errs
