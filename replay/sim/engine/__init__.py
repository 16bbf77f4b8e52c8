"""Stepping N worlds of one replay scene (MuJoCo C, mujoco-warp, Steel, the Newton reference): every engine subclasses
:class:`replay.sim.engine.contract.Engine`; :mod:`replay.sim.engine.factory` alone picks the class. An engine takes a
built scene, one :class:`~replay.sim.engine.variants.Variant` per world and per-frame targets, and returns body poses
and contact signals per frame."""
