"""Recordings whose clock, units, finger labels or object mass are wrong (issue 30): the four
shared cases and other members of each class, built here from the mirror data.

Every expected figure is re-derived from the raw mirror files (the case files are compared with
the clean take they were made from); the checks run on canonical recordings edited in memory,
so no test here steps physics.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import trimesh

pytestmark = pytest.mark.needs_data


def _one_line(msg: str) -> None:
    assert "\n" not in msg and "Traceback" not in msg, msg


@pytest.fixture(scope="module")
def clean(mirror):
    """cubesmall_lift as its adapter reads it (no checks)."""
    from replay.data import read_recording

    return read_recording("grab", "cubesmall_lift", mirror)


def _check(rec):
    from replay.checks.recording_checks import check_recording

    return check_recording(rec)


def _refused(rec, match: str) -> str:
    from replay.errors import DataError

    with pytest.raises(DataError, match=match) as exc:
        _check(rec)
    _one_line(str(exc.value))
    return str(exc.value)


def _every(rec, n: int):
    """Every ``n``-th frame of ``rec``, still read at its own rate (the export the adapter cannot tell)."""
    objs = [dataclasses.replace(o, pos=o.pos[::n], quat=o.quat[::n]) for o in rec.objects]
    T = len(rec.valid[::n])
    return dataclasses.replace(rec, landmarks=rec.landmarks[::n], valid=rec.valid[::n], objects=objs,
                               time=np.arange(T) / rec.fps, grasp_frame=rec.grasp_frame // n)


def _landmarks(rec, L):
    return dataclasses.replace(rec, landmarks=np.asarray(L, np.float64))


# --------------------------------------------------------------------------- 1. time base


def test_30hz_case_names_the_rate_and_fps_fixes_it(mirror, cases_dir, clean):
    from replay.checks import load_recording
    from replay.data.safe_pickle import load_pickle

    raw = load_pickle(mirror / "grab" / "recordings" / "cubesmall_lift.pkl")["hand"]["joints_target"]
    case = load_pickle(cases_dir / "recording_at_30hz" / "data" / "grab" / "recordings" / "cubesmall_lift.pkl")
    assert np.array_equal(case["hand"]["joints_target"], raw[::4])  # the case is every 4th frame of the clean take
    from replay.errors import DataError

    with pytest.raises(DataError, match=r"cubesmall_lift.pkl \[fps\]: wrong frame rate\? read at 120 Hz "
                                        r"\(documentation: GRAB .* the motion fits ~2\d\.\d Hz \(25 or 30 Hz\?\): "
                                        r"give the recording's true rate with --fps") as exc:
        load_recording("grab", "cubesmall_lift", cases_dir / "recording_at_30hz" / "data")
    _one_line(str(exc.value))
    ok = load_recording("grab", "cubesmall_lift", cases_dir / "recording_at_30hz" / "data", fps=30)
    tb = ok.meta["input_checks"]["time_base"]
    assert ok.meta["input_flags"] == {} and tb["fps_source"].startswith("user (--fps): 30 Hz")
    own = _check(clean).meta["input_checks"]["time_base"]["time_scale_factor"]
    # read at its true rate the 30 Hz take moves like the 120 Hz one (the smoothing window is 2 frames, not 6)
    assert tb["time_scale_factor"] == pytest.approx(own, rel=0.05)


def test_a_rate_in_the_users_recording_manifest(tmp_path, cases_dir):
    """recordings.json beside the 30 Hz take states its rate: it loads unflagged, the source said."""
    import json

    from replay.checks import load_recording
    from replay.errors import DataError

    data = tmp_path / "data"
    shutil.copytree(cases_dir / "recording_at_30hz" / "data", data)
    manifest = data / "grab" / "recordings" / "recordings.json"
    manifest.write_text(json.dumps({"fps": {"cubesmall_lift": 30, "*": 120}}))
    rec = load_recording("grab", "cubesmall_lift", data)
    assert rec.fps == 30.0 and rec.meta["input_flags"] == {}
    assert rec.meta["input_checks"]["time_base"]["fps_source"].startswith("user (recordings.json): 30 Hz")
    manifest.write_text(json.dumps({"fps": "thirty"}))
    with pytest.raises(DataError, match=r"recordings.json \[fps\]: expected a positive frame rate in Hz"):
        load_recording("grab", "cubesmall_lift", data)


@pytest.mark.parametrize("seq, n, rate, refused", [("mug_lift", 2, 60, True), ("watch_lift", 2, 60, False),
                                                   ("mug_lift", 5, 24, True), ("mug_lift", 12, 10, True)])
def test_other_rates_are_flagged_or_refused(mirror, seq, n, rate, refused):
    """mug_lift (factor 0.92 at 120 Hz) exported at 60, 24 and 10 Hz and read at 120 Hz: refused; the
    slowest lift, watch_lift (0.79), at 60 Hz: flagged (a fast mover and a wrong clock overlap there);
    each read at its true rate passes."""
    from replay.checks.time_base import FACTOR_FLAG, with_fps
    from replay.data import read_recording

    rec = _every(read_recording("grab", seq, mirror), n)
    if refused:
        msg = _refused(rec, rf"{seq}.pkl \[fps\]: wrong frame rate\? read at 120 Hz")
        k = float(re.search(r": ([\d.]+)x faster", msg).group(1))
        assert k > 120 / rate / 2  # under-read at low rates: the 50 ms smoothing spans several true frames
    else:
        flags = _check(rec).meta["input_flags"]
        assert "looks like ~" in flags["time_base"] and flags["time_base"].count("Hz") >= 2
    fixed = _check(with_fps(rec, rate))
    assert "time_base" not in fixed.meta["input_flags"]
    assert fixed.meta["input_checks"]["time_base"]["time_scale_factor"] < FACTOR_FLAG


def test_a_rate_stated_too_low_is_flagged_as_too_slow(clean):
    """The clean 120 Hz take said to be 30 Hz (a wrong --fps): 4x too slow, flagged (a person can move
    slowly; nobody reaches 1.6x faster than the mirror's takes, so only the fast side is refused)."""
    from replay.checks.time_base import with_fps

    flag = _check(with_fps(clean, 30.0)).meta["input_flags"]["time_base"]
    assert re.match(r"read at 30 Hz \(user.*slower than a human reach \(looks like ~\d+ Hz .*or a slow mover", flag), flag


def test_sample_and_hold_is_said_as_such(clean):
    """A 30 Hz stream written at 120 Hz by holding each sample 4 frames: said, not counted as untracked."""
    sub = clean.landmarks[::4]
    L = np.repeat(sub, 4, axis=0)[: clean.num_frames]
    rec = _check(_landmarks(clean, L))
    flags = rec.meta["input_flags"]
    assert "untracked_frames" not in flags and "time_base" not in flags
    assert flags["sample_and_hold"].startswith("each sample is repeated for 4 frames: a 30 Hz stream")
    assert not rec.valid[1:4].any() and rec.valid[::4].all()  # the held frames are interpolated over


# --------------------------------------------------------------------------- 2. units


def test_millimetre_case_names_the_unit(mirror, cases_dir):
    from replay.checks import load_recording
    from replay.data.safe_pickle import load_pickle
    from replay.errors import DataError

    raw = load_pickle(mirror / "grab" / "recordings" / "cubesmall_lift.pkl")["hand"]["joints_target"]
    case = load_pickle(cases_dir / "landmarks_in_millimetres" / "data" / "grab" / "recordings" / "cubesmall_lift.pkl")
    np.testing.assert_allclose(case["hand"]["joints_target"], raw * 1000, rtol=1e-6)
    chain = np.linalg.norm(np.diff(raw[:, [0, 9, 10, 11, 12]].astype(float), axis=1), axis=2).sum(axis=1)
    want = np.median(chain)  # m: the hand's length from the raw landmarks (0.1788)
    with pytest.raises(DataError, match=rf"\[landmarks\]: the hand is {want * 1000:.4g} m long .*the hand is in "
                                        rf"millimetres \(x 0.001 gives {want * 1000:.0f} mm\)") as exc:
        load_recording("grab", "cubesmall_lift", cases_dir / "landmarks_in_millimetres" / "data")
    _one_line(str(exc.value))


@pytest.mark.parametrize("factor, unit", [(100.0, "centimetres"), (1 / 0.0254, "inches"), (1e-3, "kilometres")])
def test_other_length_units(clean, factor, unit):
    _refused(_landmarks(clean, clean.landmarks * factor), rf"\[landmarks\]: the hand is .* the hand is in {unit}")


def test_hand_size_on_the_mirror(clean):
    """GRAB s1's hand, 178.8 mm wrist to middle tip along the chain: inside an adult's 159-205 mm."""
    from replay.checks.hand_scale import HAND_LENGTH_RANGE_M, hand_length

    length, field = hand_length(clean)
    assert field == "landmarks" and 0.159 <= length <= 0.205
    assert HAND_LENGTH_RANGE_M[0] < length / 2 and length * 2 < HAND_LENGTH_RANGE_M[1]  # a child's or a large hand pass


# --------------------------------------------------------------------------- 3. identity swaps


def _swap(L, a: str, b: str, frames: slice):
    from replay.checks.finger_swap import CHAINS

    ids = {f: list(c[1:]) + [c[-1] + 1] for f, c in CHAINS.items()}  # the finger's 4 landmarks with its tip
    L = np.array(L, np.float64)
    L[frames, ids[a] + ids[b]] = L[frames, ids[b] + ids[a]]
    return L


def test_middle_ring_case_is_flagged_with_its_frames(mirror, cases_dir):
    from replay.checks import load_recording
    from replay.data.safe_pickle import load_pickle

    raw = load_pickle(mirror / "grab" / "recordings" / "cubesmall_lift.pkl")["hand"]["joints_target"]
    case = load_pickle(cases_dir / "middle_ring_swapped" / "data" / "grab" / "recordings" / "cubesmall_lift.pkl")
    differ = np.flatnonzero(np.any(case["hand"]["joints_target"] != raw, axis=(1, 2)))
    rec = load_recording("grab", "cubesmall_lift", cases_dir / "middle_ring_swapped" / "data")
    flag = rec.meta["input_flags"]["finger_swap"]
    assert flag.startswith(f"finger landmark chains exchanged (middle-ring) in {differ.size} frame(s): "
                           f"{differ[0]}-{differ[-1]} ")
    assert f"after the lift onset (frame {rec.grasp_frame})" in flag and differ[0] > rec.grasp_frame


@pytest.mark.parametrize("a, b, frames, inside", [("index", "middle", slice(500, 530), False),
                                                  ("ring", "pinky", slice(250, 262), True),
                                                  ("thumb", "index", slice(600, 601), False),
                                                  ("index", "pinky", slice(280, 290), True)])
def test_other_swaps(clean, a, b, frames, inside):
    """Other pairs, inside the replayed approach (frames 59-299 of cubesmall_lift: refused) and after it."""
    rec = _landmarks(clean, _swap(clean.landmarks, a, b, frames))
    runs = f"{frames.start}-{frames.stop - 1}" if frames.stop - frames.start > 1 else f"{frames.start}"
    if inside:
        _refused(rec, rf"\[landmarks\]: finger landmark chains exchanged .* {runs} .*in the replayed approach")
    else:
        flag = _check(rec).meta["input_flags"]["finger_swap"]
        assert f"({a}-{b}" in flag or f"{a}-{b}" in flag or "MCPs out of order" in flag, flag
        assert f": {runs} (" in flag


def test_no_swap_on_the_clean_take(clean):
    from replay.checks.finger_swap import ORDER_MARGIN, palm_order, swapped_frames

    bad, figs = swapped_frames(clean.landmarks)
    t = palm_order(np.asarray(clean.landmarks, float))
    assert not bad.any() and figs["min_order_gap"] > 5 * ORDER_MARGIN and t[:, 0].min() > ORDER_MARGIN


# --------------------------------------------------------------------------- 4. mass as simulated


def _object_copy(tmp: Path, src_objects: Path, body_geoms: list[str], extra: dict | None = None) -> Path:
    """grab/objects with cubesmall's body.xml replaced by ``body_geoms`` (extra STL files written beside it)."""
    dst = tmp / "objects"
    shutil.copytree(src_objects / "cubesmall", dst / "cubesmall")
    shutil.copy(src_objects / "common.xml", dst / "common.xml")
    shutil.copytree(src_objects / "table", dst / "table")
    body = dst / "cubesmall" / "body.xml"
    body.write_text("<mujocoinclude>\n" + "\n".join(body_geoms) + "\n</mujocoinclude>\n")
    for name, mesh in (extra or {}).items():
        mesh.export(dst / "cubesmall" / name)
        assets = dst / "cubesmall" / "assets.xml"
        assets.write_text(assets.read_text().replace(
            "</asset>", f'    <mesh name="{Path(name).stem}" file="../object_sim/cubesmall/{name}"/>\n    </asset>'))
    return dst


def _with_objects(clean, objects_dir: Path):
    from replay.data.object_mjcf import load_grab_object

    asset = load_grab_object(objects_dir / "cubesmall")
    return dataclasses.replace(clean, objects=[dataclasses.replace(clean.objects[0], asset=asset)])


VIS = '<geom name="cubesmall_visual" mesh="cubesmall"/>'


def test_overlapping_case_gives_both_masses(mirror, cases_dir):
    from replay.checks import load_recording
    from replay.errors import DataError

    part = trimesh.load(mirror / "grab" / "objects" / "cubesmall" / "contact0.stl")
    vis = trimesh.load(mirror / "grab" / "objects" / "cubesmall" / "cubesmall.stl")
    twice = 2 * part.volume * 1250  # the part listed twice, object_sim's density
    with pytest.raises(DataError, match=rf"cubesmall/object.xml \[collision_meshes\]: cubesmall is simulated at "
                                        rf"{twice:.4g} kg .*the asset weighs {vis.volume * 1250:.4g} kg \(watertight "
                                        r"visual volume x density\): the collision parts overlap: their volumes sum "
                                        r"to 2.0\dx") as exc:
        load_recording("grab", "cubesmall_lift", cases_dir / "overlapping_collision_parts" / "data")
    _one_line(str(exc.value))


@pytest.mark.parametrize("variant, match", [
    ("three_times", r"overlap: their volumes sum to 3.0\dx.*refused"),
    ("half_overlap", r"overlap: their volumes sum to 1.3\dx.*refused"),
    ("scaled", r"% of the collision parts lie outside the visual mesh's hull.*refused"),
])
def test_other_departures_of_the_simulated_mass(tmp_path, mirror, clean, variant, match):
    part = trimesh.load(mirror / "grab" / "objects" / "cubesmall" / "contact0.stl")
    col = '<geom name="cubesmall_contact{i}" mesh="{m}" class="object_col"/>'
    extra = {}
    if variant == "three_times":
        geoms = [col.format(i=i, m="contact0") for i in range(3)]
    elif variant == "half_overlap":  # a second copy shifted by half the part's width: one quarter... half shared
        shifted = part.copy().apply_translation([float(np.ptp(part.bounds[:, 0])) / 2, 0, 0])
        extra = {"contact1.stl": shifted}
        geoms = [col.format(i=0, m="contact0"), col.format(i=1, m="contact1")]
    else:
        extra = {"contact1.stl": part.copy().apply_scale(1.2)}
        geoms = [col.format(i=0, m="contact1")]
    objects = _object_copy(tmp_path, mirror / "grab" / "objects", [VIS, *geoms], extra)
    _refused(_with_objects(clean, objects), r"\[collision_meshes\]: cubesmall is simulated at .*kg.*" + match)


def test_default_density_is_flagged(tmp_path, mirror, clean):
    """A collision geom with no density (its class neither): MuJoCo's 1000 kg/m^3, said."""
    objects = _object_copy(tmp_path, mirror / "grab" / "objects",
                           [VIS, '<geom name="cubesmall_contact0" mesh="contact0" class="object_col"/>'])
    common = (objects / "common.xml").read_text()
    m = re.search(r'<default class="object_col">.*?</default>', common, re.S)
    assert m and 'density="1250"' in m.group(0), "object_sim's common.xml states 1250 kg/m^3 in object_col"
    (objects / "common.xml").write_text(common.replace(m.group(0), m.group(0).replace(' density="1250"', "")))
    rec = _with_objects(clean, objects)
    from replay.data.objects import collision_volume

    assert rec.target_object.asset.density == 1000.0
    flags = _check(rec).meta["input_flags"]
    assert flags["object_mass"].startswith("cubesmall: no density stated; the simulator uses default: MuJoCo's 1000")
    want = collision_volume(rec.target_object.asset) * 1000.0
    assert _check(rec).meta["input_checks"]["object_mass"]["simulated_kg"] == pytest.approx(want, rel=1e-3)


def test_simulated_mass_is_read_back_from_mujoco(clean):
    """cubesmall: MuJoCo's compiled body mass = 1250 kg/m^3 x the part's volume; inertia of a 4 cm cube."""
    from replay.checks.object_mass import simulated_mass

    part = trimesh.load(clean.target_object.asset.collision_meshes[0])
    mass, inertia = simulated_mass(clean.target_object.asset)
    assert mass == pytest.approx(part.volume * 1250, rel=1e-3)
    side = np.cbrt(part.volume)
    np.testing.assert_allclose(inertia, mass * side ** 2 / 6, rtol=0.05)  # a cube's m a^2 / 6
