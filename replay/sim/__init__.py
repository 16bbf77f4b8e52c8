"""Simulation: the Newton scene of one replay and the engines that step it.

Above :mod:`replay.checks` (it simulates only recordings that passed them), below
:mod:`replay.protocol` (which says what to step and what it means):

* :mod:`~replay.sim.hand_assets` - which manosim MJCF a replay uses (no physics import);
* :mod:`~replay.sim.world_builder` - hand (through ``importer_patches``), object, support,
  the ablation's contact filters;
* :mod:`~replay.sim.scene` - the Newton model + ``SolverMuJoCo`` of one replay (contact
  capacity, what MuJoCo compiled read back);
* :mod:`~replay.sim.control` - wrist wrench and finger targets for the Newton reference path;
* :mod:`~replay.sim.made_mass` - the object's mass as it was made (a print's shell and infill);
* :mod:`~replay.sim.finger_strength` - the fingers' per-joint effort limits;
* :mod:`~replay.sim.silent_failures` - silent failures: dropped contacts, parameters that did not
  reach the solver, the ball-drive flutter bound;
* :mod:`~replay.sim.solver_view` - the one place MuJoCo C and mujoco-warp differ for reads;
* :mod:`replay.sim.engine` - N worlds of one scene at MuJoCo speed (MuJoCo C, mujoco-warp,
  the Newton reference step).
"""
