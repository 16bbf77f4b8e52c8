"""Simulation: the Newton scene of one replay, its physics, the silent-failure checks and the engines that step it."""
