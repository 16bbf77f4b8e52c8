"""Headless videos of saved poses: per-clip H.264 mp4s and montages (docs/architecture.md, rendering).

``MUJOCO_GL`` is read when MuJoCo is first imported: this package sets it to ``egl`` unless the caller has.
"""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")
