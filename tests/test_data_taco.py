"""TACO adapter and the cached CoACD decomposition on the real mirror files."""

from __future__ import annotations

import pickle
import time

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from replay.data import list_sequences

from replay.checks import load_recording
from replay.data.coacd import COACD_SETTINGS, convex_decomposition
from replay.data.taco import TACO_FPS, load_taco
from replay.errors import DataError

pytestmark = pytest.mark.needs_data


@pytest.fixture(scope="module")
def taco010(taco_dir):
    return load_taco(taco_dir / "20231104_010.pkl")


def _raw(taco_dir, seq):
    with open(taco_dir / f"{seq}.pkl", "rb") as f:  # trusted mirror file, to cross-check the adapter
        return pickle.load(f)


def test_taco_counts_units_conventions(taco010, taco_dir):
    raw = _raw(taco_dir, "20231104_010")
    rec = taco010
    n = len(raw["obj_pose"])  # frame count from the raw arrays
    assert len(raw["hand_pose"]) == len(raw["hand_verts"]) == n
    assert rec.num_frames == n and rec.fps == TACO_FPS == 30.0
    # quaternions xyzw: rebuilding the rotation reproduces obj_pose
    R = Rotation.from_quat(rec.target_object.quat).as_matrix()
    np.testing.assert_allclose(R, raw["obj_pose"][:, :3, :3], atol=1e-5)
    # lift onset re-derived from the raw poses: first frame > 1 cm above the start
    z = raw["obj_pose"][:, 2, 3].astype(float)
    assert rec.grasp_frame == int(np.flatnonzero(z > z[0] + 0.01)[0])
    assert 10 < rec.grasp_frame < 60  # about 1 s of rest before the lift at 30 fps
    # README: lifted about 17 cm
    assert 0.15 < z.max() - z[0] < 0.22
    m = rec.mano
    assert m.finger_pose.shape == (n, 15, 3) and m.global_orient.shape == (n, 3)
    np.testing.assert_array_equal(m.finger_pose.reshape(n, 45), raw["hand_pose"][:, 3:])
    assert m.vertices.shape == (n, 778, 3) and m.flat_hand_mean is None  # 778: MANO's vertex count
    # support: a table ~0.55 m up; the MANO mesh may dip below it by < 1 cm, not more
    assert 0.5 < rec.support_height < 0.6
    assert -0.01 < rec.meta["hand_lowest_z"] - rec.support_height < 0.002


def test_taco_all_sequences(taco_dir):
    names = list_sequences("taco", data_dir=taco_dir.parent / "_none_")
    assert names == ["20231104_010", "20231104_017"]
    rec = load_recording("taco", "20231104_017", data_dir=taco_dir.parent / "_none_")
    raw = _raw(taco_dir, "20231104_017")
    assert rec.num_frames == len(raw["obj_pose"])
    # lift onset re-derived from the raw poses, same rule: first frame > 1 cm above the start
    z = raw["obj_pose"][:, 2, 3].astype(float)
    assert rec.grasp_frame == int(np.flatnonzero(z > z[0] + 0.01)[0])


def test_coacd_cached(taco_dir, taco010):
    parts = taco010.target_object.asset.collision_meshes
    assert 1 <= len(parts) <= COACD_SETTINGS["max_convex_hull"]
    t = time.perf_counter()
    again = convex_decomposition(taco_dir / "20231104_010.obj")
    assert time.perf_counter() - t < 1.0  # from the cache, not recomputed (CoACD takes seconds)
    assert again == parts
    for p in parts:
        hull = trimesh.load(p)
        assert hull.is_convex or hull.convex_hull.volume == pytest.approx(hull.volume, rel=0.02)


def test_taco_wrong_mesh_is_detected(taco_dir, tmp_path):
    with pytest.raises(DataError, match="obj_pose.*obj_verts"):
        load_taco(taco_dir / "20231104_010.pkl", obj_path=taco_dir / "20231104_017.obj")


def test_taco_missing_mesh(taco_dir, tmp_path):
    with pytest.raises(DataError, match="mesh file not found"):
        load_taco(taco_dir / "20231104_010.pkl", obj_path=tmp_path / "nope.obj")


def test_taco_nan_and_missing_field(taco_dir, tmp_path):
    raw = _raw(taco_dir, "20231104_010")
    raw["hand_verts"][17, 3] = np.nan
    p = tmp_path / "nan.pkl"
    p.write_bytes(pickle.dumps(raw))
    with pytest.raises(DataError, match=r"nan.pkl \[hand_verts\].*frame 17"):
        load_taco(p, obj_path=taco_dir / "20231104_010.obj")
    raw = _raw(taco_dir, "20231104_010")
    del raw["obj_pose"]
    p.write_bytes(pickle.dumps(raw))
    with pytest.raises(DataError, match=r"\[obj_pose\]: missing field"):
        load_taco(p, obj_path=taco_dir / "20231104_010.obj")
