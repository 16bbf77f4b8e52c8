"""Stepping N worlds of one replay scene: MuJoCo C on the CPU (:mod:`replay.engine.mjc`),
mujoco-warp with every world in one launch on CUDA or Warp's CPU device
(:mod:`replay.engine.warp_batch`).

The engine knows nothing of datasets or of the protocol's meaning: it takes a
built scene, one :class:`Variant` per world and per-frame targets (finger joint
quaternions and wrist target rows, :mod:`replay.engine.wrist`), and returns per
frame body poses and contact signals.
"""

from replay.engine.variants import Variant

__all__ = ["Variant"]
