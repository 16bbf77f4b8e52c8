"""A study job's inputs carried to a node and its results carried back (replay.study.ray_transfer),
without Ray: the node is a fresh staging folder, the job a stand-in that
does with files what the real one does (reads the recording, object and hand from its folders,
writes poses, returns a rollout with paths and input digests)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from replay.data.inputs import input_hashes
from replay.data.locate import dataset_dir
from replay.datasets import dataset as dataset_info
from replay.results.files import write_rollout
from replay.results.records import FORMAT_VERSION, RolloutRecord
from replay.study.job import Job
from replay.study.ray_transfer import job_inputs, keep_outputs, run_staged, shared_inputs, stage_dir

pytestmark = pytest.mark.needs_data

OBJECTS = ("cubesmall", "mug")
HAND = "assets/zerohand/mano_rhand/capsule_hand.xml"



def _run_staged(fn, job, staging, get_shared):
    own, study_files = job_inputs(job)
    return run_staged(fn, job, staging, get_shared=get_shared, own=own, study_files=study_files)

def _data(tmp_path: Path, mirror: Path) -> Path:
    """A data folder with two GRAB lifts, their objects and the hand (copied from the mirror)."""
    data = tmp_path / "data"
    for o in OBJECTS:
        (data / "grab" / "recordings").mkdir(parents=True, exist_ok=True)
        shutil.copy(mirror / "grab" / "recordings" / f"{o}_lift.pkl", data / "grab" / "recordings")
        shutil.copytree(mirror / "grab" / "objects" / o, data / "grab" / "objects" / o)
    shutil.copytree(mirror / "manosim", data / "manosim")
    return data


def _job(data: Path, out: Path, obj: str) -> Job:
    return Job("grab", f"{obj}_lift", str(data), {}, str(data / "manosim"), str(out), str(out / "study_rollouts"),
               ablation=False)


def stand_in(job: Job) -> tuple[str, dict]:
    """The file side of replay.study.job.run_job: what it reads, writes and returns."""
    root = dataset_dir(job.dataset, job.data_dir)
    rec = dataset_info(job.dataset).path(root, job.sequence)
    obj = root / "objects" / job.sequence.removesuffix("_lift") / f"{job.sequence.removesuffix('_lift')}.stl"
    hand = Path(job.manosim_dir) / HAND
    poses = Path(job.rollouts_dir) / f"{job.stem}.npz"
    poses.parent.mkdir(parents=True, exist_ok=True)
    poses.write_bytes(rec.read_bytes()[-256:] + obj.read_bytes()[:256])
    doc = {"format_version": FORMAT_VERSION, "sequence": job.sequence, "hand_mjcf": str(hand),
           "object_visual_mesh": str(obj), "poses": os.path.relpath(poses, job.out_dir),
           "recordings_here": sorted(p.name for p in (root / "recordings").iterdir()),
           "inputs": input_hashes([rec, obj, hand], job.data_dir)}
    return "ok", write_rollout(Path(job.rollouts_dir) / f"{job.stem}.json", RolloutRecord.from_dict(doc))


def refuse(job: Job) -> tuple[str, str]:
    """A job that refuses its recording, naming the file (as a DataError's message does)."""
    root = dataset_dir(job.dataset, job.data_dir)
    return "refused", f"{dataset_info(job.dataset).path(root, job.sequence)}: wrist_pos: 3 NaN frames"


@pytest.fixture
def node(tmp_path, monkeypatch) -> Path:
    """The node's staging folder; no cache folder set (the node's own is used)."""
    monkeypatch.setenv("REPLAY_RAY_STAGE", str(tmp_path / "node"))
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "driver_cache"))
    return tmp_path / "node"


def test_a_job_runs_from_carried_inputs_and_only_the_driver_writes_its_results(tmp_path, mirror, node, monkeypatch):
    data = _data(tmp_path, mirror)
    job = _job(data, tmp_path / "out", "cubesmall")
    staging, shared = shared_inputs(job.dataset, job.data_dir, job.manosim_dir)
    assert not [k for k in shared if "/recordings/" in k]  # each recording travels with its own task
    assert "data/grab/objects/mug/mug.stl" in shared and f"data/manosim/{HAND}" in shared
    assert shared_inputs(job.dataset, job.data_dir, job.manosim_dir)[0] == staging  # same files, same token
    fetched = []
    monkeypatch.delenv("REPLAY_CACHE")  # on the node: no cache folder set, its staging folder's is used
    result = _run_staged(stand_in, job, staging, lambda: fetched.append(1) or shared)
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "driver_cache"))
    assert not (tmp_path / "out").exists()  # the node wrote nothing where the driver's results go
    status, doc = keep_outputs(job, staging, result)

    direct = _job(data, tmp_path / "direct", "cubesmall")
    _, want = stand_in(direct)
    assert status == "ok" and doc["recordings_here"] == ["cubesmall_lift.pkl"]  # the node had its recording only
    # every path as the driver has it: the inputs (keys, digests, manifest state), hand, mesh, poses
    for k in ("inputs", "hand_mjcf", "object_visual_mesh", "poses"):
        assert doc[k] == want[k], k
    rdir = tmp_path / "out" / "study_rollouts"
    assert sorted(p.name for p in rdir.iterdir()) == ["cubesmall_lift.json", "cubesmall_lift.npz"]
    assert (rdir / "cubesmall_lift.npz").read_bytes() == (tmp_path / "direct" / "study_rollouts" /
                                                        "cubesmall_lift.npz").read_bytes()
    # the node keeps the shared files for the next job, not the recording nor the job's results
    base = stage_dir() / staging.token
    assert not (base / "root" / "data" / "grab" / "recordings" / "cubesmall_lift.pkl").exists()
    assert not list(base.glob("out-*")) and (base / "root" / "data" / "manosim" / HAND).is_file()
    mug = _job(data, tmp_path / "out", "mug")
    status, doc = keep_outputs(mug, staging, _run_staged(stand_in, mug, staging, lambda: fetched.append(1) or shared))
    assert status == "ok" and fetched == [1] and doc["recordings_here"] == ["mug_lift.pkl"]


def test_a_refusal_names_the_drivers_file_and_writes_nothing(tmp_path, mirror, node):
    data = _data(tmp_path, mirror)
    job = _job(data, tmp_path / "out", "mug")
    staging, shared = shared_inputs(job.dataset, job.data_dir, job.manosim_dir)
    status, why = keep_outputs(job, staging, _run_staged(refuse, job, staging, lambda: shared))
    assert (status, why) == ("refused", f"{data / 'grab' / 'recordings' / 'mug_lift.pkl'}: wrist_pos: 3 NaN frames")
    assert not (tmp_path / "out").exists()


def overlapping(job: Job) -> tuple[str, dict]:
    """A job during which a second job of the same recording runs and ends on the same node."""
    rec = dataset_info(job.dataset).path(dataset_dir(job.dataset, job.data_dir), job.sequence)
    inner = _job(Path(os.environ["TEST_DRIVER_DATA"]), Path(os.environ["TEST_DRIVER_OUT"]), "mug")
    staging, shared = shared_inputs(inner.dataset, inner.data_dir, inner.manosim_dir)
    _run_staged(stand_in, inner, staging, lambda: shared)
    assert rec.is_file(), "the second job removed the recording the first still reads"
    return stand_in(job)


def test_a_recording_stays_on_the_node_while_any_job_of_it_runs(tmp_path, mirror, node, monkeypatch):
    data = _data(tmp_path, mirror)
    monkeypatch.setenv("TEST_DRIVER_DATA", str(data))
    monkeypatch.setenv("TEST_DRIVER_OUT", str(tmp_path / "inner"))
    job = _job(data, tmp_path / "out", "mug")
    staging, shared = shared_inputs(job.dataset, job.data_dir, job.manosim_dir)
    status, _ = keep_outputs(job, staging, _run_staged(overlapping, job, staging, lambda: shared))
    assert status == "ok"
    assert not (stage_dir() / staging.token / "root" / "data" / "grab" / "recordings" / "mug_lift.pkl").exists()
