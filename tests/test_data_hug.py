"""HUG-Bench adapter: round trip through files generated in the documented layout."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hug_fixture import BOX_CENTRE, MISSING_RIGHT, TABLE_Z, make_hug_scene

from replay.data import list_sequences

from replay.checks import load_recording
from replay.data.hug import load_hug
from replay.errors import DataError


@pytest.fixture()
def scene(tmp_path):
    return make_hug_scene(tmp_path)


def test_round_trip(scene):
    rec = load_hug(scene.aria_pkl, scene.scene_dir)
    assert rec.num_frames == len(scene.valid) and rec.fps == 10.0 and rec.hand_side == "right"
    np.testing.assert_array_equal(rec.valid, scene.valid)
    assert list(np.flatnonzero(~rec.valid)) == list(MISSING_RIGHT)
    # device -> world landmarks (stored float32 in the device frame ~1.5 m away: 1e-6 m)
    np.testing.assert_allclose(rec.landmarks[rec.valid], scene.landmarks_world[scene.valid], atol=1e-6)
    assert np.all(np.isnan(rec.landmarks[~rec.valid]))
    # T_world_wrist = T_world_device @ T_device_wrist
    np.testing.assert_allclose(rec.mano.T_world_wrist[rec.valid], scene.T_world_wrist[scene.valid], atol=1e-9)
    np.testing.assert_allclose(rec.mano.finger_pose[rec.valid], scene.pose[scene.valid], atol=1e-6)
    np.testing.assert_allclose(rec.mano.betas[rec.valid], scene.betas[scene.valid], atol=1e-6)
    # objects: resting, untracked, placed at world_position
    names = [o.name for o in rec.objects]
    assert names == ["box", "can"]
    assert all(not o.tracked for o in rec.objects)
    np.testing.assert_allclose(rec.objects[0].pos, np.tile(BOX_CENTRE, (rec.num_frames, 1)), atol=1e-9)
    np.testing.assert_allclose(rec.objects[0].quat[:, 3], 1.0)
    assert len(rec.objects[0].asset.collision_meshes) == 2
    # first grasp: the analytic frame from the fixture's geometry, on the box
    assert rec.target_object.name == "box"
    assert rec.grasp_frame == scene.grasp_frame
    assert rec.support_height == pytest.approx(TABLE_Z, abs=1e-9)


def test_dispatch_and_left_hand(tmp_path):
    fx = make_hug_scene(tmp_path, staged=True)
    assert list_sequences("hug-bench", tmp_path) == ["test/small_9"]
    rec = load_recording("hug-bench", "test/small_9", tmp_path)
    assert rec.grasp_frame == fx.grasp_frame and rec.name == "test/small_9"
    # the left hand exists in every third frame but never grasps: a clear error
    with pytest.raises(DataError, match="no grasp found"):
        load_recording("hug-bench", "test/small_9", tmp_path, hand="left")


def _rewrite(scene, edit):
    with open(scene.aria_pkl, "rb") as f:
        data = pickle.load(f)
    edit(data)
    with open(scene.aria_pkl, "wb") as f:
        pickle.dump(data, f)


def test_missing_field_named(scene):
    _rewrite(scene, lambda d: d["frame_data"][7]["mano_hand_tracking"]["right"].pop("T_device_wrist"))
    with pytest.raises(DataError, match=r"aria_data.pkl \[frame_data\[7\]\.mano_hand_tracking\.right\.T_device_wrist\]: missing"):
        load_hug(scene.aria_pkl, scene.scene_dir)


def test_bad_shape_and_non_rigid(scene):
    _rewrite(scene, lambda d: d["frame_data"][5]["mano_hand_tracking"]["right"].update(landmarks=np.zeros((20, 3))))
    with pytest.raises(DataError, match=r"frame_data\[5\].*landmarks.*\(21, 3\)"):
        load_hug(scene.aria_pkl, scene.scene_dir)


def test_non_rigid_device_pose(scene):
    def edit(d):
        d["frame_data"][9]["T_world_device"] = d["frame_data"][9]["T_world_device"] * 1.1
    _rewrite(scene, edit)
    with pytest.raises(DataError, match=r"frame_data\[9\]\.T_world_device.*rigid"):
        load_hug(scene.aria_pkl, scene.scene_dir)


def test_missing_properties(scene):
    (scene.scene_dir / "can" / "sim_assets" / "properties.json").unlink()
    with pytest.raises(DataError, match="properties.json"):
        load_hug(scene.aria_pkl, scene.scene_dir)


def test_missing_collision_parts(scene):
    for p in (scene.scene_dir / "box" / "sim_assets" / "coacd").iterdir():
        p.unlink()
    with pytest.raises(DataError, match="no convex decomposition part"):
        load_hug(scene.aria_pkl, scene.scene_dir)
