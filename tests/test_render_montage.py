"""Montage tiling on real geometry: 3 GRAB objects with the manosim hand, clips of
different lengths (the short one must hold its last frame)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from render_fixture import make_rollout
from test_render import object_mask, read_mp4, skin_mask

from replay.output.render.montage import (
    montage_layout,
    montage_record_path,
    render_montage,
)
from replay.output.render.overlay import caption_band
from replay.results.records import FORMAT_VERSION

pytestmark = pytest.mark.needs_data

TILE = (160, 120)
#: phase lengths (s) of the fixture's clips: the long ones and the short duck clip
LONG_S, SHORT_S = (0.1, 0.3, 0.3, 0.3), (0.1, 0.1, 0.2, 0.1)
#: frames each saves at 30 fps
N_LONG, N_SHORT = (sum(round(s * 30) for s in x) for x in (LONG_S, SHORT_S))


@pytest.fixture(scope="module")
def study3(tmp_path_factory, capsule_rhand, grab_dir):
    out = tmp_path_factory.mktemp("study3")
    objs = grab_dir / "objects"
    rollouts = [
        make_rollout(out, capsule_rhand, objs / "mug" / "mug.stl", "mug", "lifted", seconds=LONG_S),
        make_rollout(out, capsule_rhand, objs / "waterbottle" / "waterbottle.stl", "waterbottle", "not_lifted",
                     seconds=LONG_S),
        # the short one: N_SHORT frames against N_LONG
        make_rollout(out, capsule_rhand, objs / "duck" / "duck.stl", "duck", "unstable", seconds=SHORT_S),
    ]
    path = out / "study.json"
    path.write_text(json.dumps({"format_version": FORMAT_VERSION, "rollouts": rollouts, "config": {}}))
    return path


def test_montage_grid_and_hold_last_frame(study3, tmp_path):
    out = tmp_path / "renders" / "montage.mp4"
    st = render_montage(study3, out, cols=2, tile=TILE)
    hh = st.size[1] - 240  # the selection rule's header, drawn on every montage (issue 49)
    assert st.frames == N_LONG and st.size[0] == 320 and 20 <= hh <= 160
    meta, frames = read_mp4(out)
    assert tuple(meta["size"]) == st.size and frames.shape[0] == N_LONG
    assert frames[0, :hh].astype(float).mean() < 60  # the dark band with the rule's text, above the tiles
    tw, th = TILE
    tiles = {k: frames[:, hh + (k // 2) * th:hh + (k // 2 + 1) * th, (k % 2) * tw:(k % 2 + 1) * tw] for k in range(4)}
    band = caption_band([("t", (0, 0, 0))] * 3, tw, th).shape[0]  # 40 of the 120 px
    for k in range(3):  # each clip shows hand and object in every frame: in its picture, under the caption band
        # measured here: the hand 31-122 px of the 160 x 80 picture (50+ in the 160 x 120 tile before the band)
        assert skin_mask(tiles[k][:, band:]).sum(axis=(1, 2)).min() > 20
        assert object_mask(tiles[k][:, band:]).sum(axis=(1, 2)).min() > 20
        # ...and the caption's band holds no part of the scene: dark but for its text
        assert np.median(tiles[k][:, :band]) < 40
    # the empty 4th cell is the flat background
    assert tiles[3].astype(float).std() < 3.0
    # the short duck clip holds its last frame: frames N_SHORT - 1 .. N_LONG - 1 identical up to codec noise
    held = tiles[2][N_SHORT - 1:].astype(np.int16)
    diff = np.abs(held - held[0])
    # measured: held tile mean |diff| 0.07, 99.9th pct 6 (codec noise from moving neighbours);
    # a moving tile: 4.1 and 176
    assert diff.mean() < 0.5 and np.percentile(diff, 99.9) <= 10
    # ...while the mug tile keeps moving (the mug rises) after it
    mug = object_mask(tiles[0])
    assert np.nonzero(mug[N_SHORT - 1])[0].mean() - np.nonzero(mug[-1])[0].mean() > 3.0


def test_montage_object_filter_and_layout(study3, tmp_path):
    st = render_montage(study3, tmp_path / "m.mp4", objects=["duck"], tile=TILE)
    assert st.size[0] == TILE[0] and st.size[1] > TILE[1] and st.frames == N_SHORT  # the rule above the tile
    # a limit below the outcome classes (lifted, dropped, unstable: one each): the first classes
    # shown, the rest named, the rule drawn above the tiles (no Python warning on the console)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        st2 = render_montage(study3, tmp_path / "m2.mp4", max_clips=2, tile=TILE)
    record = json.loads(montage_record_path(st2.path).read_text())
    assert st2.left_out == 1 and st2.left_out_names == ("duck_lift",) and st2.size[0] == 2 * TILE[0]
    assert record["left_out_rollouts"] == ["duck_lift"] and record["rule"].startswith("2 of 3 recordings")
    header = st2.size[1] - TILE[1]
    assert 20 <= header <= 160 and record["size"] == list(st2.size)
    _, frames = read_mp4(st2.path)
    assert frames[0, :header].astype(float).mean() < 60  # the dark band with the rule's text, above the tiles
    assert montage_layout(6) == (3, 2, (640, 480))
    assert montage_layout(30) == (6, 5, (288, 216))
    assert montage_layout(38) == (7, 6, (240, 180))  # GRAB's 38 replayed recordings, all shown
    assert montage_layout(3, cols=2, tile=TILE) == (2, 2, TILE)
    assert montage_layout(48) == (8, 6, (320, 240))  # the default bound: a 1440p canvas, not smaller tiles


def test_montage_has_a_tile_per_rollout(study3, tmp_path):
    """By default every rollout of the study gets a tile (none cut off by a clip limit)."""
    study = json.loads(study3.read_text())
    st = render_montage(study3, tmp_path / "all.mp4", tile=TILE)
    record = json.loads(montage_record_path(st.path).read_text())
    assert st.left_out == 0 and record["left_out_rollouts"] == []
    assert record["rollouts"] == [r["sequence"] for r in study["rollouts"]]
    cols, rows = record["grid"]
    assert len(study["rollouts"]) <= cols * rows < len(study["rollouts"]) + cols


def test_montage_pairs_with_ablation(study3, tmp_path):
    """variant='both': each rollout beside its contact-ablation run, one pair per row."""
    out = tmp_path / "pairs.mp4"
    st = render_montage(study3, out, objects=["mug", "waterbottle"], variant="both", tile=TILE)
    hh = st.size[1] - 240  # the rule's header
    assert st.size[0] == 320 and hh > 0 and st.frames == N_LONG
    _, frames = read_mp4(out)
    tw, th = TILE
    mug, mug_abl = (object_mask(frames[:, hh:hh + th, c * tw:(c + 1) * tw]) for c in (0, 1))
    rise = [np.nonzero(m[0])[0].mean() - np.nonzero(m[-1])[0].mean() for m in (mug, mug_abl)]
    assert rise[0] > 3.0  # the lifted mug rises...
    assert abs(rise[1]) < 1.5  # ...its ablation run (the fixture's object stays put) does not


def test_montage_kept_when_up_to_date_and_rerendered_on_change(study3, tmp_path):
    """A resumed `make study` must not spend minutes re-rendering an unchanged montage,
    and must re-render when a rollout's poses or the settings change."""
    out = tmp_path / "m.mp4"
    first = render_montage(study3, out, cols=2, tile=TILE, objects=["mug", "duck"])
    assert not first.skipped
    record = json.loads(montage_record_path(out).read_text())
    assert record["frames"] == first.frames and record["rollouts"] == ["mug_lift", "duck_lift"] and record["size"] == list(first.size) \
        and first.size[0] == 320
    stamp = out.stat().st_mtime_ns
    again = render_montage(study3, out, cols=2, tile=TILE, objects=["mug", "duck"])
    assert again.skipped and again.frames == first.frames and out.stat().st_mtime_ns == stamp
    # the study summary rewritten on resume (only its wall time changes) keeps the montage
    study = json.loads(study3.read_text())
    study["counts"] = {"wall_s": 123.0}
    study3.write_text(json.dumps(study))
    assert render_montage(study3, out, cols=2, tile=TILE, objects=["mug", "duck"]).skipped
    # other settings, or force, render again
    assert not render_montage(study3, out, cols=2, tile=TILE, objects=["mug", "duck"], fps=15.0).skipped
    assert not render_montage(study3, out, cols=2, tile=TILE, objects=["mug", "duck"], fps=15.0,
                                     force=True).skipped
    # new poses for one rollout (a re-simulated recording) render again
    mug = next(r for r in study["rollouts"] if r["object"] == "mug")
    poses = study3.parent / mug["poses"]
    with np.load(poses) as z:
        data = {k: z[k] for k in z.files}
    data["body_pos"] = data["body_pos"] + 0.001
    np.savez(poses, **data)
    assert not render_montage(study3, out, cols=2, tile=TILE, objects=["mug", "duck"], fps=15.0).skipped


def test_caption_lines_wrap_inside_the_tile():
    """A caption line wider than the tile (the video line of a 320 px tile) wraps at a word into one more row, and
    no text reaches the tile's right padding; a line that fits stays one row."""
    from replay.output.render.overlay import _font, wrap_text

    tw, th = 320, 240
    px = round(th / 18)
    font, pad = _font(px), max(3, px // 3)
    white = (245, 245, 245)
    long = "video: the contact run, lifted, then shaken loose"
    assert font.getlength(long) > tw - 2 * pad  # measured in the caption's own font: 13 px DejaVu Sans Bold
    rows = wrap_text(long, font, tw - 2 * pad)
    assert len(rows) == 2 and " ".join(rows) == long and all(font.getlength(r) <= tw - 2 * pad for r in rows)
    short = [("mug", white), ("holds: held", white), ("run: lifted", white), ("contacts 3", white)]
    wide = [short[0], (long, white), *short[2:]]
    h_short = caption_band(short, tw, th, own_rows=2).shape[0]
    band = caption_band(wide, tw, th, own_rows=2)
    assert band.shape[0] - h_short in (px + max(1, px // 5), px + max(1, px // 5) + 1)  # one more row, even height
    assert band[:, tw - pad + 1:].max() <= 16  # nothing drawn in the right padding: the background (16, 16, 16)
