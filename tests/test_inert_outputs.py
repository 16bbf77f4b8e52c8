"""Outputs a user opens or pastes are inert (issue #48, item 3): a CSV cell a spreadsheet would
evaluate is neutralised (OWASP's rule), every command shown is shell-quoted, names printed to a
terminal have their control characters escaped; results JSON keeps every name exact.

The case ``name_with_shell_metacharacters`` (cases README): GRAB cubesmall stored as
``cubesmall_lift;touch PWNED_SHELL;#.pkl``; before, the report's export command, pasted into a
shell, ran ``touch``.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from replay import console
from replay.cli import say_error
from replay.console import printable_output
from replay.errors import printable
from replay.output.export_section import export_command
from replay.results.files import csv_cell, rows_csv
from replay.study.console import StudyConsole

ROOT = Path(__file__).resolve().parent.parent
CASE_SEQUENCE = "cubesmall_lift;touch PWNED_SHELL;#"
#: names of each class: formula starts (OWASP's six), shell metacharacters, terminal controls
HOSTILE = [
    '=HYPERLINK("http://x","y")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\tx",
    "\rx",
    CASE_SEQUENCE,
    "a$(touch PWNED)b",
    "`touch PWNED`",
    'it\'s "quoted"',
    "two\nlines",
    "red\x1b[31m",
    "bell\x07",
    "over\rwrite",
    "csi\x9b2J",
    "rtl\u202eevil",
    "iso\u2066x\u2069",
]


def test_csv_cells_a_spreadsheet_would_evaluate_are_neutralised():
    rows = [
        {"sequence": s, "object": s, "rise": -0.0125, "slip_mm": 3.0, "outcome": "lifted", "input_flags": {"intent": s}}
        for s in HOSTILE
    ]
    read = list(
        csv.DictReader(
            io.StringIO(rows_csv(rows, ["sequence", "object", "rise", "slip_mm", "outcome", "input_flags"]), newline="")
        )
    )
    assert len(read) == len(HOSTILE)
    for name, r in zip(HOSTILE, read):
        for col in ("sequence", "object"):
            if name[0] in "=+-@\t\r":  # OWASP: a leading quote, the rest exactly the name
                assert r[col] == "'" + name
            else:
                assert r[col] == name
        assert r["rise"] == "-0.0125" and float(r["rise"]) == -0.0125  # a negative number stays a number
        assert json.loads(r["input_flags"]) == {"intent": name}  # JSON text starts with "{": inert, exact
    assert csv_cell(-3) == -3 and csv_cell(-0.5) == -0.5 and csv_cell(True) is True
    assert csv_cell("mug_lift") == "mug_lift" and csv_cell("") == ""


@pytest.mark.parametrize("name", HOSTILE)
def test_the_export_command_splits_back_to_the_exact_argv(name):
    cmd = export_command(Path("out dir/study.json"), name, "mjcf")
    assert shlex.split(cmd) == [
        "python",
        "scripts/export_rollout.py",
        "--study",
        "out dir/study.json",
        "--sequence",
        name,
        "--format",
        "mjcf",
    ]


def test_names_printed_to_a_terminal_have_control_characters_escaped(capsys):
    for raw, shown in [
        ("red\x1b[31m", "red\\x1b[31m"),
        ("bell\x07", "bell\\x07"),
        ("over\rwrite", "over\\rwrite"),
        ("csi\x9b2J", "csi\\x9b2J"),
        ("rtl\u202eevil", "rtl\\u202eevil"),
        ("del\x7f", "del\\x7f"),
        ("iso\u2066x\u2069", "iso\\u2066x\\u2069"),
        ("two\nlines", "two\\nlines"),
    ]:
        assert printable(raw) == shown
    assert printable("two\nlines", keep_newlines=True) == "two\nlines"
    kept = "mug_lift café 杯 ; $(x) `y` 'z' \"w\""  # printable text, metacharacters too, is shown as it is
    assert printable(kept) == kept
    # every path a name takes to the terminal: console lines, one-line errors, a command's outcome lines
    con = StudyConsole("grab", 0, 0)
    con.say("failed: red\x1b[31m_lift: boom")
    say_error("--objects: no grab sequence 'x\x1b]0;title\x07'", prog="run_study.py")
    console.out("recording  outcome\nrtl\u202eevil_lift  lifted")  # the console's own lines: escaped by it
    console.err("refused: bidi\u2066_lift: why")
    with printable_output():  # what others write while a command runs (argparse, warnings, libraries)
        print("recording  outcome\nrtl\u202eevil_lift  lifted")
        print("refused: csi\x9b2J_lift: why", file=sys.stderr)
    out, err = capsys.readouterr()
    assert out == "recording  outcome\nrtl\\u202eevil_lift  lifted\n" * 2
    assert err.splitlines() == [
        "failed: red\\x1b[31m_lift: boom",
        "run_study.py: error: --objects: no grab sequence 'x\\x1b]0;title\\x07'",
        "refused: bidi\\u2066_lift: why",
        "refused: csi\\x9b2J_lift: why",
    ]
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out + err)


def test_the_studys_closing_lines_escape_names_and_keep_an_error_to_one_line(capsys):
    """``run_study.py``'s table and failure lines (:func:`print_outcome` within :func:`printable_output`,
    as its ``main`` calls it): names escaped, an error's traceback left to the records."""
    from replay.commands.run_study import print_outcome

    study = {
        "rollouts": [{"sequence": "red\x1b[31m_lift", "outcome": "lifted"}],
        "counts": {"refused_keys": ["bell\x07_lift"]},
        "failed": {
            "title\x1b]0;x\x07_lift": 'TypeError: boom\nTraceback (most recent call last):\n  File "x.py"',
            "bell\x07_lift": "x.pkl: fps: not a number",
        },
    }
    with printable_output():
        print_outcome(study)
    out, err = capsys.readouterr()
    # the name, its intent (none), its verdict, p_lift and reason (none: a row without a verdict), its contact run
    assert re.search(r"red\\x1b\[31m_lift +- +- +- +- +lifted", out)
    assert err.splitlines() == [
        "failed: title\\x1b]0;x\\x07_lift: TypeError: boom (traceback in the study's records.jsonl)",
        "refused: bell\\x07_lift: x.pkl: fps: not a number",
    ]


def _run(script: str, *args, cwd: Path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _short_config(tmp_path):
    """A config file of the short lift protocol (0.3 s approach, 4 cm lift) in ``tmp_path``."""
    cfg = tmp_path / "short.json"
    lift = {"lift_height": 0.04, "lift_s": 0.3, "hold_s": 0.2, "lifted_min_rise": 0.02}
    cfg.write_text(json.dumps(dict(approach_window_s=0.3, settle_s=0.1, lift=lift)))
    return cfg


@pytest.mark.needs_data
def test_shell_metacharacters_case_the_shown_command_runs_nothing_else(tmp_path, cases_dir):
    """The study of the case, its report, the export command the report shows: run through
    ``bash -c`` in an empty folder it creates no ``PWNED_SHELL`` (it is one command, whose script is
    not there); the study JSON and the CSV keep the name exact. About 15 s on 2 shared cores."""
    cfg = _short_config(tmp_path)
    out = tmp_path / "out" / "study.json"
    res = _run(
        "run_study.py",
        "--dataset",
        "grab",
        "--data",
        cases_dir / "name_with_shell_metacharacters" / "data",
        "--objects",
        CASE_SEQUENCE,
        "--out",
        out,
        "--workers",
        "1",
        "--no-ablation",
        "--quiet",
        "--config",
        cfg,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    study = json.loads(out.read_text())
    assert [r["sequence"] for r in study["rollouts"]] == [CASE_SEQUENCE]
    assert CASE_SEQUENCE in res.stdout  # the console's table names it as it is (no control character in it)
    res = _run("report.py", "--study", out, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    with open(out.with_suffix(".csv"), newline="") as f:
        assert next(csv.DictReader(f))["sequence"] == CASE_SEQUENCE  # starts with "c": nothing to neutralise
    pages = "".join(p.read_text() for p in (tmp_path / "out").rglob("*.html"))
    shown = [html.unescape(c) for c in re.findall(r"<code>(python scripts/export_rollout\.py[^<]*)</code>", pages)]
    assert len(shown) == 3  # mjcf, usd, rrd: none exported yet
    for cmd in shown:
        assert shlex.split(cmd)[4:6] == ["--sequence", CASE_SEQUENCE]
        paste = tmp_path / "paste"
        paste.mkdir(exist_ok=True)
        subprocess.run(["bash", "-c", cmd], cwd=paste, capture_output=True, timeout=60)
        assert not (paste / "PWNED_SHELL").exists(), cmd
        assert not (tmp_path / "PWNED_SHELL").exists()
    # and the old, unquoted command would have created it: the check can fail
    bare = f"true --sequence {CASE_SEQUENCE} --format mjcf"
    subprocess.run(["bash", "-c", bare], cwd=paste, capture_output=True, timeout=60)
    assert (paste / "PWNED_SHELL").exists()


@pytest.mark.needs_data
def test_a_code_error_while_stepping_is_the_recordings_error_not_unstable(tmp_path, mirror, monkeypatch, capsys):
    """Issue #48 item 7 through the study: a TypeError raised in the stepping path of one recording
    (a frame's substeps, inside the engine's net for MuJoCo's own errors, as a bug would) lists that recording
    as an error (not a physics outcome: no rollout, not counted unstable), with its traceback in the study's records
    and one line on the console; the other recording is replayed. Two short in-process replays: about 15 s."""
    from replay.config import ReplayConfig
    from replay.protocol import rollout
    from replay.sim.engine.mujoco_c import c_loop
    from replay.sim.engine.mujoco_c.mjc import MjcBatch
    from replay.study.runner import run_study

    real = rollout.run_rollouts

    def buggy(*a, **k):
        raise TypeError("unsupported operand type(s) for *: 'NoneType' and 'float'")

    def run_rollouts(rec, *a, **k):
        if rec.name != "cubesmall_lift":
            return real(rec, *a, **k)
        with monkeypatch.context() as m:  # this recording's stepping only: every frame through the Python loop
            m.setattr(c_loop, "ARENA_GUARD", -1.0)  # (where MuJoCo's own errors are caught), whose substeps raise
            m.setattr(MjcBatch, "_python_frame", buggy)
            return real(rec, *a, **k)

    monkeypatch.setattr(rollout, "run_rollouts", run_rollouts)
    cfg = ReplayConfig(
        approach_window_s=0.3,
        settle_s=0.1,
        lift={"lift_height": 0.04, "lift_s": 0.3, "hold_s": 0.2, "lifted_min_rise": 0.02},
    )
    out = tmp_path / "study.json"
    study = run_study("grab", out, cfg, objects=["cubesmall", "mug"], workers=0, ablation=False, data_dir=mirror)
    assert [r["sequence"] for r in study["rollouts"]] == ["mug_lift"]
    assert study["counts"]["unstable"] == 0 and study["counts"]["rollouts"] == 1
    why = study["failed"]["cubesmall_lift"]
    assert why.startswith("TypeError: unsupported operand") and "cubesmall_lift" not in study["counts"]["refused_keys"]
    records = [json.loads(x) for x in out.with_name("study.records.jsonl").read_text().splitlines()]
    err = [r for r in records if r["key"] == "cubesmall_lift"]
    assert err[-1]["status"] == "error" and "Traceback" in err[-1]["reason"] and "in buggy" in err[-1]["reason"]
    said = [ln for ln in capsys.readouterr().err.splitlines() if "cubesmall_lift" in ln]
    assert any(
        ln.endswith("failed: cubesmall_lift: TypeError: unsupported operand type(s) for *: 'NoneType' and 'float'")
        for ln in said
    ), said


@pytest.mark.needs_data
def test_terminal_escapes_in_recording_names_are_shown_not_obeyed(tmp_path, mirror):
    """Two mirror recordings under names holding terminal controls (an OSC title change ended by BEL,
    a clear-screen CSI, a colour): ``run_study.py``'s stdout and stderr hold none of them raw (the
    progress bar keeps its CRs), the names appear escaped, and the study JSON keeps them exact.
    About 10 s on 2 shared cores."""
    names = ["cubesmall_lift\x1b]0;pwned\x07\x1b[2J", "mug\x1b[31m_lift"]
    data = tmp_path / "data"
    (data / "grab" / "recordings").mkdir(parents=True)
    (data / "grab" / "objects").symlink_to(mirror / "grab" / "objects")
    for name, src in zip(names, ("cubesmall_lift", "mug_lift")):
        (data / "grab" / "recordings" / f"{name}.pkl").symlink_to(mirror / "grab" / "recordings" / f"{src}.pkl")
    cfg = _short_config(tmp_path)
    out = tmp_path / "out" / "study.json"
    res = _run(
        "run_study.py",
        "--dataset",
        "grab",
        "--data",
        data,
        "--out",
        out,
        "--workers",
        "1",
        "--no-ablation",
        "--config",
        cfg,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", res.stdout)
    assert not re.search("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]", res.stderr)  # CR: the bar's redraws
    for name in names:
        assert printable(name) in res.stdout  # the table
    study = json.loads(out.read_text())
    assert sorted(r["sequence"] for r in study["rollouts"]) == sorted(names)


def test_report_links_quote_a_name_s_url_characters():
    """A recording named with ``#`` / ``;`` (shared/cases name_with_shell_metacharacters): its page link and figure
    still point at its files (``#`` would start a fragment), then HTML-escaped."""
    from urllib.parse import unquote

    from replay.output.report_table import href

    name = "mug_x;#'<1>.html"
    assert "#" not in href(name) and "'" not in href(name) and "<" not in href(name)
    assert unquote(html.unescape(href(name))) == name and href("a b/c.png") == "a%20b/c.png"
