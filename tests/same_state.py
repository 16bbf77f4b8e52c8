"""What "the same simulated state" means when two code paths are compared.

Two paths that step the same physics (the per-frame loop and a compiled span, the Python loop and
``c_loop``, a compiled gripper chunk and ``mj_step`` calls) may still differ in the last bit of a
float readout: numpy's ``linalg.norm`` / ``dot`` go through OpenBLAS, whose kernel (and so its
rounding, FMA or not) is chosen by the CPU it runs on, while numba's code rounds as written. Seen
on an AMD EPYC: a ``wrist_err`` 8.7e-19 m apart (one ulp) between the span loop and the per-frame
path (issue #40). So comparisons across paths use the tolerances below, each far below the
resolution the results report and far above float rounding; counts, stop reasons and frame
indices stay exact (an integer that differs is a different outcome).

A test that compares one path with itself (the same seed twice, one thread or two) may demand bit
equality: that is determinism on one machine, and its docstring says so.
"""

from __future__ import annotations

import numpy as np

#: positions (m) and joint coordinates (m or rad): 1 µm, a thousandth of the millimetre the results
#: report (rise_mm, separation_mm, wrist_err_*_mm), 16 float32 ulps at 1 m (6e-8 m each)
POS_M = 1e-6
#: unit quaternion components (1): 1e-6, about 2e-6 rad of rotation
QUAT = 1e-6
#: a distance computed from float32 positions (``wrist_err``, m): 1 nm, 1e-6 of the 1 mm reported
DIST_M = 1e-9
#: contact force sums (N): 1 µN, 1e-6 of the 1 N a lift's grip carries (a 0.1 kg cube weighs 0.98 N)
FORCE_N = 1e-6
#: velocities (m/s or rad/s): 1 µm/s, 1e-5 of the 0.15 m/s lift speed (config.lift.lift_s)
VEL = 1e-6

#: the per-frame trace fields (replay.sim.engine.spans.FrameRows) and their tolerance; None: exact
TRACE_TOL = {"body_pos": POS_M, "body_quat": QUAT, "ccount": None, "wrist_err": DIST_M,
             "normal_force": FORCE_N, "friction_force": FORCE_N}


def assert_close(a, b, tol: float | None, what: str) -> None:
    """``a`` and ``b`` (arrays of one shape) within ``tol`` (absolute, in the field's unit; NaN equals
    NaN: not simulated; None only equals None); ``tol`` None: bit for bit (integer fields)."""
    if a is None or b is None:
        assert a is b, what
        return
    a, b = np.asarray(a), np.asarray(b)
    if tol is None:
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, rtol=0, atol=tol, equal_nan=True, err_msg=what)


def assert_same_trace(x, y, what: str, fields=tuple(TRACE_TOL)) -> None:
    """Two traces (``Trace`` / ``FrameRows``) alike field by field, to :data:`TRACE_TOL`."""
    for f in fields:
        assert_close(getattr(x, f), getattr(y, f), TRACE_TOL[f], f"{what} {f}")


def assert_same_data(d0, d1, what: str) -> None:
    """Two ``mjData``: ``qpos`` to :data:`POS_M`, ``qvel`` to :data:`VEL`."""
    assert_close(d0.qpos, d1.qpos, POS_M, f"{what} qpos")
    assert_close(d0.qvel, d1.qvel, VEL, f"{what} qvel")
