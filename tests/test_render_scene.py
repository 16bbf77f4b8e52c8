"""Rendering recordings themselves: a real GRAB lift (landmark skeleton) and a
HUG-Bench-like whole scene (untracked objects at rest, manosim hand by FK)."""

from __future__ import annotations

import numpy as np
import pytest
from render_fixture import R_WORLD_HAND, _quat_wxyz, hand_fk
from test_render import object_mask, read_mp4, skin_mask

from replay.data.types import ObjectAsset, ObjectTrack, Recording
from replay.output.render.recording import hand_body_poses, render_recording, scene_window

pytestmark = pytest.mark.needs_data

SIZE = (160, 120)


def test_grab_mug_lift_recorded_motion(grab_dir, tmp_path):
    from replay.data.grab import load_grab

    rec = load_grab(grab_dir / "recordings" / "mug_lift.pkl")
    # lift onset re-derived from the recorded object track: first frame > 1 cm above frame 0
    z = rec.objects[0].pos[:, 2]
    g = int(np.flatnonzero(z > z[0] + 0.01)[0])
    assert rec.grasp_frame == g
    win = scene_window(rec, 0.5, 0.6)  # at 120 Hz: 60 frames before the onset, 72 after, both included
    assert (win.start, win.stop) == (g - round(0.5 * rec.fps), g + round(0.6 * rec.fps) + 1)
    out = tmp_path / "mug_lift.mp4"
    st = render_recording(rec, out, size=SIZE, window=win, hand="landmarks")
    n_out = round(1.1 * 30) + 1  # 1.1 s at 30 fps, both ends included
    assert st.frames == n_out
    meta, frames = read_mp4(out)
    assert frames.shape == (n_out, SIZE[1], SIZE[0], 3)
    obj, skin = object_mask(frames), skin_mask(frames)
    assert obj.sum(axis=(1, 2)).min() > 100 and skin.sum(axis=(1, 2)).max() > 30
    # the recorded mug rises over the window (measured: 0.804 m at its first frame, ~0.93 m at
    # its last), so it moves up the image
    assert z[win.stop - 1] - z[win.start] > 0.08
    assert np.nonzero(obj[0])[0].mean() - np.nonzero(obj[-1])[0].mean() > 3.0


def test_hand_body_poses_match_mjcf_fk(capsule_rhand):
    wrist = np.array([[0.1, 0.2, 0.9], [0.0, -0.1, 1.0]])
    names, pos, quat = hand_fk(capsule_rhand, wrist, np.zeros(2))
    q = _quat_wxyz(R_WORLD_HAND)[[1, 2, 3, 0]]
    fq = np.tile([0.0, 0.0, 0.0, 1.0], (2, 15, 1))
    names2, pos2, quat2 = hand_body_poses(capsule_rhand, wrist, np.tile(q, (2, 1)), finger_quat=fq)
    assert names2 == names and len(names) == 16
    np.testing.assert_allclose(pos2, pos, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(quat2 * quat, axis=-1)), 1.0, atol=1e-12)
    # the middle-finger tip body is ~8-12 cm from the root along the fingers (world +Y here)
    assert 0.08 < pos[0, 6, 1] - pos[0, 0, 1] < 0.2


def test_whole_scene_untracked_objects(capsule_rhand, grab_dir, tmp_path):
    """HUG-Bench-like: 10 Hz, three objects at rest, window ends 0.5 s after the first grasp."""
    fps, T, grasp = 10.0, 60, 45
    t = np.arange(T) / fps
    objs = []
    for name, xy in (("mug", (0.0, 0.0)), ("banana", (-0.2, 0.15)), ("cubesmall", (-0.15, -0.15))):
        mesh = grab_dir / "objects" / name / f"{name}.stl"
        zmin = 0.052 if name == "mug" else (0.023 if name == "banana" else 0.02)
        asset = ObjectAsset(name=name, visual_mesh=mesh, collision_meshes=[])
        objs.append(ObjectTrack(asset, np.tile([xy[0], xy[1], 0.8 + zmin], (T, 1)),
                                np.tile([0.0, 0.0, 0.0, 1.0], (T, 1)), tracked=False))
    s = np.clip(t / t[grasp], 0, 1)[:, None]
    wrist = np.array([0.35, -0.05, 0.9]) + s * np.array([-0.27, 0.0, -0.05])
    wq = np.tile(_quat_wxyz(R_WORLD_HAND)[[1, 2, 3, 0]], (T, 1))
    valid = np.ones(T, bool)
    valid[10:13] = False  # hand dropouts are held, not drawn at NaN
    wrist[10:13] = np.nan
    rec = Recording(
        name="test/fake_scene", dataset="hug-bench", source=tmp_path / "aria_data.pkl", fps=fps, time=t,
        hand_side="right", valid=valid, wrist_pos=wrist, wrist_quat=wq,
        finger_quat=np.tile([0.0, 0.0, 0.0, 1.0], (T, 15, 1)), landmarks=None, objects=objs, target=0,
        support_height=0.8, grasp_frame=grasp,
    ).validate()
    win = scene_window(rec)
    # untracked default window: t in [grasp - 4 s, grasp + 0.5 s], both ends included
    assert (win.start, win.stop) == (grasp - round(4.0 * fps), grasp + round(0.5 * fps) + 1)
    out = tmp_path / "scene.mp4"
    st = render_recording(rec, out, size=(320, 240), hand="mano", hand_mjcf=capsule_rhand)
    assert st.frames == round(4.5 * 30) + 1  # 4.5 s at 30 fps from 10 Hz frames (each repeated 3x)
    _, frames = read_mp4(out)
    f = frames.astype(np.int16)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    green = (g > r + 20) & (g > b + 30)  # banana, OBJECT_RGBA[1]
    purple = (r > g + 30) & (b > g + 30)  # cube, OBJECT_RGBA[2]
    for mask in (object_mask(frames), green, purple, skin_mask(frames)):
        assert mask.sum(axis=(1, 2)).min() > 40


def test_taco_recorded_mano_vertices(taco_dir, tmp_path):
    """TACO has MANO vertices but no landmarks: with hand='landmarks' (recorded points
    only) they are drawn as points; the 30 Hz frames map 1:1 to the video."""
    from replay.data.taco import load_taco

    rec = load_taco(taco_dir / "20231104_010.pkl")
    win = scene_window(rec, 0.3, 0.3)
    out = tmp_path / "taco.mp4"
    st = render_recording(rec, out, size=(320, 240), window=win, hand="landmarks")
    assert st.frames == win.stop - win.start == round(0.6 * 30) + 1  # 0.6 s at 30 Hz, both ends included
    _, frames = read_mp4(out)
    skin = skin_mask(frames).sum(axis=(1, 2))
    assert skin.min() > 60  # measured 150-376 px (the hand turns partly behind the box)
    assert object_mask(frames).sum(axis=(1, 2)).min() > 200


def _script(name):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"script_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cli_hug_whole_scene(tmp_path, capsule_rhand):
    """scripts/render_scene.py on a generated HUG-Bench scene (the adapter's fixture:
    box + can at their properties.json positions, 10 Hz, first grasp at frame 16):
    the whole scene up to 0.5 s after the grasp, the hand from the recorded MANO pose."""
    from hug_fixture import make_hug_scene

    fx = make_hug_scene(tmp_path / "data", staged=True)
    out = tmp_path / "small_9.mp4"
    rc = _script("render_scene").main([
        "--dataset", "hug-bench", "--sequence", "test/small_9", "--data", str(tmp_path / "data"),
        "--recorded", "--out", str(out), "--size", "320x240",
        "--hand-mjcf", str(capsule_rhand),
    ])
    assert rc == 0 and fx.grasp_frame == 16
    meta, frames = read_mp4(out)
    assert frames.shape[0] == 64  # recorded frames 0..21 (grasp 16 + 0.5 s at 10 Hz) -> 2.1 s at 30 fps
    f = frames.astype(np.int16)
    green = (f[..., 1] > f[..., 0] + 20) & (f[..., 1] > f[..., 2] + 30)  # the can, OBJECT_RGBA[1]
    for mask in (object_mask(frames), green, skin_mask(frames)):
        assert mask.sum(axis=(1, 2)).min() > 40


def test_cli_bad_input_exit_1_bad_option_exit_2(tmp_path, capsys):
    """The exit-status convention of replay.cli: bad input files 1, unusable options 2."""
    from replay.results.records import FORMAT_VERSION

    (tmp_path / "study.json").write_text(f'{{"format_version": {FORMAT_VERSION}, "rollouts": [{{"object": "mug"}}]}}')
    rc = _script("render_montage").main(["--study", str(tmp_path / "study.json"), "--out", str(tmp_path / "m.mp4")])
    assert rc == 1 and "rollouts[0].poses" in capsys.readouterr().err
    rc = _script("render_montage").main(["--study", str(tmp_path / "none.json"), "--out", str(tmp_path / "m.mp4")])
    assert rc == 1 and "study JSON not found" in capsys.readouterr().err
    rc = _script("render_montage").main(["--study", str(tmp_path / "study.json"), "--out", str(tmp_path / "m.mp4"),
                                         "--objects", "unicorn"])
    err = capsys.readouterr().err
    assert rc == 2 and "--objects" in err and "unicorn" in err and "Traceback" not in err


def test_cli_explicit_missing_study_is_an_error(tmp_path, capsys):
    rc = _script("render_scene").main(["--dataset", "grab", "--sequence", "mug_lift",
                                       "--study", str(tmp_path / "none.json"), "--out", str(tmp_path / "m.mp4")])
    assert rc != 0 and "no such file" in capsys.readouterr().err
    assert not (tmp_path / "m.mp4").exists()
