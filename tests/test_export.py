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
from replay.results.convert import ResultsFormatError
from replay.results.files import read_rollout
from replay.results.records import Phase
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
    rec = read_rollout(study.parent / "study_rollouts" / f"{seq}.json")
    doc = (rec.ablation if ablation else rec).flat()  # every field by name
    with np.load(study.parent / doc["poses"]) as z:
        return doc, {k: z[k] for k in z.files}


def _check_reproduced(figures: dict, traj: dict, doc: dict, poses: dict, export: dict) -> None:
    """The standalone replay equals the study: every saved frame of every body bit for bit at the
    study's float32, the final object pose to 1e-9 m of the re-run's float64, and the outcome
    figures; rise re-derived from the saved object heights. Bit equality is determinism on one
    machine: the script steps MuJoCo's own recorded inputs through the same libmujoco (under another
    MuJoCo version it cannot hold: test_export_under_another_mujoco)."""
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
    if doc["separation_mm"] is None:  # blank where the object never left the table (never rose, not lifted)
        assert not doc["lifted"] and z[ls:judge + 1].max() - z[ls] < 0.010  # m: under diag_never_rose_mm
    else:
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
    return out, export_rollout(short_study, "cubesmall_lift", "mjcf", out=out, data_dir=mirror)


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
    export_rollout(short_study, "cubesmall_lift", "mjcf", out=out, rollout="ablation", data_dir=mirror)
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
        export = export_rollout(short_study, "cubesmall_lift", "mjcf", out=out, rollout=rollout, data_dir=mirror)
        rec = read_rollout(rdir / "cubesmall_lift.refine.json")
        doc = (rec.ablation if rollout == "refine-ablation" else rec).flat()
        assert export["variant"] == doc["variant"] and export["variant"]["ablation"] == (rollout == "refine-ablation")
        figures, traj = _fresh_replay(out)
        with np.load(short_study.parent / doc["poses"]) as z:
            assert np.array_equal(traj["body_pos"].astype(np.float32), z["body_pos"])
        assert figures["rise_m"] == pytest.approx(doc["rise"], abs=1e-12)
        assert figures["max_hand_object_contacts"] == doc["max_hand_object_contacts"]


def test_usd_has_a_time_sample_per_frame(short_study, mirror):
    _need("pxr")
    from pxr import Usd

    r = export_rollout(short_study, "cubesmall_lift", "usd", out=short_study.parent / "usd", data_dir=mirror)
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

    r = export_rollout(short_study, "cubesmall_lift", "rrd", out=short_study.parent / "rrd", data_dir=mirror)
    reader = RrdReader(r["rrd"])
    assert len(reader.recordings()) == 1
    paths = {str(c.entity_path) for c in reader.stream()}
    assert {"/world/object", "/world/contacts", "/plots/rise_mm", "/plots/wrist_error_mm", "/phase"} <= paths


def test_bad_input(short_study, tmp_path):
    with pytest.raises(UsageError, match="did you mean cubesmall_lift"):
        export_rollout(short_study, "cubesmal_lift", "mjcf", out=tmp_path)
    with pytest.raises(UsageError, match="--format"):
        export_rollout(short_study, "cubesmall_lift", "obj", out=tmp_path)
    old = json.loads(short_study.read_text())
    old.pop("format_version")
    (tmp_path / "study.json").write_text(json.dumps(old))
    with pytest.raises(ResultsFormatError, match="format_version.*older grasp-replay"):
        export_rollout(tmp_path / "study.json", "cubesmall_lift", "mjcf", out=tmp_path / "x")


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


def _script_module(export_dir: Path, made_with: str | None = None):
    """The export's replay_export.py imported from its folder; ``made_with`` overrides its MADE_WITH."""
    spec = importlib.util.spec_from_file_location(f"replay_export_{export_dir.name}", export_dir / "replay_export.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if made_with is not None:
        mod.MADE_WITH = made_with
    return mod


def test_export_states_its_mujoco_and_scene_xml_reproduces(short_study, mjcf_export):
    """The script names the MuJoCo it was made with; export.json says how far scene.xml (the compiled model's
    fields applied) lands from the rollout under that version: 0 mm here (tested to 1 µm, the object's
    position per frame), so a replay from it under another version differs by that version alone."""
    import mujoco

    out, export = mjcf_export
    mod = _script_module(out)
    assert mod.MADE_WITH == mujoco.__version__ == export["mujoco"]
    xml = export["scene_xml_replay"]
    assert xml["max_object_pos_mm"] <= 1e-3 and abs(xml["rise_mm"]) <= 1e-3 and xml["fields_copied"] > 50
    assert not [f for f in xml["fields_left"] if not f.startswith("model.eq_")]  # the hand has no equality


def test_another_mujoco_replays_scene_xml_and_says_so(short_study, mjcf_export, tmp_path, capsys):
    """Under another MuJoCo version (here: the script told it was made with 0.0.1) the .mjb is not tried: the
    script says so on stderr, replays scene.xml with the compiled fields and reports how far it lands from the
    rollout (0 mm on this same library); where scene.xml does not load either, one line names the version."""
    import shutil

    out, _ = mjcf_export
    doc, _ = _saved(short_study, "cubesmall_lift")
    mod = _script_module(out, "0.0.1")
    assert mod.main([]) == 0
    cap = capsys.readouterr()
    fig = json.loads(cap.out)
    assert fig["model"].startswith("scene.xml") and fig["made_with_mujoco"] == "0.0.1"
    assert "note: MuJoCo" in cap.err and "made with MuJoCo 0.0.1" in cap.err and "replaying scene.xml" in cap.err
    assert fig["rise_m"] == pytest.approx(doc["rise"], abs=1e-9) and fig["differs_from_rollout"]["max_object_pos_mm"] <= 1e-3
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    (broken / "scene.xml").write_text("<mujoco><worldbody><geom type='nonsense'/></worldbody></mujoco>")
    assert _script_module(broken, "0.0.1").main([]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("replay_export.py: error: MuJoCo ")
    assert err[0].endswith("this export needs mujoco==0.0.1: pip install mujoco==0.0.1")


def _clean_venv(where: Path, *packages: str) -> Path:
    """A venv at ``where`` with exactly ``packages`` (pip from the registry); its python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    py = where / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", *packages], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"pip install {' '.join(packages)}: {r.stderr[-1500:]}"
    return py


def _newest_mujoco() -> str:
    """The newest mujoco on the registry (``pip index versions mujoco``)."""
    r = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "mujoco"], capture_output=True, text=True,
                       timeout=300)
    line = next((x for x in r.stdout.splitlines() if x.startswith("mujoco (")), None)
    assert r.returncode == 0 and line, f"pip index versions mujoco: {r.stderr[-500:]}"
    return line.split("(")[1].split(")")[0]


@pytest.mark.slow  # two venvs from the registry (needs PyPI, as CI has): ~1 min
def test_export_under_another_mujoco(short_study, mjcf_export, tmp_path_factory):
    """The README's command (``python replay_export.py``, "needs only mujoco + numpy") in clean venvs with
    exactly those two packages: under the pinned MuJoCo it gives the study's rise; under the newest on the
    registry it replays scene.xml, says so, and its rise is the study's within 1 mm (measured on this
    window: 0.13 mm under 4.0.0 against 3.17.0; the success threshold is 20 mm, so the verdict holds), its
    own ``differs_from_rollout`` agreeing with that difference."""
    import mujoco

    out, _ = mjcf_export
    doc, _ = _saved(short_study, "cubesmall_lift")
    pinned, newest = mujoco.__version__, _newest_mujoco()
    base = tmp_path_factory.mktemp("venvs")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "REPLAY_MIRROR", "REPLAY_DATA")}
    runs = {}
    for version in dict.fromkeys([pinned, newest]):
        py = _clean_venv(base / version, f"mujoco=={version}", "numpy")
        p = subprocess.run([str(py), "replay_export.py"], cwd=out, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        runs[version] = (json.loads(p.stdout), p.stderr)
    fig, _ = runs[pinned]
    assert fig["model"] == "model.mjb" and fig["mujoco"] == pinned and fig["rise_m"] == pytest.approx(doc["rise"], abs=1e-12)
    if newest == pinned:
        pytest.skip(f"the registry's newest mujoco is the pinned {pinned}: nothing else to replay under")
    fig, err = runs[newest]
    assert fig["mujoco"] == newest and fig["model"].startswith("scene.xml") and f"made with MuJoCo {pinned}" in err
    assert fig["rise_m"] == pytest.approx(doc["rise"], abs=1e-3)
    assert fig["differs_from_rollout"]["rise_mm"] == pytest.approx((fig["rise_m"] - doc["rise"]) * 1000.0, abs=1e-3)


@pytest.mark.slow
def test_default_study_exports_reproduce(tmp_path_factory, mirror):
    """The default protocol (what a study runs), cubesmall and mug: each contact run replayed in
    plain MuJoCo from its export gives the study's trajectory and figures."""
    d = tmp_path_factory.mktemp("export_default")
    run_study("grab", d / "study.json", ReplayConfig(), objects=["cubesmall", "mug"], workers=0, progress=False,
              data_dir=mirror)
    for seq in ("cubesmall_lift", "mug_lift"):
        export = export_rollout(d / "study.json", seq, "mjcf", out=d / seq, data_dir=mirror)
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


def test_hug_oracle_rollouts_export_under_the_study_s_physics(tmp_path, mirror):
    """A hug-oracle study alone (the short oracle) under ``--physics authored`` (the MJCF's wrist law without
    gravity compensation, MuJoCo's options): the export finds ``<seq>.hug-oracle.json``, re-runs the oracle
    with that physics and replays in plain MuJoCo to the study's poses bit for bit; its ablation too. A
    rollout whose physics record is not the study's config's is refused."""
    from test_oracle import SHORT_ORACLE

    from replay.errors import DataError
    from replay.sim import physics

    cfg = physics.apply_physics(ReplayConfig(**SHORT_ORACLE), "authored")
    study = tmp_path / "oracle.json"
    run_study("grab", study, cfg, objects=["cubesmall"], workers=0, progress=False, data_dir=mirror,
              protocols=["hug-oracle"])
    rdir = tmp_path / "oracle_rollouts"
    doc = json.loads((rdir / "cubesmall_lift.hug-oracle.json").read_text())
    rec = read_rollout(rdir / "cubesmall_lift.hug-oracle.json")
    assert {c["name"]: c["value"] for c in doc["physics"]}["wrist_gravity_compensation"] is False
    for rollout, sub in (("contact", rec.flat()), ("hug-oracle-ablation", rec.ablation.flat())):
        export = export_rollout(study, "cubesmall_lift", "mjcf", out=tmp_path / rollout, rollout=rollout, data_dir=mirror)
        assert export["rollout"] == ("hug-oracle" if rollout == "contact" else rollout)
        figures, traj = _fresh_replay(tmp_path / rollout)
        with np.load(tmp_path / sub["poses"]) as z:
            assert np.array_equal(traj["body_pos"].astype(np.float32), z["body_pos"])
            assert np.array_equal(traj["body_quat"].astype(np.float32), z["body_quat"])
        assert figures["frames"] == sub["frames"]
        assert figures["max_hand_object_contacts"] == sub["max_hand_object_contacts"]
    with np.load(tmp_path / "contact" / "inputs.npz") as z:  # no +M g: the hand starts on its target with no
        fz = z["xfrc_applied"][:8, 1, 2]  # wrist force (root body 1, z, N): 0, then the PD answering the sag
        weight = float(rec.scene.hand_mass) * 9.81  # what the replay's gravity compensation would add from step 0
        assert abs(fz[0]) < 1e-3 * weight and np.all(np.diff(fz) > 0) and fz[-1] < 0.7 * weight
    doc["physics"][1]["value"] = True  # a record of another physics than the study's config gives
    (rdir / "cubesmall_lift.hug-oracle.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match="physics"):
        export_rollout(study, "cubesmall_lift", "mjcf", out=tmp_path / "x", rollout="hug-oracle", data_dir=mirror)
