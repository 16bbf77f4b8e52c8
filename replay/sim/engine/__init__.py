"""Stepping N worlds of one replay scene: MuJoCo C on the CPU (:mod:`replay.sim.engine.mujoco_c.mjc`),
mujoco-warp with every world in one launch on CUDA or Warp's CPU device
(:mod:`replay.sim.engine.mjwarp.warp_batch`; its N-world model in :mod:`replay.sim.engine.mjwarp.warp_worlds`,
its device arrays in :mod:`replay.sim.engine.mjwarp.warp_buffers`, its kernels in
:mod:`replay.sim.engine.mjwarp.warp_kernels`).

Every engine subclasses one base class (:class:`replay.sim.engine.contract.Engine`, with its
:class:`~replay.sim.engine.contract.Capabilities`), and :mod:`replay.sim.engine.factory`
(``engine_for_scene(scene, variants)``) is the only place that picks an engine class; callers ask
an engine's capabilities, never its type.

The engine knows nothing of datasets or of the protocol's meaning: it takes a
built scene, one :class:`~replay.sim.engine.variants.Variant` per world and per-frame targets (finger joint
quaternions and wrist target rows, :mod:`replay.sim.engine.wrist`), and returns per
frame body poses and contact signals.
"""
