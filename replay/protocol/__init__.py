"""Protocols: what a replay steps and what its outcome means (plans, rollouts, measures, diagnosis); above
:mod:`replay.sim`, below :mod:`replay.study`."""
