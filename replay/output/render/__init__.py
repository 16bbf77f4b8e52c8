"""Headless videos of what a study simulated: per-clip H.264, montage tiling.

Modules, one concern each (imported in this order; no module imports a later one):

* :mod:`~replay.output.render.style`: colours and view constants;
* :mod:`~replay.output.render.poses`: saved poses, read and checked;
* :mod:`~replay.output.render.clip`: a rollout's clip (poses, hand, object, support), read and checked;
* :mod:`~replay.output.render.model`: the render-only MuJoCo model and pose application;
* :mod:`~replay.output.render.camera`: the fixed camera framing hand and object;
* :mod:`~replay.output.render.overlay`: text over each frame;
* :mod:`~replay.output.render.video`: frames on an EGL context and atomic H.264 mp4 files;
* :mod:`~replay.output.render.montage`: many clips tiled into one mp4;
* :mod:`~replay.output.render.hand_points`: a hand drawn from recorded points (skeleton, vertices);
* :mod:`~replay.output.render.recording`: a *recording* (not a rollout) drawn as the data has it.

Renderer choice: MuJoCo's own offscreen ``mujoco.Renderer`` on an EGL context
(``MUJOCO_GL=egl``), which on a machine without GPU or display runs on Mesa llvmpipe. It
was chosen over Newton's ``ViewerGL(headless=True)`` because it needs no window system and
is several times faster on CPU, and because only *saved poses* are drawn: no Newton model or
solver is needed. Measured on the 2-core dev machine (Mesa 22.3.6 llvmpipe, shared with
other jobs), a GRAB mug rollout of 189 frames: 12-25 ms per 640x480 frame for scene update
+ GL render + readback + overlay (shadows, reflections and MSAA off), 20-45 ms including
model build and H.264 encoding; 7-10 ms per 320x240 frame. Newton's ViewerGL headless:
100-130 ms per frame. Only one GL context is alive at a time (each clip's renderer is
closed before the next is made). ``MUJOCO_GL`` is read by MuJoCo at import time, so this
package sets it to ``egl`` unless the caller has set it (``osmesa`` also works where
libOSMesa is installed).

What is drawn (never re-simulated): a render-only MuJoCo model built with ``MjSpec`` with
one mocap body per saved body: the hand's visible geoms (groups 0-2) of the manosim MJCF
that was simulated, skin coloured; each object's visual mesh (never its convex collision
hulls, which would z-fight with it); the support as simulated (a finite table-top box over
a floor, so an object falling off the table edge is seen falling, or an infinite plane);
and a fixed camera. The saved-pose contract (``time``, ``body_names``, ``body_pos`` world m
Z-up, ``body_quat`` world **xyzw**, ``contact_count``, ``phase``) is checked by
:func:`~replay.output.render.poses.load_poses_npz`; files are read through :mod:`replay.results` (format
version checked; ``docs/results.md``).

Output: H.264 mp4, yuv420p, through ``imageio_ffmpeg.write_frames``, written to a temporary
name in the destination folder and renamed when complete.
"""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")
