"""The Warp kernels of :class:`replay.sim.engine.mjwarp.warp_batch.WarpBatch`, one thread per world (or per contact).
Positions m, world Z up; MuJoCo quaternions wxyz, Newton's xyzw; state float32, computed in float64."""

from __future__ import annotations

import numpy as np
import warp as wp

from replay.sim.engine.mjwarp.warp_wrist import authored_wrench_part, rotvec_unnormalized

# columns of the per-world signal row (float64) gathered after each frame
S_FINITE, S_VMAX, S_VBODY, S_WMAX, S_WBODY, S_NHO, S_NHOF, S_OVERFLOW, S_NACON, S_PEAK, S_ACT, S_NEFC = range(12)
S_SIZE = 12

_PI64 = wp.constant(wp.float64(np.pi))
_TWO_PI64 = wp.constant(wp.float64(2.0 * np.pi))


@wp.func
def _slerp_wxyz(q0: wp.vec4d, q1: wp.vec4d, a: wp.float64) -> wp.vec4d:
    """Shortest-arc slerp of unit quaternions (w, x, y, z), as :func:`replay.sim.engine.wrist.slerp_wxyz`."""
    dot = q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3]
    s1 = wp.float64(1.0)
    if dot < wp.float64(0.0):
        s1 = wp.float64(-1.0)
        dot = -dot
    if dot > wp.float64(1.0):
        dot = wp.float64(1.0)
    th = wp.acos(dot)
    s = wp.sin(th)
    w0 = wp.float64(1.0) - a
    w1 = a
    if not (s < wp.float64(1e-8)):
        w0 = wp.sin((wp.float64(1.0) - a) * th) / s
        w1 = wp.sin(a * th) / s
    out = w0 * q0 + (w1 * s1) * q1
    return out / wp.length(out)


@wp.kernel
def wrist_kernel(
    qpos: wp.array2d[wp.float32],
    qvel: wp.array2d[wp.float32],
    xipos: wp.array2d[wp.vec3],
    act_force: wp.array2d[wp.float32],
    tgt_prev: wp.array2d[wp.float64],
    tgt_cur: wp.array2d[wp.float64],
    par: wp.array[wp.float64],
    hand_bodies: wp.array[wp.int32],
    hand_body_mass: wp.array[wp.float64],
    live: wp.array[wp.int32],
    qadr: int,
    vadr: int,
    root: int,
    frac: wp.float64,
    interp: int,
    xfrc: wp.array2d[wp.spatial_vector],
    act_max: wp.array[wp.float64],
):
    """:func:`replay.sim.engine.wrist.wrench` for one world at fraction ``frac`` of the frame into ``xfrc[w, root]``
    (N, N·m, world); ``act_max[w]`` the previous step's largest |actuator force|. Long: one launch per physics step."""
    w = wp.tid()
    if live[w] == 0:
        xfrc[w, root] = wp.spatial_vector()
        return
    tp = wp.vec3d(tgt_cur[w, 0], tgt_cur[w, 1], tgt_cur[w, 2])
    tq = wp.vec4d(tgt_cur[w, 3], tgt_cur[w, 4], tgt_cur[w, 5], tgt_cur[w, 6])
    if interp != 0:
        one = wp.float64(1.0)
        tp = wp.vec3d(
            (one - frac) * tgt_prev[w, 0] + frac * tgt_cur[w, 0],
            (one - frac) * tgt_prev[w, 1] + frac * tgt_cur[w, 1],
            (one - frac) * tgt_prev[w, 2] + frac * tgt_cur[w, 2],
        )
        tq = _slerp_wxyz(wp.vec4d(tgt_prev[w, 3], tgt_prev[w, 4], tgt_prev[w, 5], tgt_prev[w, 6]), tq, frac)
    tv = wp.vec3d(tgt_cur[w, 7], tgt_cur[w, 8], tgt_cur[w, 9])
    to = wp.vec3d(tgt_cur[w, 10], tgt_cur[w, 11], tgt_cur[w, 12])
    ta = wp.vec3d(tgt_cur[w, 13], tgt_cur[w, 14], tgt_cur[w, 15])

    p = wp.vec3d(wp.float64(qpos[w, qadr]), wp.float64(qpos[w, qadr + 1]), wp.float64(qpos[w, qadr + 2]))
    qw = wp.float64(qpos[w, qadr + 3])
    qx = wp.float64(qpos[w, qadr + 4])
    qy = wp.float64(qpos[w, qadr + 5])
    qz = wp.float64(qpos[w, qadr + 6])
    nq = wp.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
    qw = qw / nq
    qx = qx / nq
    qy = qy / nq
    qz = qz / nq
    one = wp.float64(1.0)
    two = wp.float64(2.0)
    R = wp.mat33d(
        one - two * (qy * qy + qz * qz),
        two * (qx * qy - qw * qz),
        two * (qx * qz + qw * qy),
        two * (qx * qy + qw * qz),
        one - two * (qx * qx + qz * qz),
        two * (qy * qz - qw * qx),
        two * (qx * qz - qw * qy),
        two * (qy * qz + qw * qx),
        one - two * (qx * qx + qy * qy),
    )
    ip = wp.vec3d(par[20], par[21], par[22])
    c_root = p + R * ip
    wb = wp.vec3d(wp.float64(qvel[w, vadr + 3]), wp.float64(qvel[w, vadr + 4]), wp.float64(qvel[w, vadr + 5]))
    om = R * wb
    v = wp.vec3d(wp.float64(qvel[w, vadr]), wp.float64(qvel[w, vadr + 1]), wp.float64(qvel[w, vadr + 2]))
    M = par[18]
    f = wp.vec3d()
    for i in range(3):
        f[i] = par[i] * (tp[i] - p[i]) + par[6 + i] * (tv[i] - v[i]) + par[12 + i] * tv[i] + M * ta[i]
    authored = authored_wrench_part(par, R, p, v, wb, wp.vec4d(qw, qx, qy, qz), tp, tq)
    # orientation error: rotation vector of q* q^-1 (angle in [0, pi])
    cw = qw
    cx = -qx
    cy = -qy
    cz = -qz
    tw = tq[0]
    tx = tq[1]
    ty = tq[2]
    tz = tq[3]
    ew = tw * cw - tx * cx - ty * cy - tz * cz
    ex = tw * cx + tx * cw + ty * cz - tz * cy
    ey = tw * cy - tx * cz + ty * cw + tz * cx
    ez = tw * cz + tx * cy - ty * cx + tz * cw
    err = rotvec_unnormalized(ew, ex, ey, ez)
    tau = wp.vec3d()
    for i in range(3):
        tau[i] = par[3 + i] * err[i] + par[9 + i] * (to[i] - om[i]) + par[15 + i] * to[i]
    if par[23] == wp.float64(1.0):  # wrist_law authored_actuators (P_LAW)
        f = wp.spatial_top(authored)
        tau = wp.spatial_bottom(authored)
    r = p - c_root
    tau = tau + wp.cross(r, f)
    # gravity feed-forward: M g up at the hand's COM, moved to the root COM
    ch = wp.vec3d()
    for j in range(hand_bodies.shape[0]):
        b = hand_bodies[j]
        xb = xipos[w, b]
        ch = ch + hand_body_mass[j] * wp.vec3d(wp.float64(xb[0]), wp.float64(xb[1]), wp.float64(xb[2]))
    fg = M * par[19] * par[24]  # P_GCOMP: 0 = no gravity compensation
    dx = ch[0] / M - c_root[0]
    dy = ch[1] / M - c_root[1]
    xfrc[w, root] = wp.spatial_vector(
        wp.float32(f[0]),
        wp.float32(f[1]),
        wp.float32(f[2] + fg),
        wp.float32(tau[0] + dy * fg),
        wp.float32(tau[1] - dx * fg),
        wp.float32(tau[2]),
    )
    m = act_max[w]
    for i in range(act_force.shape[1]):
        a = wp.abs(wp.float64(act_force[w, i]))
        if a > m:
            m = a
    act_max[w] = m


@wp.kernel
def finger_ctrl_kernel(
    quat: wp.array3d[wp.float64],
    joint: wp.array[wp.int32],
    axis: wp.array[wp.int32],
    act: wp.array[wp.int32],
    qcj: wp.array2d[wp.float64],
    ctrl: wp.array2d[wp.float32],
):
    """MuJoCo ``ctrl`` of the finger actuators from targets (N, 15, 4) xyzw (one thread per world and actuator)."""
    w, k = wp.tid()
    j = joint[k]
    x = quat[w, j, 0]
    y = quat[w, j, 1]
    z = quat[w, j, 2]
    qw = quat[w, j, 3]
    nrm = wp.sqrt(x * x + y * y + z * z + qw * qw)
    aa = wp.vec3d()
    if nrm >= wp.float64(1e-20):
        x = x / nrm
        y = y / nrm
        z = z / nrm
        qw = qw / nrm
        s = wp.sqrt(x * x + y * y + z * z)
        if s > wp.float64(0.0):
            ang = wp.float64(2.0) * wp.atan2(s, qw)
            if ang > _PI64:
                ang = ang - _TWO_PI64
            aa = wp.vec3d(x * ang / s, y * ang / s, z * ang / s)
    u = wp.vec3d(qcj[k, 0], qcj[k, 1], qcj[k, 2])
    uw = qcj[k, 3]
    t = wp.float64(2.0) * wp.cross(u, aa)
    rr = aa + uw * t + wp.cross(u, t)
    ctrl[w, act[k]] = wp.float32(rr[axis[k]])


@wp.kernel
def park_kernel(
    live: wp.array[wp.int32],
    qpos_park: wp.array[wp.float32],
    qpos: wp.array2d[wp.float32],
    qvel: wp.array2d[wp.float32],
):
    """Hold parked worlds (``live[w] == 0``) at ``qpos_park``, at rest."""
    w = wp.tid()
    if live[w] != 0:
        return
    for i in range(qpos.shape[1]):
        qpos[w, i] = qpos_park[i]
    for i in range(qvel.shape[1]):
        qvel[w, i] = wp.float32(0.0)


@wp.kernel
def count_contacts_kernel(
    nacon: wp.array[wp.int32],
    worldid: wp.array[wp.int32],
    count: wp.array[wp.int32],
):
    """Contacts per world in the pool (one thread per pool slot)."""
    c = wp.tid()
    if c >= nacon[0]:
        return
    wp.atomic_add(count, worldid[c], 1)


@wp.kernel
def fold_peak_kernel(count: wp.array[wp.int32], peak: wp.array[wp.int32]):
    """peak[w] = max(peak[w], count[w]); count[w] = 0."""
    w = wp.tid()
    if count[w] > peak[w]:
        peak[w] = count[w]
    count[w] = 0


@wp.kernel
def hand_object_kernel(
    nacon: wp.array[wp.int32],
    geom: wp.array[wp.vec2i],
    worldid: wp.array[wp.int32],
    dim: wp.array[wp.int32],
    efc_address: wp.array2d[wp.int32],
    efc_force: wp.array2d[wp.float32],
    hand_geoms: wp.array[wp.int32],
    object_geoms: wp.array[wp.int32],
    pyramidal: int,
    force_min: wp.float64,
    n_ho: wp.array[wp.int32],
    n_hof: wp.array[wp.int32],
):
    """Hand-object contacts per world and those over ``force_min`` N normal force (pyramidal: the sum of the
    ``2 (dim - 1)`` rows), one thread per pool slot."""
    c = wp.tid()
    if c >= nacon[0]:
        return
    g0 = geom[c][0]
    g1 = geom[c][1]
    if g0 < 0 or g1 < 0:
        return
    if not ((hand_geoms[g0] != 0 and object_geoms[g1] != 0) or (hand_geoms[g1] != 0 and object_geoms[g0] != 0)):
        return
    w = worldid[c]
    wp.atomic_add(n_ho, w, 1)
    a = efc_address[c, 0]
    if a < 0:
        return
    f = wp.float64(0.0)
    if pyramidal != 0:
        rows = wp.max(1, 2 * (dim[c] - 1))
        for r in range(rows):
            ar = efc_address[c, r]
            if ar >= 0:
                f += wp.float64(efc_force[w, ar])
    else:
        f = wp.float64(efc_force[w, a])
    if f > force_min:
        wp.atomic_add(n_hof, w, 1)


@wp.kernel
def signals_kernel(
    qpos: wp.array2d[wp.float32],
    qvel: wp.array2d[wp.float32],
    xpos: wp.array2d[wp.vec3],
    xquat: wp.array2d[wp.quat],
    xipos: wp.array2d[wp.vec3],
    cvel: wp.array2d[wp.spatial_vector],
    subtree_com: wp.array2d[wp.vec3],
    body_rootid: wp.array[wp.int32],
    bodies: wp.array[wp.int32],
    n_ho: wp.array[wp.int32],
    n_hof: wp.array[wp.int32],
    overflow: wp.array[wp.int32],
    nacon: wp.array[wp.int32],
    nefc: wp.array[wp.int32],
    peak: wp.array[wp.int32],
    act_force: wp.array2d[wp.float32],
    act_max: wp.array[wp.float64],
    sig: wp.array2d[wp.float64],
    poses: wp.array3d[wp.float32],
):
    """One world's signals into ``sig[w]`` (``S_*``) and ``poses[w]`` (17, 7: m, xyzw); NaN counts as fastest. Long:
    one launch gathers every signal for one transfer per frame."""
    w = wp.tid()
    fin = int(1)
    for i in range(qpos.shape[1]):
        if not wp.isfinite(qpos[w, i]):
            fin = 0
    for i in range(qvel.shape[1]):
        if not wp.isfinite(qvel[w, i]):
            fin = 0
    vmax = wp.float64(-1.0)
    wmax = wp.float64(-1.0)
    vb = wp.float64(-1.0)
    wbd = wp.float64(-1.0)
    for k in range(bodies.shape[0]):
        b = bodies[k]
        cv = cvel[w, b]
        om = wp.vec3d(wp.float64(cv[0]), wp.float64(cv[1]), wp.float64(cv[2]))
        lin = wp.vec3d(wp.float64(cv[3]), wp.float64(cv[4]), wp.float64(cv[5]))
        xi = xipos[w, b]
        sc = subtree_com[w, body_rootid[b]]
        d = wp.vec3d(wp.float64(xi[0] - sc[0]), wp.float64(xi[1] - sc[1]), wp.float64(xi[2] - sc[2]))
        vel = lin + wp.cross(om, d)
        v = wp.length(vel)
        a = wp.length(om)
        if not (v <= vmax):
            vmax = v
            vb = wp.float64(b)
        if not (a <= wmax):
            wmax = a
            wbd = wp.float64(b)
        p = xpos[w, b]
        q = xquat[w, b]  # MuJoCo (w, x, y, z) stored in a wp.quat's four slots
        poses[w, k, 0] = p[0]
        poses[w, k, 1] = p[1]
        poses[w, k, 2] = p[2]
        poses[w, k, 3] = q[1]
        poses[w, k, 4] = q[2]
        poses[w, k, 5] = q[3]
        poses[w, k, 6] = q[0]
    m = act_max[w]
    for i in range(act_force.shape[1]):
        aa = wp.abs(wp.float64(act_force[w, i]))
        if aa > m:
            m = aa
    act_max[w] = m
    sig[w, 0] = wp.float64(fin)
    sig[w, 1] = vmax
    sig[w, 2] = vb
    sig[w, 3] = wmax
    sig[w, 4] = wbd
    sig[w, 5] = wp.float64(n_ho[w])
    sig[w, 6] = wp.float64(n_hof[w])
    sig[w, 7] = wp.float64(overflow[w])
    sig[w, 8] = wp.float64(nacon[0])
    sig[w, 9] = wp.float64(peak[w])
    sig[w, 10] = m
    sig[w, 11] = wp.float64(nefc[w])
