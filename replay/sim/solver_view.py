"""Numpy reads of ``SolverMuJoCo``'s compiled model and data, world 0, MuJoCo C or mujoco-warp (per-world fields with
a leading world axis). The index maps and ``_update_mjc_data`` are newton 1.8.0's (``solver_mujoco.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

# MuJoCo C warning counters that mean contacts or constraints were dropped (mjtWarning, MuJoCo API reference).
_DROP_WARNINGS = {
    "CONTACTFULL": int(mujoco.mjtWarning.mjWARN_CONTACTFULL),
    "CNSTRFULL": int(mujoco.mjtWarning.mjWARN_CNSTRFULL),
}


@dataclass(frozen=True)
class ContactRows:
    """The contacts of the last collision pass: ``geom`` (n, 2) geom ids, ``efc_address`` (n,) first constraint row (-1:
    excluded), ``dim`` (n,) condim, ``efc_force`` (nefc,) N (normal row first; pyramidal: 2 (dim - 1) edge rows),
    ``pyramidal``."""

    geom: np.ndarray
    efc_address: np.ndarray
    dim: np.ndarray
    efc_force: np.ndarray
    pyramidal: bool

    @property
    def count(self) -> int:
        return int(len(self.geom))


class SolverView:
    def __init__(self, solver):
        self.solver = solver
        self.is_cpu = bool(getattr(solver, "use_mujoco_cpu", False))

    @property
    def mj_model(self) -> mujoco.MjModel:
        """The MuJoCo C model (both backends): sizes, options, unbatched fields."""
        return self.solver.mj_model

    def model_field(self, name: str) -> np.ndarray:
        """Compiled model field ``name`` of world 0 (mujoco-warp: a leading axis of length 1 dropped)."""
        if self.is_cpu:
            return np.asarray(getattr(self.solver.mj_model, name))
        a = getattr(self.solver.mjw_model, name)
        a = a.numpy() if hasattr(a, "numpy") else np.asarray(a)
        return a[0] if a.ndim >= 2 and a.shape[0] == 1 else a

    def data_field(self, name: str) -> np.ndarray:
        """Data field ``name`` (e.g. ``"actuator_force"``, ``"qpos"``) of world 0."""
        if self.is_cpu:
            return np.asarray(getattr(self.solver.mj_data, name))
        return getattr(self.solver.mjw_data, name).numpy()[0]

    def to_newton(self, name: str) -> np.ndarray:
        """The solver's MuJoCo -> Newton index map ``name``, world 0 (empty where the solver has none)."""
        a = getattr(self.solver, name)
        if a is None:
            return np.zeros(0, int)
        a = a.numpy()
        return a[0] if a.ndim == 2 else a

    def push_state(self, model, state) -> None:
        """Write Newton ``state`` (``joint_q``/``joint_qd``) into the backend's MuJoCo data."""
        d = self.solver.mj_data if self.is_cpu else self.solver.mjw_data
        self.solver._update_mjc_data(d, model, state)

    def forward(self) -> None:
        """MuJoCo's forward pass (kinematics, collision, constraint forces) on the current data."""
        if self.is_cpu:
            mujoco.mj_forward(self.solver.mj_model, self.solver.mj_data)
        else:
            import mujoco_warp  # here, on the warp path only: a MuJoCo C run never imports it

            mujoco_warp.forward(self.solver.mjw_model, self.solver.mjw_data)

    def mujoco_c_at(self, model, state) -> tuple[mujoco.MjModel, mujoco.MjData]:
        """``(MjModel, MjData)`` of MuJoCo C holding ``state``'s coordinates (forward not run; mujoco-warp: world 0
        copied into a fresh ``MjData``)."""
        self.push_state(model, state)
        if self.is_cpu:
            return self.solver.mj_model, self.solver.mj_data
        m = self.solver.mj_model
        d = mujoco.MjData(m)
        d.qpos[:] = self.data_field("qpos")
        return m, d

    def contact_count(self) -> int:
        """Contacts of the last collision pass (mujoco-warp: ``nacon``, all worlds together)."""
        if self.is_cpu:
            return int(self.solver.mj_data.ncon)
        return int(self.solver.mjw_data.nacon.numpy()[0])

    def contacts(self) -> ContactRows:
        """The first :meth:`contact_count` contacts (mujoco-warp: all worlds) and constraint forces; empty without."""
        n = self.contact_count()
        if n == 0:
            empty = np.zeros(0, int)
            return ContactRows(np.zeros((0, 2), int), empty, empty, np.zeros(0), False)
        if self.is_cpu:
            m, d = self.solver.mj_model, self.solver.mj_data
            return ContactRows(
                d.contact.geom[:n], d.contact.efc_address[:n], d.contact.dim[:n], d.efc_force, m.opt.cone == 0
            )
        d = self.solver.mjw_data
        return ContactRows(
            d.contact.geom.numpy()[:n],
            d.contact.efc_address.numpy()[:n, 0],
            d.contact.dim.numpy()[:n],
            d.efc.force.numpy()[0],
            int(self.solver.mjw_model.opt.cone) == 0,
        )

    def drop_warnings(self) -> dict[str, int] | None:
        """MuJoCo C's ``mjWARN_CONTACTFULL`` / ``mjWARN_CNSTRFULL`` counters; None on mujoco-warp (no counters)."""
        if not self.is_cpu:
            return None
        d = self.solver.mj_data
        return {k: int(d.warning[i].number) for k, i in _DROP_WARNINGS.items()}


__all__ = ["ContactRows", "SolverView"]
