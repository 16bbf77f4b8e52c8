"""The study's throughput changes leave every result as it was (issue #28):

* :func:`replay.checks.quaternions.sign_continuous`, vectorised, equals the frame-by-frame rule
  bit for bit on the mirror's GRAB quaternion streams, clean and with frames negated or untracked;
* :func:`replay.study.worker_imports.import_physics` imports once with the collector paused and
  frozen, and a pool worker runs its ``warm`` function before its first job;
* :func:`replay.sim.world_builder.hand_builder`'s copies of a hand imported once finalize and compile
  exactly as a fresh import (capsule, mesh and left hands);
* :meth:`replay.checks.geometry.ConvexParts.part_plane_distance`, in blocks of points, equals the
  (points, faces) product at once to 1e-12 m on GRAB's largest visual hulls;
* ``benchmarks/compare_studies.py`` finds no difference between a study and its copy, ignores
  wall times and versions, and names a changed field or pose array (exit 1).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from replay.checks.quaternions import sign_continuous
from tests.throughput_helpers import frame_by_frame_signs, mark_warm, warmed_before

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def grab_streams(mirror):
    """(object quat (T, 4), recorded wrist quat (T, 4)) of two GRAB lifts, xyzw, as the adapter reads them."""
    from replay.data import read_recording

    out = []
    for seq in ("mug_lift", "banana_lift"):
        rec = read_recording("grab", seq, mirror)
        out += [rec.objects[0].quat, rec.meta["grab_wrist_quat_xyzw"]]
    return out


def test_sign_continuous_clean_grab_streams_unchanged(grab_streams):
    # the clean mirror has no sign flip (module doc of replay.checks.quaternions): the rule and the
    # vectorised form both return every stream exactly as read, 0 flips
    for q in grab_streams:
        ref, n_ref = frame_by_frame_signs(q)
        got, n = sign_continuous(q)
        assert n == n_ref == 0
        assert got.tobytes() == ref.tobytes() == np.asarray(q, float).tobytes()


def test_sign_continuous_repairs_negated_and_untracked_frames_bit_for_bit(grab_streams):
    rng = np.random.default_rng(7)
    for q in grab_streams:
        bad = np.array(q, float)
        flip = rng.random(len(bad)) < 0.3
        flip[0] = False  # the first frame's sign is kept as recorded
        bad[flip] *= -1.0
        lost = rng.random(len(bad)) < 0.05
        bad[lost, 1] = np.nan  # untracked: left as is, the next frame compared with the last finite one
        ref, n_ref = frame_by_frame_signs(bad)
        got, n = sign_continuous(bad)
        assert got.tobytes() == ref.tobytes()
        assert n == n_ref
        # the clean stream has no flip, so every negated tracked frame is undone (the count re-derived)
        assert n == int((flip & ~lost).sum())
        ok = ~lost
        assert np.array_equal(got[ok], np.asarray(q, float)[ok])


def test_sign_continuous_zero_dot_and_finger_streams():
    # a frame orthogonal to the previous one (dot 0) is kept as given and starts a new run;
    # (T, 15, 4) finger streams are independent
    rng = np.random.default_rng(3)
    q = rng.normal(size=(200, 15, 4))
    q[50::7] = [0.0, 0.0, 0.0, 1.0]
    q[51::7] = [1.0, 0.0, 0.0, 0.0]
    q[0, 2] = np.inf
    ref, n_ref = frame_by_frame_signs(q)
    got, n = sign_continuous(q)
    assert n == n_ref > 0
    assert got.tobytes() == ref.tobytes()


def test_import_physics_once_with_collector_paused():
    code = ("import gc, sys\n"
            "from replay.study.worker_imports import import_physics\n"
            "import_physics(); n = gc.get_freeze_count(); import_physics()\n"
            "print(gc.isenabled(), n, gc.get_freeze_count() == n, 'newton' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    enabled, frozen, same, newton = out.stdout.split()
    assert enabled == "True" and same == "True" and newton == "True"
    assert int(frozen) > 100_000  # Newton's, Warp's and MuJoCo's objects, kept out of later collections


def test_pool_worker_warms_before_its_first_job():
    from replay.study.pool import run_jobs

    got = {}
    run_jobs(list(range(4)), warmed_before, 2, on_result=lambda job, status, value: got.__setitem__(job, (status, value)),
             warm=mark_warm)
    assert got == {i: ("ok", (i, True)) for i in range(4)}


def _study(tmp: Path) -> Path:
    """A study folder shaped like run_study's: study.json, study.csv, one rollout JSON and poses."""
    rd = tmp / "study_rollouts"
    rd.mkdir(parents=True)
    roll = {"sequence": "mug_lift", "rise": 0.1784, "lifted": True, "wall_s_total": 3.2, "kinematics_s": 0.4,
            "hand_mjcf": str(tmp / "hand.xml"), "ablation": {"max_object_disp_mm": 0.12, "wall_s": 1.0},
            "inputs": {"/mirror/grab/recordings/mug_lift.pkl": {"sha256": "ab12", "from": "hashed"},
                       "/mirror/grab/objects/mug/mug.stl": {"sha256": "cd34", "from": "hashed"}}}
    (rd / "mug_lift.json").write_text(json.dumps(roll))
    np.savez(rd / "mug_lift.npz", object_pos=np.array([[0.0, 0.0, 0.804], [0.0, 0.0, np.nan]]))
    study = {"rollouts": [{k: roll[k] for k in ("sequence", "rise", "lifted", "wall_s_total")}],
             "counts": {"lifted": 1, "wall_s": 60.0, "mean_rollout_pair_s": 2.0}, "versions": {"newton": "1.8.0"}}
    (tmp / "study.json").write_text(json.dumps(study))
    (tmp / "study.csv").write_text("sequence,rise,wall_s_total\nmug_lift,0.1784,3.2\n")
    return tmp / "study.json"


def _compare(a: Path, b: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "compare_studies.py"), str(a), str(b)],
                          capture_output=True, text=True, timeout=60)


def test_compare_studies_ignores_timing_and_names_differences(tmp_path):
    a = _study(tmp_path / "a")
    b_dir = tmp_path / "b"
    shutil.copytree(a.parent, b_dir)
    b = b_dir / "study.json"
    # wall times, versions and the study folder in paths differ between two runs: not a difference
    doc = json.loads(b.read_text())
    doc["counts"].update(wall_s=41.0, mean_rollout_pair_s=1.3)
    doc["versions"]["newton"] = "9"
    doc["rollouts"][0]["wall_s_total"] = 1.0
    b.write_text(json.dumps(doc))
    roll = json.loads((b_dir / "study_rollouts" / "mug_lift.json").read_text())
    roll.update(wall_s_total=1.1, hand_mjcf=str(b_dir / "hand.xml"))
    roll["ablation"]["wall_s"] = 0.5
    (b_dir / "study_rollouts" / "mug_lift.json").write_text(json.dumps(roll))
    (b_dir / "study.csv").write_text("sequence,rise,wall_s_total\nmug_lift,0.1784,1.0\n")
    r = _compare(a, b)
    assert r.returncode == 0, r.stdout
    assert r.stdout.startswith("0 difference(s)")
    # the same input files read from elsewhere (a staged data/ folder, with its manifest): not a difference;
    # an input file with other contents is
    moved = {"grab/recordings/mug_lift.pkl": {"sha256": "ab12", "from": "manifest", "pinned": "7d5ef23"},
             "grab/objects/mug/mug.stl": {"sha256": "cd34", "from": "manifest", "pinned": "5257bbd"}}
    (b_dir / "study_rollouts" / "mug_lift.json").write_text(json.dumps(dict(roll, inputs=moved)))
    assert _compare(a, b).returncode == 0
    moved["grab/objects/mug/mug.stl"]["sha256"] = "ef56"
    (b_dir / "study_rollouts" / "mug_lift.json").write_text(json.dumps(dict(roll, inputs=moved)))
    r = _compare(a, b)
    assert r.returncode == 1
    assert "mug_lift.json.inputs: mug.stl (cd34) only in A" in r.stdout.splitlines()
    assert "mug_lift.json.inputs: mug.stl (ef56) only in B" in r.stdout.splitlines()
    (b_dir / "study_rollouts" / "mug_lift.json").write_text(json.dumps(roll))
    # a result field, a CSV cell and a pose value: each named, exit 1
    roll["ablation"]["max_object_disp_mm"] = 0.13
    (b_dir / "study_rollouts" / "mug_lift.json").write_text(json.dumps(roll))
    (b_dir / "study.csv").write_text("sequence,rise,wall_s_total\nmug_lift,0.1785,1.0\n")
    np.savez(b_dir / "study_rollouts" / "mug_lift.npz", object_pos=np.array([[0.0, 0.0, 0.805], [0.0, 0.0, np.nan]]))
    r = _compare(a, b)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert "mug_lift.json.ablation.max_object_disp_mm: 0.12 != 0.13" in lines
    assert "study.csv[row 0].rise: '0.1784' != '0.1785'" in lines
    assert any(x.startswith("mug_lift.npz:object_pos: 1 values differ") for x in lines)
    assert lines[-1].startswith("3 difference(s)")
    assert _compare(a, tmp_path / "missing.json").returncode == 2


def test_compare_studies_reads_an_older_format_through_the_converter(tmp_path):
    """A format-5 study (flat rollouts, main before issue #55) and the same in format 6 (each field in its part):
    no difference; a value changed inside a part is named by its path, the npz stamps 5 and 6 are both read."""
    from replay.results.records import RolloutRecord

    flat = {"format_version": 5, "sequence": "mug_lift", "outcome": "lifted", "lifted": True, "rise": 0.1784,
            "shake_held": True, "track_within": None, "refine_outcome": None, "oracle": None, "p_lift": None,
            "verdict_envelope": None, "wall_s": 2.0, "ablation": {"ablation": True, "max_object_disp_mm": 0.12}}
    dirs = {}
    for name, version, doc in (("a", 5, flat), ("b", 6, RolloutRecord.from_dict(flat).to_dict())):
        d = dirs[name] = tmp_path / name
        (d / "study_rollouts").mkdir(parents=True)
        (d / "study_rollouts" / "mug_lift.json").write_text(json.dumps(doc))
        np.savez(d / "study_rollouts" / "mug_lift.npz", format_version=np.int32(version), phase=np.zeros(3))
        (d / "study.json").write_text(json.dumps({"format_version": version, "rollouts": [{"sequence": "mug_lift"}]}))
    assert "lift" in json.loads((dirs["b"] / "study_rollouts" / "mug_lift.json").read_text())  # nested in 6
    r = _compare(dirs["a"] / "study.json", dirs["b"] / "study.json")
    assert r.returncode == 0 and r.stdout.startswith("0 difference(s)"), r.stdout
    flat["rise"] = 0.1785
    (dirs["a"] / "study_rollouts" / "mug_lift.json").write_text(json.dumps(flat))
    r = _compare(dirs["a"] / "study.json", dirs["b"] / "study.json")
    assert r.returncode == 1 and "mug_lift.json.lift.rise: 0.1785 != 0.1784" in r.stdout.splitlines()


@pytest.mark.parametrize("name", ["bowl", "mug", "cubesmall"])
def test_inside_any_equals_every_face_tested(grab_dir, name):
    # bowl: 2694 faces over many parts (the most of GRAB's objects), mug 578, cubesmall one box part
    import trimesh

    from replay.checks.geometry import ConvexParts
    from replay.checks.object_mass import SAMPLES

    parts = [trimesh.load(p) for p in sorted((grab_dir / "objects" / name).glob("contact*.stl"))]
    cp = ConvexParts.from_meshes(parts)
    lo = np.min([p.bounds[0] for p in parts], axis=0)
    hi = np.max([p.bounds[1] for p in parts], axis=0)
    pts = np.random.default_rng(0).uniform(lo, hi, size=(SAMPLES, 3))
    every = (cp.part_plane_distance(pts) <= 0).any(axis=0)
    got = cp.inside_any(pts)
    assert np.array_equal(got, every)
    if len(parts) == 1 and len(cp.equations[0]) == 12:  # one box part (12 triangles) fills its own box
        assert got.all()
    else:  # the parts fill part of their bounding box, not none of it
        assert 0.05 < got.mean() < 1.0


@pytest.mark.parametrize("name", ["banana", "toruslarge", "mug"])
def test_part_plane_distance_blocks_equal_all_points_at_once(grab_dir, name):
    # the mass check's visual-hull test (object_mass.part_overlap) on the hulls that cost it most:
    # banana's and toruslarge's visual hulls have 4,502 and 5,298 faces, the mug's 1,670; the
    # blocked form must give every point's max(n.x + d) as the (N, faces) product does (to 1e-12 m)
    import trimesh

    from replay.checks.geometry import POINT_BLOCK, ConvexParts
    from replay.checks.object_mass import OUTSIDE_SAMPLES

    visual = trimesh.load(next(p for p in sorted((grab_dir / "objects" / name).glob("*.stl"))
                               if not p.name.startswith("contact")))
    hull = ConvexParts.from_meshes([visual.convex_hull])
    eq = hull.equations[0]
    lo, hi = visual.bounds
    pts = np.random.default_rng(3).uniform(lo - 0.01, hi + 0.01, size=(OUTSIDE_SAMPLES + 77, 3))
    assert len(pts) > 10 * POINT_BLOCK and len(pts) % POINT_BLOCK  # several blocks and a short last one
    every = (pts @ eq[:, :3].T + eq[:, 3]).max(axis=1)
    got = hull.part_plane_distance(pts)
    assert got.shape == (1, len(pts))
    # a picometre: the blocked product's BLAS kernel may round differently from the whole one's by CPU
    np.testing.assert_allclose(got[0], every, rtol=0, atol=1e-12)
    assert 0.05 < (every <= 0).mean() < 0.95  # inside and outside points both tested


def _model_bytes(builder) -> dict:
    """Every array of the finalized Newton model and of the MuJoCo model SolverMuJoCo compiles from it,
    less the ``*_ptr`` arrays: the addresses of the Warp meshes each finalize makes (two fresh imports
    differ there too)."""
    import newton
    import warp as wp

    model = builder.finalize(device="cpu")
    out = {f"newton.{k}": v.numpy().tobytes() for k, v in vars(model).items()
           if isinstance(v, wp.array) and not k.endswith("_ptr")}
    mj = newton.solvers.SolverMuJoCo(model, use_mujoco_cpu=True).mj_model
    for k in dir(mj):
        v = getattr(mj, k) if not k.startswith("_") else None
        if isinstance(v, np.ndarray):
            out[f"mujoco.{k}"] = v.tobytes()
    return out


@pytest.mark.parametrize("hand", ["myhand/mano_rhand/capsule_hand.xml", "myhand/mano_rhand/mesh_hand.xml",
                                  "zerohand/mano_lhand/capsule_hand.xml"])
def test_hand_builder_copies_equal_a_fresh_import(manosim_dir, hand, caplog):
    # replay.sim.world_builder.hand_builder imports once per process and hands out deep copies:
    # each copy must finalize and compile exactly as a builder the hand was imported into afresh,
    # a copy's edits must not reach the next one, and the report must be the import's
    import dataclasses
    import logging

    from replay.config import ReplayConfig
    from replay.sim.world_builder import _imported_hand, hand_builder, import_hand, new_builder

    def said(call):  # the call's result and the warnings it logged
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="replay.sim.world_builder"):
            got = call()
        return got, [r.getMessage() for r in caplog.records]

    mjcf = manosim_dir / "assets" / hand
    cfg = ReplayConfig()
    fresh = new_builder(cfg)
    ref_report, w_fresh = said(lambda: import_hand(fresh, mjcf))
    ref = _model_bytes(fresh)
    _imported_hand.cache_clear()
    (first, report), w_first = said(lambda: hand_builder(cfg, mjcf))
    first.joint_q[:3] = [1.0, 2.0, 3.0]  # a caller's edit of its copy
    report.warnings.append("edited")
    (second, report2), w_hit = said(lambda: hand_builder(cfg, mjcf))
    assert _imported_hand.cache_info().currsize == 1  # the second call was served from the cache
    assert w_first == w_hit == w_fresh  # a cached import says its warnings again
    assert dataclasses.asdict(report2) == dataclasses.asdict(ref_report)
    got = _model_bytes(second)
    assert got.keys() == ref.keys() and len(ref) > 100
    assert [k for k in ref if got[k] != ref[k]] == []
    # another contact gap is another builder (new_builder sets it before the import)
    hand_builder(dataclasses.replace(cfg, physics_overrides={"contact_gap": 0.001}), mjcf)
    assert _imported_hand.cache_info().currsize == 2
