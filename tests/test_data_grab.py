"""GRAB adapter and object_sim asset loader on the real mirror files."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from replay.data import list_sequences

from replay.checks import load_recording
from replay.data.grab import GRAB_FPS, load_grab
from replay.data.object_mjcf import grab_object_info, load_grab_object
from replay.data.objects import asset_mass
from replay.errors import DataError

pytestmark = pytest.mark.needs_data



@pytest.fixture(scope="module")
def mug(grab_dir):
    return load_grab(grab_dir / "recordings" / "mug_lift.pkl")


def test_mug_counts_units_and_lift_onset(mug, mug_raw):
    # every expected figure is re-derived from the raw pickle (the mirror README quotes the
    # same ones for mug_lift: 4246 frames, rest at 0.804 m, onset near 264, top 1.221 m)
    loc = np.asarray(mug_raw["object"]["loc"], dtype=float)
    n = len(loc)
    assert len(mug_raw["hand"]["joints_target"]) == len(mug_raw["hand"]["wrist_rot"]) == n
    assert mug.num_frames == n
    assert mug.fps == GRAB_FPS == 120.0  # GRAB's capture rate (Taheri et al., ECCV 2020); not in the file
    assert mug.time[-1] == pytest.approx((n - 1) / GRAB_FPS)
    # lift onset, rule stated here: first frame the object is more than 1 cm above its frame-0 height
    z_raw = loc[:, 2]
    onset = int(np.flatnonzero(z_raw > z_raw[0] + 0.01)[0])
    assert mug.grasp_frame == onset
    z = mug.target_object.pos[:, 2]
    np.testing.assert_allclose(z, z_raw, atol=1e-9)  # object.loc passed through, in metres
    assert 0.7 < z[0] < 1.2  # resting on a lab table, not at the origin or in millimetres
    assert z.max() - z[0] > 0.1  # a lift: the recorded track rises well over the 1 cm onset rule
    # at rest before the onset: < 1 cm total drift in z and in the plane over the rest phase
    assert np.ptp(z[:onset]) < 0.01
    assert np.linalg.norm(loc[:onset, :2] - loc[0, :2], axis=1).max() < 0.01
    # landmarks in metres: wrist-to-middle-tip span of a human hand is 0.15-0.22 m
    span = np.linalg.norm(mug.landmarks[:, 12] - mug.landmarks[:, 0], axis=1)
    assert 0.12 < np.median(span) < 0.22
    assert mug.wrist_pos is None and mug.finger_quat is None and mug.mano is None


def test_mug_quaternion_order_is_xyzw(mug, grab_dir):
    raw = pickle.load(open(grab_dir / "recordings" / "mug_lift.pkl", "rb"))  # trusted mirror file
    wxyz = raw["object"]["rot"]
    np.testing.assert_allclose(mug.target_object.quat[:, 3], wxyz[:, 0], atol=1e-9)
    np.testing.assert_allclose(mug.target_object.quat[:, :3], wxyz[:, 1:], atol=1e-9)
    np.testing.assert_allclose(mug.meta["grab_wrist_quat_xyzw"][:, 3], raw["hand"]["wrist_rot"][:, 0], atol=1e-9)


def test_mug_rests_on_table(mug):
    # Table height plausible for a lab table (0.7-1.2 m) and the mug's bottom within
    # 5 mm of the table top at frame 0 (mesh + recorded pose + table pose agree).
    assert 0.7 < mug.support_height < 1.2
    m = __import__("trimesh").load(mug.target_object.asset.visual_mesh)
    R = Rotation.from_quat(mug.target_object.quat[0])
    low = (R.apply(m.vertices) + mug.target_object.pos[0])[:, 2].min()
    assert abs(low - mug.support_height) < 0.005
    # object_sim's table collision slab is thicker than the visual one (10.4 vs 5.5 mm): its top is
    # higher, by less than the thickness difference
    assert 0.0 < mug.meta["support_height_collision"] - mug.support_height < 0.005


def test_all_grab_sequences_load(grab_dir):
    names = list_sequences("grab", data_dir=grab_dir.parent / "_no_staged_data_")
    assert names == sorted(p.name.removesuffix(".pkl") for p in (grab_dir / "recordings").glob("*_lift.pkl"))
    for n in names[::6]:
        rec = load_recording("grab", n, data_dir=grab_dir.parent / "_no_staged_data_")
        assert rec.num_frames > 1000
        # lift onset after a rest phase of at least 1 s and before the recording's end
        assert 120 < rec.grasp_frame < rec.num_frames - 120
        assert 0.7 < rec.support_height < 1.2


def test_object_sim_model_read_from_xml(grab_dir):
    info = grab_object_info(grab_dir / "objects" / "mug")
    assert len(info.collision_files) == 14 and all(p.name.startswith("contact") for p in info.collision_files)
    assert info.visual_files == [grab_dir / "objects" / "mug" / "mug.stl"]
    assert (info.density, info.friction, info.condim) == (1250.0, (1.0, 0.5, 0.01), 4)
    asset = load_grab_object(grab_dir / "objects" / "mug")
    # mug mass from density x collision volume: a ceramic mug is 0.25-0.6 kg
    assert 0.25 < asset_mass(asset) < 0.6
    knife = load_grab_object(grab_dir / "objects" / "knife")  # blade + handle baked into one mesh
    assert knife.visual_mesh.is_file() and "cache" in str(knife.visual_mesh)


def _copy_objects(src, dst, names):
    import shutil

    dst.mkdir(parents=True)
    shutil.copy(src / "common.xml", dst / "common.xml")
    for n in names:
        shutil.copytree(src / n, dst / n)


def test_missing_mesh_is_named(grab_dir, tmp_path):
    objs = tmp_path / "objects"
    _copy_objects(grab_dir / "objects", objs, ["mug", "table"])
    (objs / "mug" / "contact3.stl").chmod(0o644)
    (objs / "mug" / "contact3.stl").unlink()
    with pytest.raises(DataError) as e:
        load_grab(grab_dir / "recordings" / "mug_lift.pkl", objs)
    assert "assets.xml" in str(e.value) and "contact3" in str(e.value)


def _write(tmp_path, data, name="mug_lift.pkl"):
    p = tmp_path / "recordings" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "wb") as f:
        pickle.dump(data, f)
    return p


@pytest.fixture(scope="module")
def mug_raw(grab_dir):
    with open(grab_dir / "recordings" / "mug_lift.pkl", "rb") as f:
        d = pickle.load(f)
    d.pop("robot")
    return d


def test_nan_frame_is_refused(mug_raw, grab_dir, tmp_path):
    import copy

    d = copy.deepcopy(mug_raw)
    d["hand"]["joints_target"][100, 5] = np.nan
    with pytest.raises(DataError) as e:
        load_grab(_write(tmp_path, d), grab_dir / "objects")
    assert "hand.joints_target" in str(e.value) and "frame 100" in str(e.value)


@pytest.mark.parametrize("field", ["hand.wrist_rot", "object.loc", "table.rot"])
def test_missing_field_is_named(mug_raw, grab_dir, tmp_path, field):
    import copy

    d = copy.deepcopy(mug_raw)
    top, key = field.split(".")
    del d[top][key]
    with pytest.raises(DataError) as e:
        load_grab(_write(tmp_path, d), grab_dir / "objects")
    assert f"[{field}]" in str(e.value) and "mug_lift.pkl" in str(e.value)


def test_inconsistent_wrist_is_refused(mug_raw, grab_dir, tmp_path):
    import copy

    d = copy.deepcopy(mug_raw)
    d["hand"]["wrist_loc"][50:, 2] += np.float32(0.01)
    with pytest.raises(DataError, match=r"hand\.wrist_loc.*10\.00 mm.*frame 50"):
        load_grab(_write(tmp_path, d), grab_dir / "objects")


def test_non_unit_quaternion_is_refused(mug_raw, grab_dir, tmp_path):
    import copy

    d = copy.deepcopy(mug_raw)
    d["object"]["rot"][7] *= 2.0
    with pytest.raises(DataError, match=r"object\.rot.*index 7"):
        load_grab(_write(tmp_path, d), grab_dir / "objects")


def test_toothpaste_frame_is_the_mesh_frame(grab_dir):
    """object_sim rotates the toothpaste geoms (euler 1.57 0 0); the recording poses the raw
    mesh. Fingertips hold the tube during the lift: the 3 nearest fingertip landmarks must be
    markedly nearer the surface with the default (raw) asset than with the MJCF geom pose."""
    import trimesh

    rec = load_grab(grab_dir / "recordings" / "toothpaste_lift.pkl")
    obj = rec.target_object
    frames = range(rec.grasp_frame, rec.grasp_frame + 1200, 100)

    def median_tip_gap(asset):
        mesh = trimesh.load(asset.visual_mesh, force="mesh")
        out = []
        for g in frames:
            local = Rotation.from_quat(obj.quat[g]).inv().apply(rec.landmarks[g, [4, 8, 12, 16, 20]] - obj.pos[g])
            _, d, _ = trimesh.proximity.closest_point(mesh, local)
            out.append(np.sort(d)[:3].mean())
        return float(np.median(out))

    raw = median_tip_gap(load_grab_object(grab_dir / "objects" / "toothpaste"))
    posed = median_tip_gap(load_grab_object(grab_dir / "objects" / "toothpaste", apply_geom_pose=True))
    assert raw < 0.008 and posed > 2 * raw


def test_unknown_dataset_and_sequence(grab_dir):
    with pytest.raises(DataError, match="no adapter"):
        load_recording("dexycb", "x")
    with pytest.raises(DataError, match="no GRAB sequence 'nope'"):
        load_recording("grab", "nope", data_dir=grab_dir.parent / "_none_")
