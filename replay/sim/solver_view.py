"""One place where the two MuJoCo backends of ``newton.solvers.SolverMuJoCo`` differ for reading.

``SolverMuJoCo(use_mujoco_cpu=True)`` runs MuJoCo C: the compiled model and data are
``solver.mj_model`` / ``solver.mj_data`` (``mujoco.MjModel`` / ``MjData``, numpy arrays).
Otherwise it runs mujoco-warp (on CUDA, or on Warp's CPU device):
``solver.mjw_model`` / ``solver.mjw_data`` hold Warp arrays whose per-world fields carry a
leading world axis; ``solver.mj_model`` is still there (the MuJoCo C model mujoco-warp's model
was built from) and holds the sizes (``nu``, ``nv``, ``ngeom``), options and unbatched fields.
:class:`SolverView` reads either as numpy arrays of world 0, so callers need no branch.
The ``mjc_*_to_newton*`` index maps and ``_update_mjc_data`` are SolverMuJoCo attributes
of newton 1.8.0 (``newton/_src/solvers/mujoco/solver_mujoco.py``).
"""

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
    """The contacts of the last collision pass, as MuJoCo lays them out.

    Attributes:
        geom: (n, 2) MuJoCo geom ids of each contact.
        efc_address: (n,) first constraint row of each contact (-1: excluded from the solver).
        dim: (n,) contact dimensionality (condim).
        efc_force: (nefc,) constraint forces, N (normal row first; pyramidal cones: 2 (dim - 1) edge rows).
        pyramidal: the model's friction cone is pyramidal (``opt.cone == mjCONE_PYRAMIDAL``).
    """

    geom: np.ndarray
    efc_address: np.ndarray
    dim: np.ndarray
    efc_force: np.ndarray
    pyramidal: bool

    @property
    def count(self) -> int:
        """Number of contacts n."""
        return int(len(self.geom))


class SolverView:
    """Numpy reads of a ``SolverMuJoCo``'s compiled MuJoCo model and data, either backend.

    Args:
        solver: ``newton.solvers.SolverMuJoCo`` (MuJoCo C when ``use_mujoco_cpu`` is set,
            mujoco-warp otherwise).
    """

    def __init__(self, solver):
        self.solver = solver
        self.is_cpu = bool(getattr(solver, "use_mujoco_cpu", False))

    @property
    def mj_model(self) -> mujoco.MjModel:
        """The MuJoCo C model (both backends hold it): sizes, options, unbatched fields."""
        return self.solver.mj_model

    # model / data fields ----------------------------------------------------------
    def model_field(self, name: str) -> np.ndarray:
        """Compiled model field ``name`` (e.g. ``"dof_damping"``, ``"actuator_gainprm"``) of world 0.

        MuJoCo C: the ``MjModel`` array. mujoco-warp: the ``mjw_model`` array, its leading axis
        dropped when it has length 1 (a per-world field of a single-world model).
        """
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
        """The solver's MuJoCo -> Newton index map ``name`` (e.g. ``"mjc_dof_to_newton_dof"``), world 0.

        An empty int array when the solver has none (``None``, e.g. no actuators).
        """
        a = getattr(self.solver, name)
        if a is None:
            return np.zeros(0, int)
        a = a.numpy()
        return a[0] if a.ndim == 2 else a

    # state and collision ----------------------------------------------------------
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
        """``(MjModel, MjData)`` of MuJoCo C holding ``state``'s coordinates (forward not run).

        MuJoCo C: the solver's own data with ``state`` pushed. mujoco-warp: ``state`` is pushed
        into ``mjw_data`` and world 0's ``qpos`` copied into a fresh ``MjData`` of ``mj_model``.
        """
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
        """The first :meth:`contact_count` contacts (mujoco-warp: all worlds together) and the constraint forces.

        With no contact, empty arrays (nothing is copied from the device).
        """
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
