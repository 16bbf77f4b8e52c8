"""The reference engine: :mod:`.newton_step` (every step through SolverMuJoCo.step)."""
