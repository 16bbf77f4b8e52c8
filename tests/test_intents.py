"""GRAB recordings of other intents than lifting (``grab_intents`` in the mirror): staged by
the normal fetch, their intent flagged, the offhand take refused with its reason, and the
recorded protocol's object tracking (:mod:`replay.protocol.recorded_protocol`) on a short real window."""

from __future__ import annotations

import csv
import json
import pickle

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from replay.checks import load_recording
from replay.checks.intent import recording_intent
from replay.config import ReplayConfig
from replay.data import list_sequences
from replay.errors import DataError
from replay.protocol.pad_depth_table import object_pose_at
from replay.protocol.recorded_protocol import (
    lost_frame,
    manipulation_end,
    plan_recorded,
)
from replay.results.files import read_rollout
from replay.study.runner import run_study

pytestmark = pytest.mark.needs_data

INTENTS = {
    "bowl_drink_1": "drink",
    "camera_takepicture_1": "takepicture",
    "cubesmall_offhand_1": "offhand",
    "elephant_inspect_1": "inspect",
    "mouse_use_1": "use",
    "mug_drink_2": "drink",
    "mug_pass_1": "pass",
    "phone_call_1": "call",
    "stapler_staple_1": "staple",
    "waterbottle_pour_1": "pour",
}


def _raw(mirror, name):
    with open(mirror / "grab_intents" / "recordings" / f"{name}.pkl", "rb") as f:
        return pickle.load(f)


def test_intent_recordings_are_staged_with_the_lifts(grab_staged):
    seqs = list_sequences("grab", grab_staged)
    assert len(seqs) == 40 and set(INTENTS) <= set(seqs)
    man = json.loads((grab_staged / "MANIFEST.json").read_text())["files"]
    e = man["grab/recordings/mug_pass_1.pkl"]
    assert e["pinned"] is True and e["upstream_path"] == "data/grab/s1/mug_pass_1.pkl"


def test_intent_from_the_name_and_flagged(grab_staged):
    rec = load_recording("grab", "mug_pass_1", grab_staged)
    assert rec.meta["intent"] == "pass" and rec.meta["input_flags"]["intent"].startswith("pass:")
    lift = load_recording("grab", "mug_lift", grab_staged)
    assert lift.meta["intent"] == "lift" and "intent" not in lift.meta["input_flags"]
    for name, intent in INTENTS.items():
        assert recording_intent(type("R", (), {"dataset": "grab", "name": name})()) == intent


def test_a_name_not_grab_s_names_no_intent_and_is_flagged(cases_dir, mirror):
    """The case ``name_with_shell_metacharacters`` (GRAB cubesmall stored as ``cubesmall_lift;touch PWNED_SHELL;#``):
    its name is not GRAB's, so no intent is read from it (before: ``SHELL;#``, flagged as a non-lift intent and
    counted with the other intents); it is ``unknown``, flagged ``sequence_name`` in words that repeat no part of the
    name, and ``--objects cubesmall`` does not take it for the lift. Every recording of the mirror is GRAB's."""
    from replay.checks.intent import GRAB_NAME, NAME_FLAG
    from replay.study.prepare import sequence_object

    case = cases_dir / "name_with_shell_metacharacters" / "data"
    name = next((case / "grab" / "recordings").glob("*.pkl")).stem
    assert name == "cubesmall_lift;touch PWNED_SHELL;#"
    rec = load_recording("grab", name, case)
    assert rec.meta["intent"] == "unknown" and "intent" not in rec.meta["input_flags"]
    flag = rec.meta["input_flags"][NAME_FLAG]
    assert flag.startswith("unknown: the file name is not GRAB's") and not any(c in flag for c in ";#")
    assert sequence_object("grab", name) is None and sequence_object("grab", "cubesmall_lift") == "cubesmall"
    for folder in ("grab/recordings", "grab_intents/recordings"):
        for f in (mirror / folder).glob("*.pkl"):
            assert GRAB_NAME.fullmatch(f.stem), f  # the check flags none of GRAB's own
    clean = load_recording("grab", "cubesmall_lift", mirror)
    assert clean.meta["intent"] == "lift" and NAME_FLAG not in clean.meta["input_flags"]


def test_offhand_is_refused_with_its_reason(grab_staged, mirror):
    # re-derived from the raw file: the recorded (right) hand's nearest landmark to the cube's
    # visual mesh at the lift onset (first frame 1 cm above the start), and how the cube moves
    # relative to the recorded wrist (hand.wrist_loc/wrist_rot, scalar-first) in the next 0.5 s
    raw = _raw(mirror, "cubesmall_offhand_1")
    loc, rot, lm = raw["object"]["loc"], raw["object"]["rot"], raw["hand"]["joints_target"]
    onset = int(np.flatnonzero(loc[:, 2] > loc[0, 2] + 0.01)[0])
    mesh = trimesh.load(mirror / "grab/objects/cubesmall/cubesmall.stl")
    local = Rotation.from_quat(rot[onset][[1, 2, 3, 0]]).inv().apply(lm[onset] - loc[onset])
    g_onset = float(trimesh.proximity.closest_point(mesh, local)[1].min())
    assert g_onset > 0.5  # the other hand took it: the recorded hand is half a metre away
    win = slice(onset, onset + 61)  # 0.5 s at 120 Hz
    wrist = Rotation.from_quat(raw["hand"]["wrist_rot"][win][:, [1, 2, 3, 0]])
    in_wrist = wrist.inv().apply(loc[win] - raw["hand"]["wrist_loc"][win])
    drift = np.linalg.norm(in_wrist - in_wrist[0], axis=1).max()
    travel = np.linalg.norm(loc[win] - loc[onset], axis=1).max()
    assert drift > 0.35 * travel  # ... and the cube does not move with the recorded hand
    with pytest.raises(DataError, match=f"{g_onset * 1000:.0f} mm") as exc:
        load_recording("grab", "cubesmall_offhand_1", grab_staged)
    assert exc.value.field == "hand" and "does not store" in str(exc.value)
    assert f"travelling {travel * 1000:.0f} mm" in str(exc.value)
    st = run_study(
        "grab",
        grab_staged / "out" / "study.json",
        ReplayConfig(),
        sequences=["cubesmall_offhand_1"],
        workers=0,
        ablation=False,
        progress=False,
        data_dir=grab_staged,
        protocols=("lift", "recorded"),
    )
    assert set(st["failed"]) == {"cubesmall_offhand_1", "cubesmall_offhand_1 [recorded]"}
    assert all("\n" not in why and "does not store" in why for why in st["failed"].values())
    assert st["counts"]["rollouts"] == 0 and st["counts"]["not_lifted"] == 0


def test_manipulation_end_and_recorded_pose_from_the_raw_file(grab_staged, mirror):
    raw = _raw(mirror, "mug_pass_1")
    loc = raw["object"]["loc"]
    rec = load_recording("grab", "mug_pass_1", grab_staged)
    last = int(np.flatnonzero(np.linalg.norm(loc - loc[-1], axis=1) > 0.01)[-1])
    assert manipulation_end(rec) == min(len(loc) - 1, last + 60)  # + 0.5 s at 120 Hz
    t = rec.time[[0, 300, 301]]
    pos, quat = object_pose_at(rec, np.array([t[0], t[1], 0.5 * (t[1] + t[2])]))
    assert np.allclose(pos[:2], loc[[0, 300]], atol=1e-7)
    assert np.allclose(pos[2], 0.5 * (loc[300] + loc[301]), atol=1e-7)
    q = raw["object"]["rot"][300]  # scalar-first in the file
    assert abs(abs(float(np.dot(quat[1], q[[1, 2, 3, 0]]))) - 1.0) < 1e-6


def test_lost_frame():
    w = np.array([True, False, True, False, False, False, True, True])
    t = np.arange(8) * 0.25
    assert lost_frame(w) == 1  # any excursion
    assert lost_frame(w, t, 0.5) == 3  # the first one lasting 0.5 s
    assert lost_frame(w, t, 1.0) is None  # none that long, and the object ends inside
    assert lost_frame(np.array([True, True, False]), t[:3], 10.0) == 2  # outside to the end: lost
    assert lost_frame(np.array([], bool)) is None


def test_recorded_plan_follows_the_recording(grab_staged):
    cfg = ReplayConfig()
    rec = load_recording("grab", "mug_pass_1", grab_staged)
    coords = np.tile(np.r_[np.zeros(3), [0, 0, 0, 1.0], np.tile([0, 0, 0, 1.0], 15)], (rec.num_frames, 1))
    coords[:, 0] = rec.time  # x follows time: the plan must replay the recorded x at rec_time
    plan = plan_recorded(rec, coords, cfg)
    run = plan.phase != 0
    assert plan.fell_off_m is not None and np.allclose(
        np.diff(plan.rec_time[run])[:-1], cfg.frame_dt * cfg.replay_speed
    )
    assert np.allclose(plan.coords[run, 0], plan.rec_time[run])
    assert plan.rec_time[-1] == pytest.approx(rec.time[-1])
    t_g = rec.time[rec.grasp_frame]
    assert np.all(plan.phase[run][plan.rec_time[run] > t_g] == 5)
    assert np.all(plan.phase[run][plan.rec_time[run] <= t_g] == 1)


def test_recorded_protocol_short_window(grab_staged):
    """mug_pass_1, 0.5 s of recorded motion after the lift onset (1 s at half speed)."""
    cfg = ReplayConfig(approach_window_s=0.5, settle_s=0.2)
    out = grab_staged / "rec" / "study.json"
    st = run_study(
        "grab",
        out,
        cfg,
        sequences=["mug_pass_1"],
        workers=0,
        ablation=False,
        progress=False,
        data_dir=grab_staged,
        protocols=("recorded",),
        recorded_max_s=0.5,
    )
    assert not st["failed"] and st["protocols"] == ["recorded"] and st["counts"]["recorded"]["rollouts"] == 1
    rdir = out.parent / "study_rollouts"
    assert (rdir / "mug_pass_1.recorded.json").is_file() and not (rdir / "mug_pass_1.json").exists()
    doc = read_rollout(rdir / "mug_pass_1.recorded.json").flat()  # every field by name
    z = np.load(rdir / "mug_pass_1.recorded.npz")
    assert doc["protocol"] == "recorded" and doc["intent"] == "pass" and doc["lifted"] is None
    pe, re_ = z["track_pos_err_mm"], z["track_rot_err_deg"]
    judged = z["phase"] != 0
    assert np.all(np.isnan(pe[~judged])) and np.all(np.isfinite(pe[judged]))
    # the JSON figures are the npz arrays' (re-derived here from the saved poses)
    sim, ref = z["body_pos"][:, -1].astype(float), z["recorded_object_pos"].astype(float)
    assert np.allclose(np.linalg.norm(sim - ref, axis=1)[judged] * 1000, pe[judged], atol=1e-2)
    assert doc["track_pos_err_median_mm"] == pytest.approx(float(np.median(pe[judged])), rel=1e-5)
    assert doc["track_rot_err_p95_deg"] == pytest.approx(float(np.percentile(re_[judged], 95)), rel=1e-4)
    within = (pe[judged] <= 20.0) & (re_[judged] <= 30.0)
    assert doc["frames"] == doc["frames_planned"]  # short window: the world ran to the end
    assert doc["track_within"] == pytest.approx(float(within.mean()))
    # while the recorded mug rests (within 1 mm of its first pose) the simulated one rests too, within
    # a few mm (it settles; the recording holds it 1.6 mm above the table top, input_checks rest_gap_mm)
    still = judged & (np.linalg.norm(ref - ref[0], axis=1) < 0.001)
    assert still.sum() >= 10 and np.max(pe[still]) < 5.0 and np.max(re_[still]) < 3.0
    assert doc["track_recorded_s"] == pytest.approx(1.0, abs=0.05)  # 0.5 s approach + 0.5 s after onset
    # a recorded-only study: no lift rows; its own CSV holds the row, figures as in the rollout JSON
    assert st["rollouts"] == [] and (out.parent / "study.csv").read_text().count("\n") == 1
    rows = list(csv.DictReader((out.parent / "study.recorded.csv").open()))
    assert [r["sequence"] for r in rows] == ["mug_pass_1"]
    assert float(rows[0]["track_within"]) == pytest.approx(doc["track_within"])


def test_recorded_rollout_clip_has_the_recorded_ghost(grab_staged):
    """The renderer's clip of a recorded-protocol rollout carries the recorded object as a
    translucent second object posed from the npz (no rendering here: no GL needed)."""
    from replay.output.render.clip import GHOST_BODY, load_clip, load_study

    out = grab_staged / "rec" / "study.json"
    if not out.is_file():  # normally written by test_recorded_protocol_short_window
        run_study(
            "grab",
            out,
            ReplayConfig(approach_window_s=0.5, settle_s=0.2),
            sequences=["mug_pass_1"],
            workers=0,
            ablation=False,
            progress=False,
            data_dir=grab_staged,
            protocols=("recorded",),
            recorded_max_s=0.5,
        )
    study, study_dir = load_study(out)
    clip = load_clip(study.recorded_rollouts[0], study_dir, source=out)
    assert [o.body for o in clip.objects] == ["object", GHOST_BODY]
    assert clip.objects[1].rgba[3] == pytest.approx(0.3) and clip.outcome in ("tracked", "lost")
    z = np.load(out.parent / "study_rollouts" / "mug_pass_1.recorded.npz")
    g = clip.track.index(GHOST_BODY)
    assert np.allclose(clip.track.body_pos[:, g], z["recorded_object_pos"], atol=1e-6)
    assert np.allclose(clip.track.body_pos[:, clip.track.index("object")], z["body_pos"][:, -1], atol=1e-6)


def test_recorded_subset_merges_into_a_lift_study(grab_staged):
    """``--protocol recorded --objects X`` where a lift study of the same config is: the study
    keeps every lift row, gains X's recorded row only (the new protocol runs for the subset,
    not for the whole study), and lists both protocols."""
    cfg = ReplayConfig(approach_window_s=0.5, settle_s=0.2, lift={"lift_s": 0.4, "hold_s": 0.2, "shake_amplitude": 0.0})
    out = grab_staged / "merge" / "study.json"
    seqs = ["mug_pass_1", "stapler_staple_1"]
    run_study("grab", out, cfg, sequences=seqs, workers=0, ablation=False, progress=False, data_dir=grab_staged)
    st = run_study(
        "grab",
        out,
        cfg,
        objects=["mug_pass_1"],
        workers=0,
        ablation=False,
        progress=False,
        data_dir=grab_staged,
        protocols=("recorded",),
        recorded_max_s=0.3,
    )
    assert st["protocols"] == ["lift", "recorded"] and not st["failed"]
    assert sorted(r["sequence"] for r in st["rollouts"]) == seqs
    assert [r["sequence"] for r in st["recorded_rollouts"]] == ["mug_pass_1"]
    assert not (out.parent / "study_rollouts" / "stapler_staple_1.recorded.json").exists()
