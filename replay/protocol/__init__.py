"""Protocols: what a replay steps and what its outcome means.

Above :mod:`replay.sim` (it builds scenes and steps engines), below :mod:`replay.study`
(which runs many of these):

* :mod:`~replay.protocol.plan` - per-frame targets (:class:`~replay.protocol.plan.Plan`),
  phase codes;
* :mod:`~replay.protocol.lift_plan` - the lift protocol's plan (settle, approach, lift, hold,
  shake);
* :mod:`~replay.protocol.recorded_protocol` - the recorded protocol and its object-track figures;
* :mod:`~replay.protocol.rollout` - one recording: plan, build, step any plan, measure
  (the orchestration);
* :mod:`~replay.protocol.measures` - what one world's trace says: outcome, slip, friction
  budget, creep, slip onset;
* :mod:`~replay.protocol.diagnosis` - why a grasp failed, from measured signals.
"""
