"""mujoco-warp engine: :mod:`.warp_batch` with its worlds, buffers and kernels."""
