"""mujoco-warp engine: :mod:`.warp_batch` (WarpBatch) with its worlds, buffers and kernels."""
