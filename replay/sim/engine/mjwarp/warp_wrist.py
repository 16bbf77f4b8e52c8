"""The ``authored_actuators`` wrist law in Warp, twin of :mod:`replay.sim.engine.wrist`; float64, wxyz, Z up."""

from __future__ import annotations

import warp as wp


@wp.func
def rotvec_unnormalized(w: wp.float64, x: wp.float64, y: wp.float64, z: wp.float64) -> wp.vec3d:
    """Rotation vector, rad, of a unit wxyz quaternion taken as it is, angle in [0, pi]."""
    s = wp.float64(1.0)
    if w < wp.float64(0.0):
        s = wp.float64(-1.0)
    sv = wp.sqrt(x * x + y * y + z * z)
    k = wp.float64(0.0)
    if sv < wp.float64(1e-12):
        if s * w > wp.float64(0.0):
            k = wp.float64(2.0) / (s * w)
    else:
        k = wp.float64(2.0) * wp.atan2(sv, s * w) / sv
    return wp.vec3d(s * x * k, s * y * k, s * z * k)


@wp.func
def rotvec_wxyz(q: wp.vec4d) -> wp.vec3d:
    """Rotation vector, rad, of the wxyz quaternion, normalized first."""
    n = wp.length(q)
    return rotvec_unnormalized(q[0] / n, q[1] / n, q[2] / n, q[3] / n)


@wp.func
def authored_wrench_part(
    par: wp.array[wp.float64],
    R: wp.mat33d,
    p: wp.vec3d,
    v: wp.vec3d,
    wb: wp.vec3d,
    q: wp.vec4d,
    tp: wp.vec3d,
    tq: wp.vec4d,
) -> wp.spatial_vectord:
    """(force N, torque N·m), world, of the MJCF's wrist actuators, the torque before the move to the COM."""
    f = wp.vec3d()
    for i in range(3):
        f[i] = par[i] * (tp[i] - p[i]) - par[6 + i] * v[i]
    rv = rotvec_wxyz(q)
    rt = rotvec_wxyz(tq)
    loc = wp.vec3d()
    pi = wp.float64(3.141592653589793)
    for i in range(3):
        e = rt[i] - rv[i]  # wrapped into (-pi, pi] per axis, as MuJoCo does
        if e > pi:
            e = e - wp.float64(2.0) * pi
        elif e <= -pi:
            e = e + wp.float64(2.0) * pi
        loc[i] = par[3 + i] * e - par[9 + i] * wb[i]
    t = R * loc
    return wp.spatial_vectord(f[0], f[1], f[2], t[0], t[1], t[2])
