"""The device arrays of a :class:`~replay.sim.engine.mjwarp.warp_batch.WarpBatch`, allocated once per batch. Positions
m, masses kg, forces N / N·m; wrist rows MuJoCo wxyz, finger targets and poses xyzw."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.sim import physics
from replay.sim.engine import wrist
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.mjwarp.warp_kernels import S_SIZE

#: how far apart a parked world's hand and object are held, m
PARK_DISTANCE = 1000.0


def park_qpos(qpos0: np.ndarray, layout: MjLayout) -> np.ndarray:
    """(nq,) ``qpos0`` with the hand at (+PARK_DISTANCE, 0, +PARK_DISTANCE) m and the object at its mirror in x."""
    park = qpos0.copy()
    park[layout.hand_qadr : layout.hand_qadr + 3] = [PARK_DISTANCE, 0.0, PARK_DISTANCE]
    park[layout.object_qadr : layout.object_qadr + 3] = [-PARK_DISTANCE, 0.0, PARK_DISTANCE]
    return park


@dataclass
class WarpBuffers:
    """The batch's Warp arrays; N worlds, 17 recorded bodies.

    Attributes:
        par: (P_SIZE,) float64. hand_bodies: (16,); hand_mass: (16,) kg; bodies: (17,); rootid: (nbody,).
        fjoint, faxis, fact: (45,); qcj: (45, 4) xyzw. hand_geoms, obj_geoms: (ngeom,) int32. park: (nq,) float32.
        live: (N,) int32. tgt_prev, tgt: (N, 16) float64. fq: (N, 15, 4) float64 xyzw.
        count, peak, nho, nhof: (N,) int32. act: (N,) float64 N·m. sig: (N, S_SIZE) float64.
        poses: (N, 17, 7) float32 m, xyzw."""

    par: wp.array
    hand_bodies: wp.array
    hand_mass: wp.array
    bodies: wp.array
    rootid: wp.array
    fjoint: wp.array
    faxis: wp.array
    fact: wp.array
    qcj: wp.array
    hand_geoms: wp.array
    obj_geoms: wp.array
    pyramidal: int
    park: wp.array
    live: wp.array
    tgt_prev: wp.array
    tgt: wp.array
    fq: wp.array
    count: wp.array
    peak: wp.array
    nho: wp.array
    nhof: wp.array
    act: wp.array
    sig: wp.array
    poses: wp.array


def warp_buffers(scene, mj_model, layout: MjLayout, *, park: np.ndarray, nworld: int, device) -> WarpBuffers:
    """Allocate the arrays of ``nworld`` worlds of ``scene`` on ``device``; ``mj_model`` the compiled template,
    ``layout`` its :class:`~replay.sim.engine.layout.MjLayout`, ``park`` (nq,).

    Raises:
        ValueError: non-finite wrist constants."""
    lay, dev, N = layout, device, nworld
    dpass = scene.model.joint_damping.numpy()[scene.hand_qd_start : scene.hand_qd_start + 6].astype(float)
    com = scene.model.body_com.numpy()[scene.hand_bodies[0]]
    par = wrist.wrist_params(
        scene.wrist_kp,
        scene.wrist_kd,
        d_passive=dpass,
        hand_mass=scene.hand_mass,
        root_com_local=com,
        **physics.wrist_law_kwargs(scene.config),
    )

    def i32(x):
        return wp.array(np.asarray(x, np.int32), dtype=wp.int32, device=dev)

    def zeros(shape, dtype):
        return wp.zeros(shape, dtype=dtype, device=dev)

    return WarpBuffers(
        par=wp.array(par, dtype=wp.float64, device=dev),
        hand_bodies=i32(lay.hand_bodies),
        hand_mass=wp.array(np.asarray(mj_model.body_mass, float)[lay.hand_bodies], dtype=wp.float64, device=dev),
        bodies=i32(lay.bodies),
        rootid=i32(np.asarray(mj_model.body_rootid)),
        fjoint=i32(lay.finger_joint),
        faxis=i32(lay.finger_axis),
        fact=i32(lay.finger_act),
        qcj=wp.array(lay.finger_qcj, dtype=wp.float64, device=dev),
        hand_geoms=i32(lay.hand_geoms.astype(np.int32)),
        obj_geoms=i32(lay.object_geoms.astype(np.int32)),
        pyramidal=int(int(mj_model.opt.cone) == 0),  # mjCONE_PYRAMIDAL
        park=wp.array(park.astype(np.float32), dtype=wp.float32, device=dev),
        live=wp.ones(N, dtype=wp.int32, device=dev),
        tgt_prev=zeros((N, wrist.T_SIZE), wp.float64),
        tgt=zeros((N, wrist.T_SIZE), wp.float64),
        fq=zeros((N, MANOSIM_HAND.finger_joints, 4), wp.float64),
        count=zeros(N, wp.int32),
        peak=zeros(N, wp.int32),
        nho=zeros(N, wp.int32),
        nhof=zeros(N, wp.int32),
        act=zeros(N, wp.float64),
        sig=zeros((N, S_SIZE), wp.float64),
        poses=zeros((N, 17, 7), wp.float32),
    )
