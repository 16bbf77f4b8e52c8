"""The short real rollout shared by the CPU rollout tests and the CUDA tests.

One small GRAB object whose replay lifts with the default settings (see the study
results), replayed over a short window before the recorded lift onset, so a test runs
the whole chain (adapter -> landmark IK -> importer -> scene -> controls -> solver)
in seconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from replay.data.grab import load_grab
from replay.study.prepare import crop_recording, hand_trajectory

#: small GRAB object whose replay lifts with the default settings
OBJECT = "cubesmall"
#: a short protocol: 0.5 s of recorded approach (1 s at half speed), a 6 cm lift, under the replay physics (the
#: declared table these checks are measured against; the calibrated default judge is the studies' to check)
SHORT = dict(
    physics="replay",
    approach_window_s=0.5,
    settle_s=0.2,
    lift={"lift_height": 0.06, "lift_s": 0.5, "hold_s": 0.3, "lifted_min_rise": 0.03},
)


def short_window(grab_dir: Path, mjcf: Path):
    """(recording cropped to the replayed window, hand coords (T, 67), Newton xyzw) for OBJECT."""
    rec = load_grab(grab_dir / "recordings" / f"{OBJECT}_lift.pkl")
    g = rec.grasp_frame
    start = int(np.searchsorted(rec.time, rec.time[g] - SHORT["approach_window_s"])) - 2
    rec = crop_recording(rec, max(0, start), g + 3)
    return hand_trajectory(rec, mjcf)


def contact_and_ablation(window, mjcf: Path, **overrides):
    """(contact rollout, contact-ablation rollout, config) on the short window with the
    SHORT protocol and ``overrides`` (e.g. ``device="cuda"``)."""
    from replay.config import ReplayConfig
    from replay.protocol.rollout import run_rollout

    rec, coords = window
    cfg = ReplayConfig(**SHORT, **overrides)
    return (run_rollout(rec, coords, mjcf, cfg=cfg, ablation=False),
            run_rollout(rec, coords, mjcf, cfg=cfg, ablation=True), cfg)


def still_window(grab_dir: Path, name: str = OBJECT, frames: int = 20):
    """(``<name>_lift`` cropped to ``frames`` frames before its grasp frame and 3 after, hand coords (T, 67)):
    the hand still, 0.3 m above the object's first position, fingers straight (identity quaternions, xyzw).
    For tests of what a scene compiles to (no compiled field depends on the hand's pose): no landmark IK."""
    rec = load_grab(grab_dir / "recordings" / f"{name}_lift.pkl")
    g = int(rec.grasp_frame)
    rec = crop_recording(rec, max(0, g - frames), g + 3)
    coords = np.zeros((len(rec.time), 67))
    coords[:, :3] = rec.target_object.pos[0] + np.array([0.0, 0.0, 0.3])
    coords[:, 6::4] = 1.0  # the wrist's and the 15 finger joints' quaternions (xyzw): identity
    return rec, coords
