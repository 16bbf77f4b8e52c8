"""Object-frame validation: analytic cases, real GRAB/TACO objects, the HUG fixture, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh
from hug_fixture import BOX_HALF, TIP_GAP, make_hug_scene

from replay.data.grab import load_grab
from replay.data.hug import load_hug
from replay.data.object_mjcf import grab_object_info, load_grab_object
from replay.checks import object_frame as of


def _box_distance(p, half):
    """Exact signed distance of points p (N, 3) to an axis-aligned box centred at 0."""
    q = np.abs(p) - half
    outside = np.linalg.norm(np.maximum(q, 0), axis=1)
    inside = np.minimum(q.max(axis=1), 0)
    return outside + inside


@pytest.mark.parametrize("h_vis,h_part", [(0.05, 0.04), (0.04, 0.05)])
def test_signed_distance_matches_box_formula(h_vis, h_part):
    visual = trimesh.creation.box(extents=[2 * h_vis] * 3)
    parts = [trimesh.creation.box(extents=[2 * h_part, 2 * h_part, h_part]).apply_translation([0, 0, s * h_part / 2])
             for s in (-1, 1)]  # two halves whose union is the cube of half-size h_part
    pts, _ = trimesh.sample.sample_surface(visual, 2000, seed=1)
    got = of.signed_distance_to_parts(of._hulls(parts), pts)
    want = _box_distance(pts, np.array([h_part] * 3))
    # exact outside; inside exact here too (each point's depth is set by one hull's side faces,
    # except points near the split plane, where the bound is the smaller depth of one half)
    np.testing.assert_allclose(got[want > 0], want[want > 0], atol=1e-9)
    inner = want < 0
    assert np.all(got[inner] <= 1e-12) and np.all(got[inner] >= want[inner] - 1e-9)
    np.testing.assert_allclose(np.median(np.abs(got)), 0.01, atol=1e-3)


@pytest.mark.needs_data
def test_cube_hull_is_its_mesh(grab_dir):
    # object_sim's cubes have one collision part equal to the cube: gap must vanish,
    # and mass = density x volume exactly (a cube has no overlap to double count).
    fig = of.asset_figures(load_grab_object(grab_dir / "objects" / "cubelarge"), n=1000)
    assert fig["n_parts"] == 1 and fig["hull_gap_mm"]["max"] < 0.1
    density = grab_object_info(grab_dir / "objects" / "cubelarge").density  # object_sim's MJCF density
    assert fig["effective_density_kg_m3"] == pytest.approx(density, rel=0.01)


@pytest.mark.needs_data
def test_mug_figures(grab_dir):
    rec = load_grab(grab_dir / "recordings" / "mug_lift.pkl")
    res = of.validate_recording(rec, n=2000)
    mug = res["objects"][0]
    # 14 convex parts around a ~5 mm ceramic wall: the hull surface stays within a few mm
    # of the visual surface and covers it (no visible surface left outside the parts).
    assert 0.5 < mug["hull_gap_mm"]["median"] < 4 and mug["hull_gap_mm"]["max"] < 15
    assert mug["hull_gap_signed_mm"]["frac_outside_1mm"] < 0.01
    # 0.25-0.6 kg for a mug; effective density of the parts' mass over the real (watertight)
    # volume lies between plastic and ceramic (~2400) with overlap double counting
    assert 0.25 < mug["mass_kg"] < 0.6 and not mug["density_flag"]
    assert not mug["visual_volume_is_convex_hull"]
    # it rests on the table (within 5 mm, not sunk) and is still before the lift
    assert -1.0 < mug["rest_gap_collision_mm"] < 5.0
    z = rec.target_object.pos[:, 2]  # recorded track; onset: first frame > 1 cm above frame 0
    onset = int(np.flatnonzero(z > z[0] + 0.01)[0])
    assert mug["lift_onset_frame"] == onset and mug["at_rest_before"]
    assert mug["motion_onset_frame"] < onset
    # at lift onset the hand touches the mug: some landmark within 5 mm of its surface
    assert abs(res["hand"]["min_landmark_object_mm"]) < 5.0


@pytest.mark.needs_data
def test_taco_hand_touches_object_at_lift(taco_dir):
    from replay.data.taco import load_taco

    rec = load_taco(taco_dir / "20231104_010.pkl")
    res = of.validate_recording(rec, n=1500)
    # MANO vertices are on the skin: at lift onset the closest one is at the surface (+-3 mm)
    assert res["hand"]["hand_points"] == "mano_vertices"
    assert abs(res["hand"]["min_hand_object_mm"]) < 3.0
    obj = res["objects"][0]
    assert obj["hull_gap_mm"]["median"] < 3.0 and obj["n_parts"] >= 2
    assert abs(obj["rest_gap_visual_mm"]) < 1.0  # support is defined from the resting mesh


def test_hug_fixture_figures(tmp_path):
    fx = make_hug_scene(tmp_path)
    res = of.validate_recording(load_hug(fx.aria_pkl, fx.scene_dir), n=1000)
    box = next(o for o in res["objects"] if o["name"] == "box")
    assert box["hull_gap_mm"]["max"] < 1e-6 and box["rest_gap_collision_mm"] == pytest.approx(0, abs=1e-6)
    assert not box["tracked"] and "lift_onset_frame" not in box
    # the fixture's analytic grasp frame: tips at x = 0.44, 1 cm beyond the box face, 5 mm outside its y faces
    assert res["hand"]["grasp_frame"] == fx.grasp_frame
    assert res["hand"]["fingertip_object_mm"]["index"] == pytest.approx(np.hypot(10.0, TIP_GAP * 1000), abs=1e-3)
    assert BOX_HALF[1] > 0


def test_cli_writes_json_atomically(tmp_path, monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import validate_object_frame as cli

    fx = make_hug_scene(tmp_path / "data", staged=True)
    out = tmp_path / "out" / "ofv.json"
    assert cli.main(["--dataset", "hug-bench", "--data-dir", str(tmp_path / "data"), "--samples", "500",
                     "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    sec = data["datasets"]["hug-bench"]
    assert sec["summary"]["recordings"] == 1 and sec["sequences"][0]["hand"]["grasp_frame"] == fx.grasp_frame
    assert sorted(p.name for p in out.parent.iterdir()) == ["ofv.json"]  # no temp file left behind
