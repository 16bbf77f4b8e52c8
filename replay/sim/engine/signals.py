"""Per-frame readouts of a MuJoCo world, compiled by numba: hand-object contacts and forces, runaway velocities."""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True, nogil=True)
def hand_object_contacts(
    geom, efc_address, dim, friction, efc_force, hand_geoms, object_geoms, pyramidal, force_min, out
):
    """Hand-object contacts among ``ncon`` rows and the forces they carry.

    Args:
        geom: (ncon, 2) geom ids; efc_address: (ncon,) first constraint row (-1: excluded); dim: (ncon,) condim;
            friction: (ncon, 5); efc_force: (nefc,) N. hand_geoms, object_geoms: (ngeom,) bool.
        pyramidal: normal force the sum of the ``2 (condim - 1)`` rows, else the first. force_min: N.
        out: (4,) written ``[n contacts, n carrying force, sum N, sum mu_i N_i]`` N."""
    n = 0
    nf = 0
    fsum = 0.0
    mfsum = 0.0
    for c in range(geom.shape[0]):
        g0, g1 = geom[c, 0], geom[c, 1]
        if not ((hand_geoms[g0] and object_geoms[g1]) or (hand_geoms[g1] and object_geoms[g0])):
            continue
        n += 1
        a = efc_address[c]
        if a < 0:
            continue
        if pyramidal:
            rows = max(1, 2 * (dim[c] - 1))
            f = 0.0
            for r in range(rows):
                f += efc_force[a + r]
        else:
            f = efc_force[a]
        if f > force_min:
            nf += 1
        if f > 0.0:
            fsum += f
            mfsum += friction[c, 0] * f
    out[0], out[1], out[2], out[3] = n, nf, fsum, mfsum


def data_contacts(d, hand_geoms, object_geoms, *, pyramidal: bool, force_min: float, out) -> bool:
    """:func:`hand_object_contacts` over the ``ncon`` contacts of a MuJoCo C ``MjData`` ``d`` into ``out`` (4,); False
    (``out`` untouched) when there are none."""
    n = d.ncon
    if not n:
        return False
    c = d.contact
    hand_object_contacts(
        c.geom[:n],
        c.efc_address[:n],
        c.dim[:n],
        c.friction[:n],
        d.efc_force,
        hand_geoms,
        object_geoms,
        pyramidal,
        force_min,
        out,
    )
    return True


@njit(cache=True, nogil=True)
def fastest_body(cvel, xipos, subtree_com, body_rootid, bodies, out):
    """``out = [v_max m/s, its body, w_max rad/s, its body]`` over the COMs (``cvel`` at the root's subtree COM)."""
    out[0], out[1], out[2], out[3] = -1.0, -1.0, -1.0, -1.0
    for b in bodies:
        r = body_rootid[b]
        wx, wy, wz = cvel[b, 0], cvel[b, 1], cvel[b, 2]
        dx = xipos[b, 0] - subtree_com[r, 0]
        dy = xipos[b, 1] - subtree_com[r, 1]
        dz = xipos[b, 2] - subtree_com[r, 2]
        vx = cvel[b, 3] + wy * dz - wz * dy
        vy = cvel[b, 4] + wz * dx - wx * dz
        vz = cvel[b, 5] + wx * dy - wy * dx
        v = math.sqrt(vx * vx + vy * vy + vz * vz)
        w = math.sqrt(wx * wx + wy * wy + wz * wz)
        if not v <= out[0]:  # NaN counts as fastest
            out[0], out[1] = v, b
        if not w <= out[2]:
            out[2], out[3] = w, b


@njit(cache=True, nogil=True)
def all_finite(a, b):
    """True when every value of both 1-D arrays is finite."""
    for x in a:
        if not math.isfinite(x):
            return False
    for x in b:
        if not math.isfinite(x):
            return False
    return True


@njit(cache=True, nogil=True)
def finger_ctrl(quat_xyzw, joint, axis, act, qcj, ctrl):
    """MuJoCo ``ctrl`` of the finger position actuators from targets (15, 4) xyzw, as Newton 1.8 converts: the rotation
    vector (angle in (-pi, pi]) turned by the child anchor ``qcj`` (xyzw), component ``axis`` per actuator ``act``."""
    for k in range(act.shape[0]):
        q = quat_xyzw[joint[k]]
        x, y, z, w = q[0], q[1], q[2], q[3]
        nrm = math.sqrt(x * x + y * y + z * z + w * w)
        aa0 = aa1 = aa2 = 0.0
        if nrm >= 1e-20:
            x, y, z, w = x / nrm, y / nrm, z / nrm, w / nrm
            s = math.sqrt(x * x + y * y + z * z)
            if s > 0.0:
                ang = 2.0 * math.atan2(s, w)
                if ang > math.pi:
                    ang -= 2.0 * math.pi
                aa0, aa1, aa2 = x * ang / s, y * ang / s, z * ang / s
        ux, uy, uz, uw = qcj[k, 0], qcj[k, 1], qcj[k, 2], qcj[k, 3]
        # v + w t + u x t, t = 2 u x v
        tx = 2.0 * (uy * aa2 - uz * aa1)
        ty = 2.0 * (uz * aa0 - ux * aa2)
        tz = 2.0 * (ux * aa1 - uy * aa0)
        r0 = aa0 + uw * tx + (uy * tz - uz * ty)
        r1 = aa1 + uw * ty + (uz * tx - ux * tz)
        r2 = aa2 + uw * tz + (ux * ty - uy * tx)
        ctrl[act[k]] = r0 if axis[k] == 0 else (r1 if axis[k] == 1 else r2)
