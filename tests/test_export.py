"""Exports of a rollout (scripts/export_rollout.py, replay.output.export): plain MuJoCo replayed in a
fresh interpreter that never imports ``replay``, a USD stage and a Rerun recording, on real GRAB
rollouts of a study run here; bad input."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_study import SHORT

from replay.config import ReplayConfig
from replay.errors import UsageError
from replay.output.export.run import export_rollout
from replay.results.records import Phase, ResultsFormatError
from replay.study.runner import run_study

#: the stage's root prim, where Newton's ViewerUSD puts the scene (a USD prim path, not a folder)
USD_ROOT = "/root"

pytestmark = pytest.mark.needs_data

#: what the fresh interpreter runs: the export's own script, then proof that replay was never imported
FRESH = ("import sys; import replay_export as r; rc = r.main(['--trajectory', 'traj.npz']); "
         "assert not any(m == 'replay' or m.startswith('replay.') for m in sys.modules), 'replay imported'; "
         "sys.exit(rc)")


def _need(module: str):
    """Skip without an optional extra, except in CI (.ci/run installs the dev extra, which has it)."""
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{module} is not installed (the dev extra installs it)")
        pytest.skip(f"{module} not installed (pip install -e '.[dev]')")


def _fresh_replay(export_dir: Path) -> tuple[dict, dict]:
    """Run the export's replay_export.py in a new interpreter (no PYTHONPATH, cwd the export):
    its printed figures and its trajectory."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "REPLAY_MIRROR", "REPLAY_DATA")}
    p = subprocess.run([sys.executable, "-c", FRESH], cwd=export_dir, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    with np.load(export_dir / "traj.npz") as z:
        traj = {k: z[k] for k in z.files}
    return json.loads(p.stdout), traj


def _saved(study: Path, seq: str, ablation: bool = False) -> tuple[dict, dict]:
    doc = json.loads((study.parent / "study_rollouts" / f"{seq}.json").read_text())
    if ablation:
        doc = doc["ablation"]
    with np.load(study.parent / doc["poses"]) as z:
        return doc, {k: z[k] for k in z.files}


def _check_reproduced(figures: dict, traj: dict, doc: dict, poses: dict, export: dict) -> None:
    """The standalone replay equals the study: every saved frame of every body bit for bit at the
    study's float32, the final object pose to 1e-9 m of the re-run's float64, and the outcome
    figures; rise re-derived from the saved object heights."""
    assert np.array_equal(traj["body_pos"].astype(np.float32), poses["body_pos"])
    assert np.array_equal(traj["body_quat"].astype(np.float32), poses["body_quat"])
    final = np.asarray(figures["final_object_pos_m"])
    assert np.max(np.abs(final - np.asarray(export["rerun_final_object_pos_m"]))) <= 1e-9
    assert np.array_equal(np.float32(final), poses["body_pos"][-1, -1])
    assert figures["frames"] == doc["frames"] == len(poses["phase"])
    phase = poses["phase"]
    ls = int(np.flatnonzero(phase == 2)[0]) - 1
    judge = min(len(phase), int(np.flatnonzero(phase == 3)[-1]) + 1) - 1
    z = poses["body_pos"][:, -1, 2].astype(float)
    assert figures["rise_m"] == pytest.approx(z[judge] - z[ls], abs=1e-12)
    assert figures["rise_m"] == pytest.approx(doc["rise"], abs=1e-12)
    assert figures["clearance_m"] == pytest.approx(doc["clearance"], abs=1e-12)
    assert figures["separation_mm"] == pytest.approx(doc["separation_mm"], abs=1e-9)
    assert figures["contacts_at_lift"] == doc["contacts_at_lift"]
    assert figures["max_hand_object_contacts"] == doc["max_hand_object_contacts"]


@pytest.fixture(scope="module")
def short_study(tmp_path_factory, mirror) -> Path:
    """cubesmall_lift with contact and ablation, and its refine job (4 corrections per iteration), the
    short protocol (seconds)."""
    d = tmp_path_factory.mktemp("export_study")
    run_study("grab", d / "study.json", ReplayConfig(**SHORT), objects=["cubesmall"], workers=0, progress=False,
              data_dir=mirror, refine={"worlds": 4})
    return d / "study.json"


@pytest.fixture(scope="module")
def mjcf_export(short_study, mirror) -> tuple[Path, dict]:
    out = short_study.parent / "mjcf"
    return out, export_rollout(short_study, "cubesmall_lift", "mjcf", out, data_dir=mirror)


def test_mjcf_replays_in_plain_mujoco(short_study, mjcf_export):
    out, export = mjcf_export
    assert {"model.mjb", "inputs.npz", "replay_export.py", "scene.xml", "export.json"} <= {p.name for p in out.iterdir()}
    figures, traj = _fresh_replay(out)
    doc, poses = _saved(short_study, "cubesmall_lift")
    _check_reproduced(figures, traj, doc, poses, json.loads((out / "export.json").read_text()))
    with np.load(out / "inputs.npz") as z:
        # 8 physics steps per 30 fps control frame (240 Hz), every frame simulated
        assert z["ctrl"].shape[0] == z["xfrc_applied"].shape[0] == int(z["frame_steps"].sum()) == 8 * doc["frames"]
        # the wrist wrench is the only applied body force: on the root body alone, and it holds the hand up
        moved = np.flatnonzero(np.abs(z["xfrc_applied"]).max(axis=(0, 2)) > 0)
        assert len(moved) == 1 and float(np.median(z["xfrc_applied"][:, moved[0], 2])) > 0


def test_mjcf_ablation_replays(short_study, mirror):
    out = short_study.parent / "mjcf_ablation"
    export_rollout(short_study, "cubesmall_lift", "mjcf", out, rollout="ablation", data_dir=mirror)
    figures, traj = _fresh_replay(out)
    doc, poses = _saved(short_study, "cubesmall_lift", ablation=True)
    assert np.array_equal(traj["body_pos"].astype(np.float32), poses["body_pos"])
    assert figures["max_hand_object_contacts"] == 0 == doc["max_hand_object_contacts"]
    assert figures["rise_m"] == pytest.approx(doc["rise"], abs=1e-12)


def test_mjcf_refined_replays(short_study, mirror):
    """The refine job's rollout (its chosen correction as the variant) and its ablation."""
    rdir = short_study.parent / "study_rollouts"
    for rollout in ("refine", "refine-ablation"):
        out = short_study.parent / f"mjcf_{rollout}"
        export = export_rollout(short_study, "cubesmall_lift", "mjcf", out, rollout=rollout, data_dir=mirror)
        doc = json.loads((rdir / "cubesmall_lift.refine.json").read_text())
        doc = doc["ablation"] if rollout == "refine-ablation" else doc
        assert export["variant"] == doc["variant"] and export["variant"]["ablation"] == (rollout == "refine-ablation")
        figures, traj = _fresh_replay(out)
        with np.load(short_study.parent / doc["poses"]) as z:
            assert np.array_equal(traj["body_pos"].astype(np.float32), z["body_pos"])
        assert figures["rise_m"] == pytest.approx(doc["rise"], abs=1e-12)
        assert figures["max_hand_object_contacts"] == doc["max_hand_object_contacts"]


def test_usd_has_a_time_sample_per_frame(short_study, mirror):
    _need("pxr")
    from pxr import Usd

    r = export_rollout(short_study, "cubesmall_lift", "usd", short_study.parent / "usd", data_dir=mirror)
    _, poses = _saved(short_study, "cubesmall_lift")
    stage = Usd.Stage.Open(r["usd"])
    F = len(poses["phase"])
    assert r["frames"] == F and stage.GetTimeCodesPerSecond() == 30
    phase = stage.GetPrimAtPath(USD_ROOT).GetAttribute("replay:phase")
    assert len(phase.GetTimeSamples()) == F
    assert phase.Get(0) == "settle" and phase.Get(F - 1) == Phase(int(poses["phase"][-1])).name.lower()
    sampled = [len(a.GetTimeSamples()) for p in stage.Traverse() for a in p.GetAttributes() if a.GetNumTimeSamples()]
    assert sampled and max(sampled) == F  # body poses: one sample per saved frame
    kinds = [p.GetTypeName() for p in stage.Traverse() if str(p.GetPath()).startswith(f"{USD_ROOT}/geometry/")]
    # the capsule hand's 15 finger bones (+ the palm mesh), the object's convex parts, the table box
    assert kinds.count("Capsule") >= 15 and kinds.count("Cube") == 1 and kinds.count("Mesh") >= 2


def test_rrd_opens_with_rerun(short_study, mirror):
    _need("rerun")
    from rerun.chunk import RrdReader

    r = export_rollout(short_study, "cubesmall_lift", "rrd", short_study.parent / "rrd", data_dir=mirror)
    reader = RrdReader(r["rrd"])
    assert len(reader.recordings()) == 1
    paths = {str(c.entity_path) for c in reader.stream()}
    assert {"/world/object", "/world/contacts", "/plots/rise_mm", "/plots/wrist_error_mm", "/phase"} <= paths


def test_bad_input(short_study, tmp_path):
    with pytest.raises(UsageError, match="did you mean cubesmall_lift"):
        export_rollout(short_study, "cubesmal_lift", "mjcf", tmp_path)
    with pytest.raises(UsageError, match="--format"):
        export_rollout(short_study, "cubesmall_lift", "obj", tmp_path)
    old = json.loads(short_study.read_text())
    old.pop("format_version")
    (tmp_path / "study.json").write_text(json.dumps(old))
    with pytest.raises(ResultsFormatError, match="format_version.*older grasp-replay"):
        export_rollout(tmp_path / "study.json", "cubesmall_lift", "mjcf", tmp_path / "x")


def test_script_one_line_errors(short_study, capsys):
    from replay.cli import run

    spec = importlib.util.spec_from_file_location("export_script", Path(__file__).parents[1] / "scripts/export_rollout.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rc = run(lambda: mod.main(["--study", str(short_study), "--sequence", "mugg_lift", "--format", "mjcf"]))
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "no sequence 'mugg_lift'" in err[0]
    rc = run(lambda: mod.main(["--study", str(short_study.parent / "none.json"), "--sequence", "x", "--format", "usd"]))
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "none.json" in err[0]


@pytest.mark.slow
def test_default_study_exports_reproduce(tmp_path_factory, mirror):
    """The default protocol (what a study runs), cubesmall and mug: each contact run replayed in
    plain MuJoCo from its export gives the study's trajectory and figures."""
    d = tmp_path_factory.mktemp("export_default")
    run_study("grab", d / "study.json", ReplayConfig(), objects=["cubesmall", "mug"], workers=0, progress=False,
              data_dir=mirror)
    for seq in ("cubesmall_lift", "mug_lift"):
        export = export_rollout(d / "study.json", seq, "mjcf", d / seq, data_dir=mirror)
        figures, traj = _fresh_replay(d / seq)
        doc, poses = _saved(d / "study.json", seq)
        _check_reproduced(figures, traj, doc, poses, export)


def test_report_links_exports(short_study, mjcf_export, tmp_path):
    import shutil

    from replay.output.export.run import default_out
    from replay.output.report import build_report

    out = default_out(short_study, "cubesmall_lift")
    shutil.copytree(mjcf_export[0], out)  # an MJCF export where the report looks for it
    page = tmp_path / "page" / "report.html"
    build_report(short_study, page)
    rec_page = page.parent / "report_files" / "cubesmall_lift.html"  # the exports are on the recording's page
    text = rec_page.read_text()
    link = os.path.relpath(out / "replay_export.py", rec_page.parent)
    assert f"<a href='{link}'" in text and (rec_page.parent / link).resolve().is_file()
    # the formats not exported yet: the command that makes each, beside it
    assert f"--study {short_study} --sequence cubesmall_lift --format usd" in text
    assert "--format rrd" in text and "--format mjcf" not in text
    shutil.rmtree(out)
