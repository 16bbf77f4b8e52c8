"""Every figure from a run in README.md and docs/ is generated (replay.output.doc_blocks): each block is
what the generator makes from its checked-in results file, so no figure can be edited by hand or go
stale; the summaries keep what the tables read; a stale block is a one-line error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.cli import run
from replay.commands.tables import main
from replay.output import doc_blocks, tables
from replay.output.results_summary import junit_summary, study_summary, summarize

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_generated_block_is_what_its_results_file_makes():
    found = {d.name: doc_blocks.blocks(d.read_text()) for d in DOCS}
    srcs = {src for bl in found.values() for _, _, src in bl}
    # the README's verdicts, the default study's figures, the per-recording table, the oracle's, the bridge's, the
    # suite's run
    assert {"docs/results/grab-trust.json", "docs/results/grab-lifts.json", "docs/results/grab-oracle.json",
            "docs/results/grab-bridge.json", "docs/results/tests.json"} <= srcs
    assert ("verdict", "grab-trust", "docs/results/grab-trust.json") in found["README.md"]
    assert ("counts", "fidelity-lifts", "docs/results/grab-lifts.json") in found["fidelity.md"]
    for d in DOCS:
        assert doc_blocks.stale_blocks(d.read_text(), ROOT) == [], f"{d.name}: run `make docs`"
    for src in srcs:  # small summaries only (the trust study keeps each recording's p_lift real and corrupted per condition), each saying where it came from
        doc = json.loads((ROOT / src).read_text())
        assert (ROOT / src).stat().st_size < 100_000 and doc["made_by"] and doc["commit"] and doc["date"]


def test_the_default_study_block_says_what_its_rows_say():
    """docs/fidelity.md's default-study counts re-derived from the summary's rows (not from its counts)."""
    doc = json.loads((ROOT / "docs/results/grab-lifts.json").read_text())
    rows = doc["rollouts"]
    lifted = sorted(r["sequence"].removesuffix("_lift") for r in rows if r["lifted"])
    held = [r for r in rows if r["shake_held"]]
    assert doc["counts"]["lifted"] == len(lifted) and doc["counts"]["shake_held"] == len(held)
    text = (ROOT / "docs" / "fidelity.md").read_text()
    block = text.split("<!-- table:counts:fidelity-lifts ")[1].split("<!-- /table:counts:fidelity-lifts -->")[0]
    line = next(ln for ln in block.splitlines() if ln.startswith("| lifted at the end of the hold"))
    assert line == f"| lifted at the end of the hold | {len(lifted)} ({', '.join(lifted)}) of {len(rows)} |"


def test_a_figure_edited_by_hand_is_stale(tmp_path):
    (tmp_path / "docs" / "results").mkdir(parents=True)
    study = {"rollouts": [{"sequence": "cubesmall_lift", "outcome": "lifted", "diagnosis": None, "lifted": True,
                           "rise": 0.1784, "shake_held": True, "stuck_after_release": False,
                           "contact_agreement_precision": 1.0, "contact_agreement_recall": 0.5}],
             "counts": {"rollouts": 1, "stable": 1, "lifted": 1, "shake_held": 1, "ablation_run": 1,
                        "ablation_clean": 1, "ablation_no_rise": 1, "ablation_lifted": 0}}
    small = summarize("study", study, made_by="run_study.py --objects cubesmall", commit="abc1234", date="2026-12-02")
    (tmp_path / "docs" / "results" / "one.json").write_text(json.dumps(small))
    doc = "# x\n\n<!-- table:study:one from docs/results/one.json -->\n<!-- /table:study:one -->\n\nafter\n"
    made = doc_blocks.update_text(doc, tmp_path)
    assert "| cubesmall_lift | lifted | 178.4 | yes | fell | 1.00 | 0.50 |" in made
    assert "made by `run_study.py --objects cubesmall`, commit abc1234, 2026-12-02_" in made
    assert made.endswith("<!-- /table:study:one -->\n\nafter\n") and doc_blocks.stale_blocks(made, tmp_path) == []
    assert doc_blocks.update_text(made, tmp_path) == made  # the same file gives the same document
    edited = made.replace("178.4", "180.0")
    assert doc_blocks.stale_blocks(edited, tmp_path) == ["study:one"]


def test_check_is_a_one_line_error_naming_the_block(tmp_path, monkeypatch, capsys):
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "t.json").write_text(json.dumps(
        {"made_by": "pytest", "commit": "c", "date": "d", "tests": 3, "passed": 2, "failed": 0, "errors": 0,
         "skipped": 1, "time_s": 12.0, "skip_reasons": {"chromium is not installed": 1}}))
    doc = tmp_path / "t.md"
    doc.write_text("<!-- table:tests:run from docs/results/t.json -->\n<!-- /table:tests:run -->\n")
    monkeypatch.chdir(tmp_path)
    assert run(lambda: main(["check", "t.md"])) == 1
    err = capsys.readouterr().err
    assert "tests:run" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert run(lambda: main(["update", "t.md"])) == 0 and "| skipped: chromium is not installed | 1 |" in doc.read_text()
    assert run(lambda: main(["check", "t.md"])) == 0
    (tmp_path / "docs" / "results" / "t.json").unlink()
    assert run(lambda: main(["check", "t.md"])) == 1 and "no such results file" in capsys.readouterr().err


def test_summaries_keep_what_the_tables_read(tmp_path):
    study = {"dataset": "grab", "counts": {"rollouts": 2, "lifted": 1, "shake_held": 0, "stable": 2, "stuck": 0,
                                           "diagnosis": {"no_contact": 1}, "ablation_run": 2, "ablation_clean": 2,
                                           "ablation_no_rise": 2, "ablation_lifted": 0, "refused_keys": ["x_use_1"]},
             "rollouts": [{"sequence": "a_lift", "outcome": "lifted", "lifted": True, "rise": 0.17, "shake_held": False,
                           "wall_s_total": 3.0, "json": "a.json"},
                          {"sequence": "b_lift", "outcome": "dropped", "diagnosis": "no_contact", "lifted": False,
                           "rise": 0.0}], "config": {"big": list(range(100))}}
    small = study_summary(study)
    assert "config" not in small and "wall_s_total" not in small["rollouts"][0]
    for kind in ("counts", "study"):
        assert tables.table(kind, small) == tables.table(kind, study)
    assert "| diagnosis (not lifted, or not held through the shake) | no_contact 1 |" in tables.table("counts", small)
    assert "| recordings replayed | 2 (1 refused: x_use_1) |" in tables.table("counts", small)
    xml = tmp_path / "r.xml"
    xml.write_text('<testsuites><testsuite name="pytest" tests="4" failures="1" errors="0" skipped="1" time="9.87">'
                   '<testcase name="a"/><testcase name="b"><skipped message="no GPU"/></testcase>'
                   '<testcase name="c"><failure/></testcase><testcase name="d"/></testsuite></testsuites>')
    assert junit_summary(xml) == {"tests": 4, "passed": 2, "failed": 1, "errors": 0, "skipped": 1, "time_s": 9.9,
                                  "skip_reasons": {"no GPU": 1}, "failed_tests": ["c"]}
    with pytest.raises(ValueError, match="not a study"):
        study_summary({"factors": []})
