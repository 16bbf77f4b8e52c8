"""MuJoCo C engine: :mod:`.mjc` (N worlds, MjcBatch) and :mod:`.c_loop` (its compiled substep loop)."""
