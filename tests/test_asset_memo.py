"""Asset figures measured once per content (replay.data.asset_memo), shared meshes, and the
checks' per-frame transforms done for all frames at once (issue 41, part 4), on the mirror."""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation


@pytest.fixture()
def fresh_cache(tmp_path, monkeypatch):
    """An empty on-disk cache and an empty per-process memo."""
    from replay.data import asset_memo

    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))
    asset_memo.clear()
    yield tmp_path / "cache" / asset_memo.SUB
    asset_memo.clear()


@pytest.fixture(scope="module")
def mug(mirror):
    """mug_lift as its adapter reads it (no checks)."""
    from replay.data import read_recording

    return read_recording("grab", "mug_lift", mirror)


def _copy_asset(rec, dest):
    """``rec`` with its target's mesh files copied into ``dest`` (the same bytes under other paths)."""
    a = rec.target_object.asset
    dest.mkdir(parents=True, exist_ok=True)
    vis = dest / a.visual_mesh.name
    shutil.copy(a.visual_mesh, vis)
    parts = []
    for p in a.collision_meshes:
        shutil.copy(p, dest / p.name)
        parts.append(dest / p.name)
    asset = dataclasses.replace(a, visual_mesh=vis, collision_meshes=parts)
    objs = [dataclasses.replace(o, asset=asset) if o is rec.target_object else o for o in rec.objects]
    return dataclasses.replace(rec, objects=objs)


def test_object_mass_is_measured_once_per_content(mug, fresh_cache, tmp_path, monkeypatch):
    """The second check reads the first's measurement (memo, then disk), equal to a fresh measurement;
    a copy of the files elsewhere shares it; changed bytes measure again."""
    from replay.checks import object_mass
    from replay.data import asset_memo

    calls = []
    measure = object_mass.measure_object_mass
    monkeypatch.setattr(object_mass, "measure_object_mass", lambda a: calls.append(a) or measure(a))
    first = object_mass.check_object_mass(mug)
    assert len(calls) == 1 and len(list(fresh_cache.rglob("*.json"))) == 1
    assert object_mass.check_object_mass(mug) == first and len(calls) == 1  # the process's memo
    asset_memo.clear()
    assert object_mass.check_object_mass(mug) == first and len(calls) == 1  # the file on disk
    assert object_mass.check_object_mass(_copy_asset(mug, tmp_path / "copy")) == first and len(calls) == 1
    # the figures are the measurement's, rounded as the check rounds them (re-derived here)
    m = measure(mug.target_object.asset)
    assert first[1]["simulated_kg"] == round(m["simulated_kg"], 5) and first[1]["overlap"] == m["overlap"]
    moved = _copy_asset(mug, tmp_path / "moved")
    part = moved.target_object.asset.collision_meshes[0]
    trimesh.load(part).apply_translation([0.01, 0, 0]).export(part)
    object_mass.check_object_mass(moved)
    assert len(calls) == 2  # other bytes: measured again


def test_thresholds_apply_to_a_kept_measurement(mug, fresh_cache, monkeypatch):
    """A kept measurement is judged afresh: a stricter flag threshold flags the mug from the memo."""
    from replay.checks import object_mass

    flags, figs = object_mass.check_object_mass(mug)
    assert "object_mass" not in flags and figs["overlap"] > 1.0  # mirror: overlap 0.989-1.023
    monkeypatch.setattr(object_mass, "OVERLAP_FLAG", figs["overlap"] - 0.01)
    flags2, _ = object_mass.check_object_mass(mug)
    assert flags2["object_mass"].startswith("mug is simulated at") and "overlap" in flags2["object_mass"]


def test_a_refused_measurement_is_never_kept(mug, fresh_cache, tmp_path):
    """A part MuJoCo cannot compile raises on every call and leaves no entry."""
    from replay.checks.object_mass import check_object_mass
    from replay.errors import DataError

    bad = _copy_asset(mug, tmp_path / "bad")
    (bad.target_object.asset.collision_meshes[0]).write_text("solid x\nendsolid x\n")
    for _ in range(2):
        with pytest.raises(DataError):
            check_object_mass(bad)
    assert not list(fresh_cache.rglob("*.json"))


def test_key_changes_with_the_code(mug, fresh_cache, monkeypatch):
    """The key holds the computing modules' source: another source, another entry."""
    from replay.data import asset_memo

    files = [mug.target_object.asset.visual_mesh]
    asset_memo.memo("t", files, {}, compute=lambda: 1, code=("replay.checks.convexity",))
    asset_memo.memo("t", files, {}, compute=lambda: 2, code=("replay.checks.object_mass",))
    got = sorted(json.loads(p.read_text()) for p in fresh_cache.rglob("*.json"))
    assert got == [1, 2]


def test_shared_meshes_are_left_as_read(mug, fresh_cache):
    """The checks read the shared mesh instances without changing them (vertices bit for bit)."""
    from replay.checks.recording_checks import check_recording
    from replay.data.mesh_io import shared_mesh

    a = mug.target_object.asset
    before = [shared_mesh(p).vertices.copy() for p in (a.visual_mesh, *a.collision_meshes)]
    check_recording(mug)
    after = [shared_mesh(p).vertices for p in (a.visual_mesh, *a.collision_meshes)]
    assert all(np.array_equal(x, y) for x, y in zip(before, after))
    assert shared_mesh(a.visual_mesh) is shared_mesh(a.visual_mesh)


def test_all_frames_at_once_equal_frame_by_frame(mug):
    """frames_to_object_frame and the vectorised penetration / hand-free checks against the per-frame
    formula (scipy's inverse rotation applied frame by frame), on the mug's recorded hand."""
    from replay.checks.geometry import collision_parts, frames_to_object_frame, to_object_frame
    from replay.checks.hand_points import hand_points
    from replay.checks.object_rest import HAND_NEAR_M, hand_free_until
    from replay.checks.penetration import hand_depths

    tr = mug.target_object
    pts, _ = hand_points(mug)
    frames = np.flatnonzero(np.asarray(mug.valid, bool))[:: 25]
    got = frames_to_object_frame(tr.pos[frames], tr.quat[frames], pts[frames])
    want = np.stack([Rotation.from_quat(tr.quat[f]).inv().apply(pts[f] - tr.pos[f]) for f in frames])
    np.testing.assert_allclose(got, want, atol=1e-12)  # m: rounding of the same matrices
    parts = collision_parts(tr.asset)
    d = hand_depths(mug, parts, frames)
    loop = np.stack([-parts.part_plane_distance(to_object_frame(tr.pos[f], tr.quat[f], pts[f])) for f in frames])
    np.testing.assert_allclose(d, loop, atol=1e-12)
    s, g = int(frames[0]), int(mug.grasp_frame)
    first = next((f for f in range(s, g + 1) if not mug.valid[f]
                  or parts.plane_distance(to_object_frame(tr.pos[f], tr.quat[f], pts[f])).min() < HAND_NEAR_M), g)
    assert hand_free_until(mug, parts, s, g=g) == first and s < first <= g
