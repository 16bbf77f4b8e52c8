"""The simulated support in renders (GRAB table-top box over a floor), the overlay's
phases, framing of a fallen object, output paths, permissions and the montage CLI's
``--objects`` lists, on real geometry (manosim hand + GRAB meshes, tests/render_fixture.py)."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import mujoco
import numpy as np
import pytest
from render_fixture import make_rollout
from test_render import object_mask, read_mp4, skin_mask

from replay.output.render.camera import clip_camera, frame_camera
from replay.output.render.clip import Clip, PHASE_NAMES, PoseTrack, Support, load_clip, load_study
from replay.output.render.model import build_render_model
from replay.output.render.overlay import clip_overlay, shake_decided_frame
from replay.output.render.style import OUTCOME_RGB
from replay.output.render.video import prepare_output, render_frames, write_mp4
from replay.errors import DataError, OutputError
from replay.results.records import FORMAT_VERSION

pytestmark = pytest.mark.needs_data

SIZE = (160, 120)
SECONDS = (0.1, 0.3, 0.3, 0.2)  # 3 + 9 + 9 + 6 = 27 frames
HEIGHT = 0.8
#: table top around the object (the fixture's object rests at the world origin, the hand
#: approaches from +X); the camera looks from -X/-Y, so the -Y edge faces it.
TABLE = [-0.2, -0.12, 0.15, 0.2]


@pytest.fixture(scope="module")
def table_study(tmp_path_factory, capsule_rhand, grab_dir):
    out = tmp_path_factory.mktemp("table")
    objs = grab_dir / "objects"
    rollouts = [
        make_rollout(out, capsule_rhand, objs / "mug" / "mug.stl", "mug", "lifted", seconds=SECONDS,
                     support_height=HEIGHT, support={"table_top_xy": TABLE}, with_ablation=False),
        make_rollout(out, capsule_rhand, objs / "duck" / "duck.stl", "duck", "not_lifted", seconds=SECONDS,
                     support_height=HEIGHT, support="plane", with_ablation=False),
    ]
    path = out / "study.json"
    path.write_text(json.dumps({"format_version": FORMAT_VERSION, "rollouts": rollouts,
                                "config": {"support_thickness": 0.04}}))
    return path


def _moved(study_dir, rollout, tmp_path, name, where):
    """The rollout with the object at ``where`` (3,) m from the last lift frame on."""
    z = dict(np.load(study_dir / rollout["poses"]))
    k = list(z["body_names"]).index("object")
    z["body_pos"] = z["body_pos"].copy()
    start = int(np.flatnonzero(z["phase"] == 3)[0])
    z["body_pos"][start:, k] = where
    z["contact_count"] = z["contact_count"].copy()
    z["contact_count"][start:] = 0
    np.savez(tmp_path / f"{name}.npz", **z)
    return dict(rollout, poses=str(tmp_path / f"{name}.npz"), outcome="not_lifted")


def test_table_top_box_and_floor_as_simulated(table_study, tmp_path):
    doc, study_dir = load_study(table_study)
    clip = load_clip(doc.rollouts[0], study_dir, source=table_study)
    # the study config's thickness, the rollout's extent
    assert clip.support == Support(HEIGHT, tuple(TABLE), 0.04)
    assert clip.support.floor_z == 0.0  # GRAB's ground under a 0.8 m table
    m = build_render_model(clip.hand_mjcf, clip.objects, clip.support, size=SIZE)
    box, floor = m.geom("support"), m.geom("floor")
    assert box.type == mujoco.mjtGeom.mjGEOM_BOX and floor.type == mujoco.mjtGeom.mjGEOM_PLANE
    # the box replay.sim.scene.build_model adds: centre of the extent, top at the support height
    np.testing.assert_allclose(box.size, [0.175, 0.16, 0.02], atol=1e-12)
    np.testing.assert_allclose(box.pos, [-0.025, 0.04, HEIGHT - 0.02], atol=1e-12)
    assert floor.pos[2] == 0.0
    # "plane" (HUG-Bench ground): one plane at the support height, no floor
    plane = load_clip(doc.rollouts[1], study_dir, source=table_study)
    m2 = build_render_model(None, plane.objects, plane.support, size=SIZE)
    assert m2.geom("support").type == mujoco.mjtGeom.mjGEOM_PLANE and m2.geom("support").pos[2] == HEIGHT
    assert mujoco.mj_name2id(m2, mujoco.mjtObj.mjOBJ_GEOM, "floor") == -1
    # malformed extents are named
    for bad in ({"table_top_xy": [0.1, 0.0, -0.1, 0.2]}, {"table_top_xy": [0, 0, 1]}, "box"):
        with pytest.raises(DataError, match=r"rollouts\[0\]\.support"):
            load_clip(dict(doc.rollouts[0], support=bad), study_dir, field_prefix="rollouts[0].")


def test_object_off_the_edge_is_seen_falling(table_study, tmp_path):
    """An object 10 cm below the table top just past the edge facing the camera: drawn
    in front of the box's side; under the old infinite plane at table height it was hidden."""
    doc, study_dir = load_study(table_study)
    r = _moved(study_dir, doc.rollouts[0], tmp_path, "edge", [0.0, TABLE[1] - 0.07, HEIGHT - 0.10])
    clip = load_clip(r, study_dir, source=table_study)
    cam = clip_camera(clip, SIZE[0] / SIZE[1])
    last = slice(clip.track.num_frames - 1, None)
    track = PoseTrack(clip.track.time[last], clip.track.body_names, clip.track.body_pos[last],
                             clip.track.body_quat[last])
    counts = {}
    for key, sup in (("box", clip.support), ("plane", Support(HEIGHT))):
        img = next(render_frames(track, clip.hand_mjcf, clip.objects, support=sup, size=SIZE, camera=cam))
        counts[key] = int(object_mask(img[None]).sum())
    # measured 98 px at 160x120 (the mug's top, at the frame's lower edge; 184 before the camera kept the
    # overlay's top fifth clear, which moved the view down)
    assert counts["box"] > 50, counts
    assert counts["plane"] < 0.1 * counts["box"], counts


def test_framing_ignores_an_object_that_fell_off(table_study, tmp_path):
    doc, study_dir = load_study(table_study)
    r = doc.rollouts[0]
    aspect = SIZE[0] / SIZE[1]
    base = clip_camera(load_clip(r, study_dir), aspect)
    fell = load_clip(_moved(study_dir, r, tmp_path, "floor", [0.0, TABLE[1] - 0.2, 0.03]), study_dir)
    cam = clip_camera(fell, aspect)
    # the approach/lift view, not one stretched down to the floor 0.8 m below
    assert cam.distance < 1.1 * base.distance and abs(cam.lookat[2] - base.lookat[2]) < 0.05
    hand = [n for n in fell.track.body_names if n.startswith("mano_body_")]
    naive = frame_camera(fell.track, hand, fell.objects, aspect=aspect)
    # measured: 0.75 m with or without the fall; 1.88 m framing the floor too
    assert naive.distance > 2.0 * base.distance  # what the fall did to the tile before


def test_overlay_says_the_result_only_once_decided(table_study):
    doc, study_dir = load_study(table_study)
    clip = load_clip(doc.rollouts[0], study_dir)
    lines = clip_overlay(clip)
    by_phase = {int(p): [t for t, _ in lines(int(np.flatnonzero(clip.phase == p)[0]))] for p in range(4)}
    # settle, approach, lift and most of the hold: the phase running, no outcome yet
    for p in range(4):
        assert not any("lifted" in t for t in by_phase[p]), by_phase[p]
        assert by_phase[p][1].startswith(PHASE_NAMES[p])
    end_hold = int(np.flatnonzero(clip.phase == 3)[-1])  # `lifted` is judged here
    assert lines(end_hold)[1] == ("result: lifted", OUTCOME_RGB["lifted"])
    # one phase label per frame: contacts and time share the last line
    assert by_phase[0][0] == "mug" and len(by_phase[3]) == 3 and by_phase[3][2].startswith("contacts 6   t =")
    assert all(sum(t.endswith("...") for t in by_phase[p]) == 1 for p in range(4))
    # a shake after the hold: "shake test..." while it runs; held: its verdict on the last frame
    n = len(clip.phase)
    phase = np.r_[clip.phase[: n - 5], np.full(5, 4)]
    held = Clip(**{**clip.__dict__, "phase": phase, "row": replace(clip.row, shake_held=True)})
    hl = clip_overlay(held)
    assert [t for t, _ in hl(n - 2)][1:3] == ["result: lifted", "shake test..."]
    assert [t for t, _ in hl(n - 1)][1:3] == ["result: lifted", "shake: held"]
    # dropped in the shake: from the frame the object is out of the hand for good (here 2 cm + from
    # frame n - 4 on), one red line, never a green "lifted" above a red "not lifted"
    pos = clip.track.body_pos.copy()
    pos[n - 4:, clip.track.index("object"), 0] += 0.05
    track = PoseTrack(clip.track.time, clip.track.body_names, pos, clip.track.body_quat)
    shaken = Clip(**{**clip.__dict__, "phase": phase, "track": track, "row": replace(clip.row, shake_held=False)})
    assert shake_decided_frame(shaken) == n - 4
    sl = clip_overlay(shaken)
    assert [t for t, _ in sl(n - 5)][1:3] == ["result: lifted", "shake test..."]
    for i in (n - 4, n - 1):
        assert [(t, c) for t, c in sl(i)][1] == ("result: shaken loose", OUTCOME_RGB["not_lifted"])
        assert not any("lifted" in t for t, _ in sl(i))
    # a sequence name without the object (TACO): both in the title
    taco = Clip(**{**clip.__dict__, "row": replace(clip.row, sequence="20231104_010")})
    assert clip_overlay(taco)(0)[0][0] == "mug - 20231104_010"


def test_output_parent_is_a_file(tmp_path):
    (tmp_path / "README.md").write_text("x")
    for out in (tmp_path / "README.md" / "clip.mp4", tmp_path / "README.md" / "sub" / "clip.mp4"):
        with pytest.raises(OutputError, match=r"README\.md is a file, not a folder"):
            prepare_output(out)


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_mp4_has_umask_permissions(tmp_path, mask):
    old = os.umask(mask)
    try:
        out = tmp_path / "c.mp4"
        frames = (np.full((16, 16, 3), v, np.uint8) for v in (0, 128))
        assert write_mp4(frames, out) == 2
    finally:
        os.umask(old)
    assert (out.stat().st_mode & 0o777) == 0o666 & ~mask


def test_montage_cli_objects_comma_or_space(table_study, tmp_path, capsys):
    import replay.commands.render_montage as mod
    assert mod.split_objects(["mug,duck"]) == ["mug", "duck"]
    assert mod.split_objects(["mug,", "duck"]) == mod.split_objects(["mug", "duck"]) == ["mug", "duck"]
    out = tmp_path / "m.mp4"
    rc = mod.main(["--study", str(table_study), "--out", str(out), "--objects", "duck,mug", "--size", "96x72"])
    assert rc == 0, capsys.readouterr().err
    meta, frames = read_mp4(out)
    assert meta["size"][0] == 192 and meta["size"][1] > 72 and frames.shape[0] == 27  # 96x72 tiles under the rule
    assert skin_mask(frames).sum() > 0
    rc = mod.main(["--study", str(table_study), "--out", str(out), "--objects", "mug,banana"])
    assert rc == 2 and "banana" in capsys.readouterr().err
