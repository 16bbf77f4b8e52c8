"""Headless clip rendering on real geometry: manosim hand + GRAB object meshes.

The rollouts are generated (tests/render_fixture.py) on the study's file contract
with a known motion: the hand is posed by MuJoCo FK of the real manosim MJCF, the
object is a real GRAB visual mesh that rises 12 cm with the hand when ``lifted``.
"""

from __future__ import annotations

import json
import re

import mujoco
import numpy as np
import pytest
from render_fixture import hand_fk, make_study

from replay.output.render.clip import PoseTrack, load_clip, load_study
from replay.output.render.model import apply_poses, build_render_model, mocap_index
from replay.output.render.montage import render_montage
from replay.output.render.video import frame_indices, render_clip
from replay.errors import DataError, OutputError
from replay.results.records import FORMAT_VERSION

pytestmark = pytest.mark.needs_data

SIZE = (320, 240)
#: short clip: settle, approach, lift, hold (s)
SECONDS = (0.1, 0.3, 0.3, 0.2)
#: frames the fixture saves at 30 fps: 3 + 9 + 9 + 6
N_SAVED = sum(round(s * 30) for s in SECONDS)


def read_mp4(path):
    import imageio_ffmpeg

    gen = imageio_ffmpeg.read_frames(str(path))
    meta = next(gen)
    w, h = meta["size"]
    frames = np.stack([np.frombuffer(f, np.uint8).reshape(h, w, 3) for f in gen])
    return meta, frames


def object_mask(frames):
    """Pixels of the (blue) object: blue exceeds red by > 60 and green by > 30 (0-255).
    The sky gradient's largest blue-red excess is 36 (rgb 0.78/0.84/0.92), the checker
    plane is grey, the hand skin-coloured; the object rgb (0.22, 0.45, 0.85) keeps
    b - r >= 80 down to half shading."""
    f = frames.astype(np.int16)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    return (b > r + 60) & (b > g + 30)


def skin_mask(frames):
    """Pixels of the hand: r > g > b with r - b > 40 (skin rgb 0.89/0.71/0.60; the
    checker plane's warm grey has r - b <= 13)."""
    f = frames.astype(np.int16)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    return (r > 120) & (r > g + 15) & (g > b + 10) & (r - b > 40)


@pytest.fixture(scope="module")
def study(tmp_path_factory, capsule_rhand, grab_dir):
    out = tmp_path_factory.mktemp("study")
    path = make_study(out, capsule_rhand, grab_dir / "objects", [("mug", "lifted"), ("banana", "not_lifted")],
                      seconds=SECONDS)
    return path


def test_lifted_clip_decodes_and_object_rises(study, tmp_path):
    doc, study_dir = load_study(study)
    out = tmp_path / "clips" / "mug.mp4"
    st = render_clip(doc.rollouts[0], study_dir, out, size=SIZE, source=study)
    assert st.frames == N_SAVED
    meta, frames = read_mp4(out)
    assert meta["codec"] == "h264" and meta["pix_fmt"].startswith("yuv420p")
    assert meta["fps"] == pytest.approx(30.0)
    assert tuple(meta["size"]) == SIZE and frames.shape == (N_SAVED, SIZE[1], SIZE[0], 3)
    # not blank: every frame has texture, a visible hand and a visible object
    assert frames.reshape(N_SAVED, -1).std(axis=1).min() > 15.0
    area = SIZE[0] * SIZE[1]
    obj, skin = object_mask(frames), skin_mask(frames)
    assert obj.sum(axis=(1, 2)).min() > 0.004 * area  # >= 300 px; measured ~1700 at 320x240
    assert skin.sum(axis=(1, 2)).min() > 0.004 * area  # measured >= ~1200
    # the object rises 12 cm: its pixel centroid moves up the image (row decreases)
    row0 = np.nonzero(obj[0])[0].mean()
    row1 = np.nonzero(obj[-1])[0].mean()
    assert row0 - row1 > 10.0, (row0, row1)
    assert not list(out.parent.glob(".*tmp*")), "temporary file left behind"


def test_not_lifted_clip_object_stays(study, tmp_path):
    doc, study_dir = load_study(study)
    out = tmp_path / "banana.mp4"
    render_clip(doc.rollouts[1], study_dir, out, size=SIZE, source=study)
    _, frames = read_mp4(out)
    obj = object_mask(frames)
    rows = [np.nonzero(m)[0].mean() for m in (obj[0], obj[-1])]
    assert abs(rows[0] - rows[1]) < 1.5  # codec noise only; the object never moved


def test_ablation_variant_and_label(study, tmp_path):
    doc, study_dir = load_study(study)
    clip = load_clip(doc.rollouts[0], study_dir, variant="ablation")
    assert clip.outcome == "not_lifted" and clip.title == "mug (contact ablation)"
    assert clip.contact_count.max() == 0
    out = tmp_path / "abl.mp4"
    render_clip(doc.rollouts[0], study_dir, out, size=SIZE, variant="ablation", label="mug / no contact")
    _, frames = read_mp4(out)
    obj = object_mask(frames)
    assert abs(np.nonzero(obj[0])[0].mean() - np.nonzero(obj[-1])[0].mean()) < 1.5


def test_render_model_matches_simulated_hand(capsule_rhand, manosim_dir):
    """Every visible hand geom lands where the simulated MJCF puts it, for the capsule
    and the mesh hand: world vertex clouds (meshes) and geom centres (capsules) agree."""
    for mjcf in (capsule_rhand, capsule_rhand.parent / "mesh_hand.xml"):
        names, pos, quat = hand_fk(mjcf, np.array([[0.1, -0.2, 0.9]]), np.array([0.4]))
        m0 = mujoco.MjModel.from_xml_path(str(mjcf))
        track = PoseTrack(np.zeros(1), names, pos, quat)
        m1 = build_render_model(mjcf, [], None, size=(64, 64))
        d1 = mujoco.MjData(m1)
        mids, cols = mocap_index(m1, track)
        apply_poses(m1, d1, track, frame=0, mids=mids, cols=cols)
        visible0 = [g for g in range(m0.ngeom) if m0.geom_group[g] < 3]
        assert m1.ngeom == len(visible0) == 16

        def world_points(m, d, g):
            if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
                k = m.geom_dataid[g]
                v = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
                return v @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]
            return d.geom_xpos[g][None]

        # original geoms in world from the same body poses (body frame -> world)
        for g0, g1 in zip(visible0, range(m1.ngeom)):
            b = m0.geom_bodyid[g0]
            i = names.index(m0.body(b).name)
            R = np.zeros(9)
            mujoco.mju_quat2Mat(R, quat[0, i][[3, 0, 1, 2]])
            R = R.reshape(3, 3)
            if m0.geom_type[g0] == mujoco.mjtGeom.mjGEOM_MESH:
                k = m0.geom_dataid[g0]
                v = m0.mesh_vert[m0.mesh_vertadr[k]:m0.mesh_vertadr[k] + m0.mesh_vertnum[k]]
                Rg = np.zeros(9)
                mujoco.mju_quat2Mat(Rg, m0.geom_quat[g0])
                local = v @ Rg.reshape(3, 3).T + m0.geom_pos[g0]
            else:
                local = m0.geom_pos[g0][None]
            p0 = local @ R.T + pos[0, i]
            p1 = world_points(m1, d1, g1)
            assert m1.geom_type[g1] == m0.geom_type[g0]
            np.testing.assert_allclose(p1.mean(axis=0), p0.mean(axis=0), atol=1e-5)
            np.testing.assert_allclose(np.sort(p1, axis=0), np.sort(p0, axis=0), atol=1e-5)
            if m0.geom_type[g0] != mujoco.mjtGeom.mjGEOM_MESH:  # a mesh's size is derived
                np.testing.assert_allclose(m1.geom_size[g1], m0.geom_size[g0], atol=1e-9)


def test_no_saved_poses_is_a_clear_error(study, tmp_path):
    doc, study_dir = load_study(study)
    bad = doc.to_dict()
    bad["rollouts"] = [{k: v for k, v in r.items() if k != "poses"} for r in doc.rollouts]
    p = study_dir / "no_poses.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(DataError, match=r"rollouts\[0\]\.poses.*no saved poses"):
        render_montage(p, tmp_path / "m.mp4")
    assert not (tmp_path / "m.mp4").exists()
    # poses named but the npz is gone
    r = dict(doc.rollouts[0], poses="poses/nowhere.npz")
    with pytest.raises(DataError, match="saved poses file not found"):
        render_clip(r, study_dir, tmp_path / "c.mp4")
    # npz missing a contract key
    np.savez(tmp_path / "partial.npz", time=np.arange(3) / 30.0, format_version=FORMAT_VERSION)
    r = dict(doc.rollouts[0], poses=str(tmp_path / "partial.npz"))
    with pytest.raises(DataError, match=r"partial\.npz \[body_names\]"):
        render_clip(r, study_dir, tmp_path / "c.mp4")
    # a study JSON without a rollouts list
    (tmp_path / "empty.json").write_text("{}")
    with pytest.raises(DataError, match=r"\[rollouts\]"):
        load_study(tmp_path / "empty.json")


def test_missing_object_mesh(study, tmp_path):
    doc, study_dir = load_study(study)
    r = dict(doc.rollouts[0], object_visual_mesh=str(tmp_path / "gone" / "mug.stl"))
    with pytest.raises(DataError, match=r"object_visual_mesh.*not found"):
        render_clip(r, study_dir, tmp_path / "c.mp4", size=SIZE)
    assert not (tmp_path / "c.mp4").exists()


def test_bad_study_settings_name_the_field(study, tmp_path):
    """The study config's values a clip is drawn with are checked: a one-line error naming the field."""
    doc, study_dir = load_study(study)
    for cfg, fld in (({"lift": {"shake_max_slip": "abc"}}, "config.lift.shake_max_slip"),
                     ({"support_thickness": -0.05}, "config.support_thickness")):
        p = study_dir / "bad_settings.json"
        p.write_text(json.dumps(dict(doc.to_dict(), config=cfg)))
        with pytest.raises(DataError, match=rf"bad_settings\.json \[{re.escape(fld)}\]: expected a positive number"):
            load_clip(doc.rollouts[0], study_dir, source=p)


def test_unwritable_output(study, tmp_path):
    doc, study_dir = load_study(study)
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.raises(OutputError, match="cannot write"):
        render_clip(doc.rollouts[0], study_dir, blocker / "clip.mp4", size=SIZE)
    with pytest.raises(OutputError, match=r"\.mp4"):
        render_clip(doc.rollouts[0], study_dir, tmp_path / "clip.avi", size=SIZE)


def test_frame_indices_resample():
    t = np.arange(10) / 30.0
    np.testing.assert_array_equal(frame_indices(t, 30.0), np.arange(10))
    t120 = np.arange(121) / 120.0  # 1 s at 120 Hz -> 31 frames at 30 fps, every 4th
    np.testing.assert_array_equal(frame_indices(t120, 30.0), np.arange(0, 121, 4))


def test_unstable_rollout_truncated_at_first_bad_frame(study, tmp_path):
    doc, study_dir = load_study(study)
    r = doc.rollouts[0]
    z = dict(np.load(study_dir / r["poses"]))
    z["body_pos"] = z["body_pos"].copy()
    z["body_pos"][20:, 3] = np.nan  # blew up at frame 20
    np.savez(tmp_path / "blown.npz", **z)
    bad = dict(r, poses=str(tmp_path / "blown.npz"), outcome="unstable")
    clip = load_clip(bad, study_dir)
    assert clip.track.num_frames == 20 and clip.outcome == "unstable"
    with pytest.raises(DataError, match="non-finite or non-unit pose at frame 20"):
        load_clip(dict(bad, outcome="lifted"), study_dir)
    # nothing finite at all: a single clip is an error, a montage shows a placeholder tile
    z["body_pos"][:, 3] = np.nan
    np.savez(tmp_path / "blown0.npz", **z)
    none = dict(bad, poses=str(tmp_path / "blown0.npz"))
    with pytest.raises(DataError, match="no frames saved"):
        render_clip(none, study_dir, tmp_path / "x.mp4", size=SIZE)
    p = study_dir / "study_unstable.json"
    p.write_text(json.dumps({"format_version": FORMAT_VERSION, "rollouts": [none, doc.rollouts[1]]}))
    st = render_montage(p, tmp_path / "m.mp4", tile=(160, 120))
    assert st.frames == N_SAVED and st.size[0] == 320 and st.size[1] > 120  # the rule's header above
    _, frames = read_mp4(tmp_path / "m.mp4")
    hh = st.size[1] - 120
    assert object_mask(frames[:, hh:, :160]).sum() == 0 and object_mask(frames[:, hh:, 160:]).sum() > 0


def test_study_rollouts_as_summaries_pointing_to_json(study, tmp_path):
    """run_study.py writes short summaries in study.json with ``json`` pointing to the
    per-rollout JSON (relative to the study folder) that holds ``poses`` etc."""
    doc, study_dir = load_study(study)
    summaries = []
    for r in doc.rollouts:
        name = f"rollout_{r['object']}.json"
        (study_dir / name).write_text(json.dumps(dict(r, format_version=FORMAT_VERSION)))
        summaries.append({"object": r["object"], "outcome": r["outcome"], "json": name})
    p = study_dir / "study_summaries.json"
    p.write_text(json.dumps({"format_version": FORMAT_VERSION, "rollouts": summaries, "dataset": "grab"}))
    st = render_montage(p, tmp_path / "m.mp4", objects=["banana"], tile=(160, 120))
    assert st.frames == N_SAVED
    missing = study_dir / "study_missing.json"
    missing.write_text(json.dumps({"format_version": FORMAT_VERSION,
                                  "rollouts": [{"object": "mug", "json": "nowhere.json"}]}))
    with pytest.raises(DataError, match=r"rollouts\[0\]\.json.*not found"):
        render_montage(missing, tmp_path / "m2.mp4")


def test_failed_render_leaves_existing_output_untouched(study, tmp_path):
    """Atomic output: a render that fails mid-way (a hand body without saved poses is
    found only when the render model is built) keeps the old file and leaves no temp."""
    doc, study_dir = load_study(study)
    r = doc.rollouts[0]
    z = dict(np.load(study_dir / r["poses"]))
    keep = [i for i, n in enumerate(z["body_names"]) if n != "mano_body_5"]
    for k in ("body_names",):
        z[k] = z[k][keep]
    for k in ("body_pos", "body_quat"):
        z[k] = z[k][:, keep]
    np.savez(tmp_path / "no_body5.npz", **z)
    out = tmp_path / "clip.mp4"
    out.write_bytes(b"old video")
    with pytest.raises(DataError, match=r"\[body_names\].*mano_body_5"):
        render_clip(dict(r, poses=str(tmp_path / "no_body5.npz")), study_dir, out, size=SIZE)
    assert out.read_bytes() == b"old video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4", "no_body5.npz"]
