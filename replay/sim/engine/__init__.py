"""Stepping N worlds of one replay scene (MuJoCo C, mujoco-warp, Steel, the Newton reference); docs/engine.md."""
