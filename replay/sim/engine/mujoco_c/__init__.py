"""MuJoCo C engine: :mod:`.mjc` (N worlds and their Python loop) and :mod:`.c_loop` (their compiled spans)."""
