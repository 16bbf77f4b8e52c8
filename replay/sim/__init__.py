"""Simulation: the Newton scene of one replay (:mod:`~replay.sim.scene`, :mod:`~replay.sim.world_builder`), its physics
(:mod:`~replay.sim.physics`), the checks of silent failures and the engines that step it (:mod:`replay.sim.engine`);
above :mod:`replay.checks`, below :mod:`replay.protocol`."""
