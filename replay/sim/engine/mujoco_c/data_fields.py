"""Where compiled code reads an ``mjData``'s scalars and contacts: addresses placed as MuJoCo 3.17.0's ``mjdata.h``
declares them and checked at import, build and after every span (docs/engine.md, "Spans"); :data:`LAYOUT_ERROR`
set when the check fails."""

from __future__ import annotations

import ctypes
import os
import re
from typing import NamedTuple

import mujoco
import numpy as np

#: index of each value in :attr:`DataFields.idx`
I_NCON, I_MAXUSE_CON, I_MAXUSE_STACK, I_MAXUSE_ARENA, I_NARENA = 0, 1, 2, 3, 4
I_C_STRIDE32, I_C_GEOM, I_C_EFC, I_C_DIM, I_C_STRIDE64, I_C_FRICTION = 5, 6, 7, 8, 9, 10


class DataFields(NamedTuple):
    """One ``mjData``'s scalars and contacts as numpy views: ``ints`` / ``longs`` (``ncon``, ``maxuse_*``), ``cint`` /
    ``cflt`` (the contact array), ``idx`` (11,) indices (``I_*``), ``base`` the address of ``mjData.contact``."""

    ints: np.ndarray
    longs: np.ndarray
    cint: np.ndarray
    cflt: np.ndarray
    idx: np.ndarray
    base: int


def _addr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _view(address: int, ctype, n: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctype * n).from_address(address))


def fields_of(d: mujoco.MjData) -> DataFields:
    """The views of ``d`` (which must outlive them). Raises ValueError: not MuJoCo 3.17's layout."""
    D = d._address
    t = d.timer.duration
    ncon_at = _addr(t) + t.strides[0] * int(mujoco.mjtTimer.mjNTIMER) - D
    solver_at = _addr(d.solver.improvement) - D
    if ncon_at % 4 or solver_at % 8 or ncon_at <= 0 or solver_at < 24:
        raise ValueError(f"mjData layout: ncon at {ncon_at}, solver at {solver_at} bytes")
    c = d.contact
    base = _addr(c.dist)
    stride = int(c.dist.strides[0])
    offs = {k: _addr(getattr(c, k)) - base for k in ("geom", "efc_address", "dim", "friction")}
    if stride % 8 or offs["friction"] % 8 or any(v % 4 or not 0 <= v < stride for v in offs.values()):
        raise ValueError(f"mjContact layout: stride {stride}, offsets {offs}")
    narena = int(d.narena)
    idx = np.array(
        [
            ncon_at // 4,
            (solver_at - 8) // 4,
            (solver_at - 24) // 8,
            (solver_at - 16) // 8,
            narena,
            stride // 4,
            offs["geom"] // 4,
            offs["efc_address"] // 4,
            offs["dim"] // 4,
            stride // 8,
            offs["friction"] // 8,
        ],
        np.int64,
    )
    f = DataFields(
        _view(D, ctypes.c_int32, ncon_at // 4 + 8),
        _view(D, ctypes.c_int64, solver_at // 8),
        _view(base, ctypes.c_int32, narena // 4),
        _view(base, ctypes.c_double, narena // 8),
        idx,
        base,
    )
    why = mismatch(d, f)
    if why:
        raise ValueError(f"mjData layout: {why}")
    return f


def mismatch(d: mujoco.MjData, f: DataFields) -> str | None:
    """Why ``f``'s values are not ``d``'s (the bindings' scalars), or None."""
    got = (
        int(f.ints[f.idx[I_NCON]]),
        int(f.ints[f.idx[I_MAXUSE_CON]]),
        int(f.longs[f.idx[I_MAXUSE_STACK]]),
        int(f.longs[f.idx[I_MAXUSE_ARENA]]),
    )
    want = (int(d.ncon), int(d.maxuse_con), int(d.maxuse_stack), int(d.maxuse_arena))
    if got != want:
        return f"(ncon, maxuse_con, maxuse_stack, maxuse_arena) read {got}, the bindings give {want}"
    if d.ncon and _addr(d.contact.dist) != f.base:
        return f"the contacts moved from {f.base:#x} to {_addr(d.contact.dist):#x}"
    return None


#: the declarations :func:`fields_of` relies on, in order, as ``mjdata.h`` writes them
_HEADER = (
    r"mjtSize\s+maxuse_stack;",
    r"mjtSize\s+maxuse_arena;",
    r"int\s+maxuse_con;",
    r"int\s+maxuse_efc;",
    r"mjSolverStat\s+solver\[",
)
_HEADER_NCON = (r"mjTimerStat\s+timer\[mjNTIMER\];", r"int\s+ncon;")

_SELF_TEST = """<mujoco><worldbody><geom type="plane" size="1 1 0.1"/>
<body pos="0 0 0.2"><freejoint/><geom type="box" size="0.05 0.05 0.05"/></body>
<body pos="0.02 0 0.4"><freejoint/><geom type="box" size="0.05 0.05 0.05"/></body></worldbody></mujoco>"""


def _header_declarations() -> list[str]:
    path = os.path.join(os.path.dirname(mujoco.__file__), "include", "mujoco", "mjdata.h")
    with open(path) as fh:
        text = fh.read()
    body = text[text.index("struct mjData_ {") :]
    body = body[: body.index("\n}")]
    return [line.split("//")[0].strip() for line in body.splitlines() if line.split("//")[0].strip()]


def _in_order(decls: list[str], pats) -> bool:
    for i in range(len(decls) - len(pats) + 1):
        if all(re.fullmatch(p + r".*", decls[i + j]) for j, p in enumerate(pats)):
            return True
    return False


def _check() -> str | None:
    """Why the layout cannot be trusted on this MuJoCo (header and self-test), or None."""
    try:
        decls = _header_declarations()
    except (OSError, ValueError) as e:
        return f"mjdata.h not readable beside the bindings: {e}"
    if not (_in_order(decls, _HEADER) and _in_order(decls, _HEADER_NCON)):
        return "mjdata.h does not declare maxuse_* before solver[] and ncon after timer[] (not MuJoCo 3.17's layout)"
    m = mujoco.MjModel.from_xml_string(_SELF_TEST)
    d = mujoco.MjData(m)
    try:
        f = fields_of(d)
        seen = 0
        for _ in range(200):
            mujoco.mj_step(m, d)
            why = mismatch(d, f)
            if why:
                return why
            seen = max(seen, int(d.ncon))
    except ValueError as e:
        return str(e)
    return None if seen else "the self-test model made no contact"


#: why :func:`fields_of` is not used on this MuJoCo (None: checked, module doc)
LAYOUT_ERROR = _check()
