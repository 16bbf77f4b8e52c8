"""Issue 49: one study tells one story. The console, ``study.json``'s counts, ``study.csv`` and the
report read the same count functions, with the lifts apart from the other intents; every message
says what happened; the wrist error's median and peak; a physics departure names itself; a montage a
person can read; ``make study``'s own time in docs/study.md.

One small study is shared by the module (:func:`story`): GRAB's cubesmall and stamp lifts and the
mug's pass (an intent other than lift), under the lift and the hug-oracle protocols, on the short
window of tests/short_window.py, run through ``run_study.py``'s ``main`` (its console captured).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from short_window import SHORT

from replay.config import ReplayConfig
from replay.results.files import read_rollout, read_study

pytestmark = pytest.mark.needs_data

ROOT = Path(__file__).resolve().parents[1]
SEQS = ["cubesmall_lift", "stamp_lift", "mug_pass_1"]


def _main(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``run_study.py``'s ``main``."""
    from replay.commands.run_study import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def story(grab_staged, tmp_path_factory):
    """(study folder, its console's stdout, the argv that made it): the small study (module doc)."""
    d = tmp_path_factory.mktemp("story")
    (d / "cfg.json").write_text(json.dumps(SHORT))
    argv = [
        "--dataset",
        "grab",
        "--data",
        str(grab_staged),
        "--objects",
        ",".join(SEQS),
        "--workers",
        "0",
        "--quiet",
        "--protocol",
        "lift,hug-oracle",
        "--config",
        str(d / "cfg.json"),
        "--out",
        str(d / "study.json"),
    ]
    rc, out, err = _main(argv)
    assert rc == 0, err
    return d, out, argv


def _rows_csv(d: Path) -> list[dict]:
    return list(csv.DictReader((d / "study.csv").open()))


# 1. counts: one function per protocol, every protocol's at the top level, lifts apart, the intent in the CSV


def test_every_reader_counts_the_lifts_apart(story):
    from replay.output.report import build_report

    d, out, _ = story
    study = json.loads((d / "study.json").read_text())
    c = study["counts"]
    rows = {r["sequence"]: r for r in study["rollouts"]}
    # the intent of each row as the rollout JSON has it, and in the CSV
    assert {s: r["intent"] for s, r in rows.items()} == {
        "cubesmall_lift": "lift",
        "stamp_lift": "lift",
        "mug_pass_1": "pass",
    }
    assert {r["sequence"]: r["intent"] for r in _rows_csv(d)} == {s: r["intent"] for s, r in rows.items()}
    lifts = [r for r in rows.values() if r["intent"] == "lift"]
    n_lifted = sum(bool(r["lifted"]) for r in lifts)
    # study.json: each protocol's counts under its name, the first protocol's at the top level
    assert c["protocol"] == "lift" and c["lift"]["rollouts"] == c["rollouts"] == 3
    assert c["by_intent"]["lift"]["rollouts"] == 2 and c["by_intent"]["lift"]["lifted"] == n_lifted
    assert c["hug-oracle"]["rollouts"] == 3
    # the console leads with the lifts, the other intent on a line of its own, never summed in
    assert f"2 lifts: lifted {n_lifted} of 2" in out
    other = sum(bool(r["lifted"]) for r in rows.values() if r["intent"] != "lift")
    assert f"1 recording of other intents: lifted {other} of 1" in out
    assert not re.search(r"^3 recordings", out, re.M)
    # the report: the verdicts and the contact run counted per group, the lifts first, the other intents apart
    build_report(d / "study.json", d / "report.html")
    page = (d / "report.html").read_text()
    table = re.search(r"<table id=by-intent>(.*?)</table>", page, re.S).group(1)
    cells = [re.findall(r"<td>([^<]*)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", table)[1:]]
    assert [c[:3] for c in cells] == [["lifts", "2", str(n_lifted)], ["other intents", "1", str(other)]]
    assert c["verdicts"]["lifts"]["holds"]["n"] + c["verdicts"]["lifts"]["fails"]["n"] == 2  # one run each
    assert c["verdicts"]["other intents"]["holds"]["n"] + c["verdicts"]["other intents"]["fails"]["n"] == 1


def test_the_hug_oracle_counts_at_the_top_level_and_its_lifts_line(story):
    from replay.study.end_table import end_lines
    from replay.study.summary import study_counts

    d, out, _ = story
    study = json.loads((d / "study.json").read_text())
    oracle = [r for r in study["oracle_rollouts"]]
    lifted = sum(bool(r["lifted"]) for r in oracle if r["sequence"].endswith("_lift"))
    assert f"hug-oracle protocol, lifted (off the table), 2 lifts: lifted {lifted} of 2" in out
    # a hug-oracle study alone: its real counts at the top level (they were all zero)
    docs = [read_rollout(d / r["json"]) for r in oracle]
    top = study_counts(["hug-oracle"], {"hug-oracle": docs}, {}, wall_s=1.0)
    assert top["protocol"] == "hug-oracle" and top["rollouts"] == 3
    assert top["lifted"] == sum(bool(r["lifted"]) for r in oracle) and top == dict(
        top["hug-oracle"], protocol="hug-oracle", **{"hug-oracle": top["hug-oracle"]}
    )
    # docs/oracle.md's figure from its results file: the line for the 30 lifts alone
    doc = json.loads((ROOT / "docs" / "results" / "grab-oracle.json").read_text())
    n30 = sum(bool(r["lifted"]) for r in doc["oracle_rollouts"] if r["sequence"].endswith("_lift"))
    of = sum(r["sequence"].endswith("_lift") for r in doc["oracle_rollouts"])
    # a hug-oracle study alone: its own contact run leads (no shake: lifted, not held through it)
    line = f"contact run, {of} lifts: lifted {n30} of {of}, not lifted "
    assert of == 30 and any(ln.startswith(line) for ln in end_lines(doc))
    assert re.search(
        rf"\| lifted \(the oracle's success test\) \| {n30} \([a-z, ]+\) of 30 \|",
        (ROOT / "docs" / "oracle.md").read_text(),
    )


# 2. messages that say what happened


def test_ablation_only_says_its_own_time_rows_and_refreshes_the_report(story, tmp_path):
    from replay.output.report import build_report

    d0, _, argv = story
    d = tmp_path / "copy"
    shutil.copytree(d0, d)
    study = d / "study.json"
    build_report(study, d / "report.html")
    before = (d / "report.html").stat().st_mtime_ns
    argv = [a.replace(str(d0), str(d)) for a in argv]
    k = argv.index("--objects")
    argv[k + 1], argv[argv.index("--protocol") + 1] = "stamp", "lift"
    rc, out, err = _main(argv + ["--ablation-only"])
    assert rc == 0, err
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("recording "))
    table = [ln.split()[0] for ln in lines[head + 2 : lines.index("", head)]]
    assert table == ["stamp_lift"]  # the row it reran alone
    wall = [ln for ln in out.splitlines() if ln.startswith("wall time")]
    assert len(wall) == 1 and "interrupted" not in wall[0] and "--ablation-only" in wall[0]
    c = json.loads(study.read_text())["counts"]
    assert c["ablation_only_keys"] == ["stamp_lift"] and f"wall time {c['wall_s_this_run']:.1f} s" in wall[0]
    assert f"report: refreshed {d / 'report.html'}" in out and (d / "report.html").stat().st_mtime_ns > before


def test_choice_options_say_did_you_mean_in_one_line():
    from replay.commands.run_study import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as e:
        main(["--dataset", "grab", "--physics", "authred"])
    rc = e.value.code
    lines = err.getvalue().strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "did you mean 'authored'?" in lines[0]
    from replay.errors import UsageError
    from replay.study.runner import _check_protocols

    with pytest.raises(UsageError, match="did you mean 'hug-oracle'"):
        _check_protocols(["hug-orcale"], False)
    from replay.cli import main as grasp_replay

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert grasp_replay(["stdy"]) == 2
    assert err.getvalue().splitlines() == ["grasp-replay: error: unknown command 'stdy'; did you mean 'study'?"]


def test_scripts_outside_the_environment_say_what_to_run():
    """No site-packages (-S) and no PYTHONPATH (-I): replay is not importable; one line, no traceback."""
    p = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "scripts" / "run_study.py"), "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT.parent,
        timeout=60,
    )
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1 and "Traceback" not in p.stderr
    assert "make setup" in lines[0] and "source .venv/bin/activate" in lines[0]


def test_fetch_help_points_where_the_text_is(capsys):
    from replay.commands.fetch_data import main

    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "docs/data.md" in text and '"Data sources"' not in text
    assert (ROOT / "docs" / "data.md").read_text().startswith("# Data sources")


# 3. wrist tracking error: median and peak over the lift and hold


def test_wrist_error_median_and_peak_per_recording_and_study(story):
    from replay.protocol.plan import PHASE_HOLD, PHASE_LIFT

    d, out, _ = story
    study = json.loads((d / "study.json").read_text())
    peaks = []
    for r in study["rollouts"]:
        rec = read_rollout(d / r["json"]).to_dict()
        z = (
            np.load(d / r["json"].replace(".json", ".npz"))
            if (d / r["json"].replace(".json", ".npz")).is_file()
            else np.load(
                Path(rec["poses"]) if Path(rec["poses"]).is_absolute() else (d / r["json"]).parent / rec["poses"]
            )
        )
        err, phase = z["wrist_err"] * 1000.0, z["phase"]
        lh = err[np.isin(phase, (PHASE_LIFT, PHASE_HOLD)) & np.isfinite(err)]
        # re-derived from the saved per-frame error (float32 in the npz)
        assert r["wrist_err_peak_mm"] == pytest.approx(float(lh.max()), abs=1e-3)
        assert r["wrist_err_median_mm"] <= r["wrist_err_peak_mm"] <= r["wrist_err_max_mm"] + 1e-9
        peaks.append(r["wrist_err_peak_mm"])
    c = study["counts"]
    assert c["median_wrist_err_peak_mm"] == pytest.approx(float(np.median(peaks)))
    assert c["max_wrist_err_peak_mm"] == pytest.approx(max(peaks))
    # the console, the CSV and the report say both
    assert f"peak over the lift and hold: median {c['median_wrist_err_peak_mm']:.1f} mm" in out
    assert all(
        float(row["wrist_err_peak_mm"]) == pytest.approx(r["wrist_err_peak_mm"])
        for row, r in zip(_rows_csv(d), study["rollouts"])
    )
    from replay.output.report import build_report

    build_report(d / "study.json", d / "report.html")
    assert (
        "peak over the lift and hold: median / largest</span>: "
        f"{c['median_wrist_err_peak_mm']:.1f} / {c['max_wrist_err_peak_mm']:.1f}" in (d / "report.html").read_text()
    )
    from replay.output.tables import counts_table

    assert f"{c['median_wrist_err_peak_mm']:.1f} mm / {max(peaks):.1f} mm" in counts_table(study)


# 4. a physics entry describes the value in effect


def test_physics_entries_describe_the_value_in_effect(story):
    from replay.sim import physics

    d, _, _ = story
    study = read_study(d / "study.json")
    rec = read_rollout(d / study.rollouts[0]["json"]).to_dict()
    cfg = ReplayConfig.from_dict(study.config) if hasattr(ReplayConfig, "from_dict") else None
    assert all(e["source"] and e["why"] for e in rec["physics"])
    if cfg is not None:
        assert rec["physics"] == physics.physics_record(cfg)
    user = physics.apply_physics(ReplayConfig(), "authored", {"cone": "elliptic", "integrator": "euler"})
    got = {e["name"]: e for e in physics.physics_record(user)}
    table = physics.PHYSICS["authored"]
    assert got["cone"]["source"] == "--physics-set (user)" and "as authored" not in got["cone"]["why"]
    assert got["cone"]["why"] == f"departs from 'authored': {table['cone'].value!r} ({table['cone'].source})"
    # a --physics-set that repeats the table's value is no departure: the table's why, said as the user's
    assert got["integrator"]["source"].startswith("--physics-set (user), the same as 'authored'")
    assert got["integrator"]["why"] == table["integrator"].why


# 5. a montage a person can read


def test_montage_frames_its_objects_and_draws_its_rule(story, tmp_path):
    import imageio_ffmpeg

    from replay.output.render.montage import (
        MONTAGE_MAX_CANVAS,
        MONTAGE_MAX_CLIPS,
        MONTAGE_MIN_READABLE_W,
        montage_layout,
        montage_record_path,
        render_montage,
    )

    d, _, _ = story
    # the bound: every tile at least 320 px wide with the whole montage inside 1080p
    cols, rows, (tw, th) = montage_layout(MONTAGE_MAX_CLIPS)
    assert tw >= MONTAGE_MIN_READABLE_W and cols * tw <= MONTAGE_MAX_CANVAS[0] and rows * th <= MONTAGE_MAX_CANVAS[1]
    assert (
        montage_layout(MONTAGE_MAX_CLIPS + 1)[2][0] < MONTAGE_MIN_READABLE_W or MONTAGE_MAX_CLIPS + 1 >= 39
    )  # one more would shrink the tiles (or need the larger canvas)
    st = render_montage(d / "study.json", tmp_path / "m.mp4", tile=(320, 240), cols=3)
    record = json.loads(montage_record_path(st.path).read_text())
    assert record["left_out"] == 0 and record["rule"].startswith("every recording (3)") and "320 px" in record["rule"]
    hh = st.size[1] - 240
    assert 20 <= hh <= 120  # the rule drawn although every recording has a tile
    gen = imageio_ffmpeg.read_frames(str(st.path))
    w, h = next(gen)["size"]
    frames = np.stack([np.frombuffer(f, np.uint8).reshape(h, w, 3) for f in gen])
    head = frames[0, :hh].astype(int)
    assert (head.max(axis=2) > 200).mean() > 0.005 and np.median(head) < 40  # light text on a dark band
    # each tile frames its object: the object's pixels (test_render.object_mask) in its 320 x 240 tile, at
    # the most over the clip. Measured on the full-length GRAB study's cubesmall, stamp and mug tiles:
    # 352, 992, 608 px with this camera (the hand-and-object box fitted), 144, 460, 232 with the one
    # before it (the box's bounding sphere, 15 cm reach): so at least 300 px (0.4 % of the tile) each
    f = frames[:, hh:].astype(np.int16)
    blue = (f[..., 2] > f[..., 0] + 60) & (f[..., 2] > f[..., 1] + 30)
    px = [int(blue[:, :, k * 320 : (k + 1) * 320].sum(axis=(1, 2)).max()) for k in range(3)]
    assert min(px) >= 300, px


# 6. make study's whole time in docs/study.md


#: docs/study.md's words beside a make study time measured before make study ran --verdicts
PRE_VERDICTS = "measured before `make study` set the verdicts side by side"
#: docs/study.md's note beside a time measured while `make study` still passed `--effort 0.4` (before issue #54)
PRE_54 = "measured while `make study` still passed `--effort 0.4`"


def test_make_study_time_is_generated_from_its_results_file():
    from replay.output.tables import table

    doc = json.loads((ROOT / "docs" / "results" / "make-study.json").read_text())
    steps = doc["steps"]
    make = (ROOT / "Makefile").read_text()
    assert [s["script"] for s in steps] == ["scripts/fetch_data.py"] * 2 + [
        "scripts/run_study.py",
        "scripts/render_montage.py",
        "scripts/report.py",
    ]
    # the Makefile's fetch and study recipes run these scripts, in this order
    recipes = make[make.index("\nfetch:") : make.index("\nvalidate:")]
    at = [
        recipes.index(f"$(PY) {s}")
        for s in ("scripts/fetch_data.py", "scripts/run_study.py", "scripts/render_montage.py", "scripts/report.py")
    ]
    assert at == sorted(at)
    study = recipes[recipes.index("$(PY) scripts/run_study.py") :].split("\n")[0]
    assert "--samples $(SAMPLES)" in study and "--effort" not in study  # the benchmark runs these defaults
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import make_study_time

    argv = make_study_time.steps("M")[2]
    assert argv[argv.index("--samples") + 1] == make_study_time.makefile_default("SAMPLES")
    page = (ROOT / "docs" / "study.md").read_text()  # the block itself is checked by tests/test_doc_figures.py
    if "--effort" in doc["steps"][2]["command"]:  # a time measured before the physics table held the strength
        at = argv.index("--data") + 2
        argv = argv[:at] + ["--effort", "0.4"] + argv[at:]
        assert PRE_54 in page
    if doc["steps"][2]["command"] != shlex.join(argv):  # a time measured before make study set the verdicts side
        at = argv.index("--verdicts")  # by side (--verdicts): only so, and docs/study.md says it beside the figure
        assert doc["steps"][2]["command"] == shlex.join(argv[:at] + argv[at + 2 :]) and PRE_VERDICTS in page
    assert doc["total_s"] == pytest.approx(sum(s["wall_s"] for s in steps), abs=1.0)
    md = table("make_study", doc)
    m, s = divmod(round(doc["total_s"]), 60)
    assert f"{m}:{s:02d}" in md
    assert (
        f"{doc['cpus']} cores, 1-minute load average {doc['load_1min'][0]} before and {doc['load_1min'][1]} after" in md
    )
    assert "<!-- table:make_study:grab from docs/results/make-study.json -->" in page
    assert f"**`make study`, in all** | **{doc['total_s']:.1f} ({m}:{s:02d})**" in page
