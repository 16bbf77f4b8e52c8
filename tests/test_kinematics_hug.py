"""HUG-Bench path: adapter -> MANO mapping (T_world_wrist + flat pose) -> FK equals the recorded landmarks."""

from __future__ import annotations

import numpy as np
import pytest
from kin_hug_fixture import make_fk_consistent_hug

from replay.checks import load_recording
from replay.kinematics.coords import complete_hand, hand_coords
from replay.kinematics.validate import sequence_errors, summarize

pytestmark = pytest.mark.needs_data


def test_hug_fixture_pose_mapping_round_trip(tmp_path, capsule_rhand):
    """Device-frame landmarks/T_device_wrist/pose written as float32 come back to < 0.05 mm.

    This checks the chain (T_world_device @ T_device_wrist, the flat-hand reading,
    manosim FK) is self-consistent; it cannot tell how real HUG-Bench data relate
    to manosim: no real HUG-Bench recording is in the mirror, and on fetched scenes
    ``scripts/validate_pose_mapping.py`` measures that (its ``reading_check``).
    """
    data_dir, scene = make_fk_consistent_hug(tmp_path, capsule_rhand)
    rec = load_recording("hug-bench", "test/small_9", data_dir)
    s = sequence_errors(rec, capsule_rhand, cache=False)
    assert s.reference == "landmarks"
    assert s.info["source"] == "mano" and s.info["wrist"] == "T_world_wrist" and s.info["flat_hand_mean"]
    assert len(s.frames) == int(scene.valid.sum())
    assert np.nanmax(s.errors) < 0.05, np.nanmax(s.errors)
    summary = summarize([s])
    assert summary["datasets"]["hug-bench"]["frames"] == len(s.frames)
    q = hand_coords(complete_hand(rec, capsule_rhand))
    assert q.shape == (rec.num_frames, 67)
    assert np.all(np.isfinite(q[rec.valid]))
