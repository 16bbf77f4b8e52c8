"""MuJoCo C engine: :mod:`.mjc` (N worlds, MjcBatch, and its Python loop) and :mod:`.c_loop` (its compiled spans)."""
