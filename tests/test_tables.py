"""Tables from results, never by hand (replay.output.tables, scripts/tables.py): a table block of a
document regenerated from a small study and compared with the study's own rows; the attribution
table from factor rows; one-line errors for a missing block."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from replay.cli import run
from replay.output import tables
from replay.protocol.diagnosis import CLASSES
from replay.study.attribution import Factor, summarize_factor

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("tables_script", ROOT / "scripts" / "tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cells(text: str, tag: str) -> list[list[str]]:
    """Body rows of the table block ``tag`` in ``text``, as cells."""
    block = text.split(f"<!-- table:{tag} ")[1].split(f"<!-- /table:{tag} -->")[0]
    rows = [ln for ln in block.splitlines() if ln.startswith("|")][2:]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in rows]


@pytest.mark.slow  # shares conftest.small_refine_study, a study with a 4-world refine search: 21 s on 2 shared cores (make test-slow)
@pytest.mark.needs_data
def test_study_and_refine_tables_regenerated_from_a_small_study(small_refine_study, tmp_path, capsys):
    study, out = small_refine_study
    doc = tmp_path / "README.md"
    doc.write_text("# figures\n\n<!-- table:study:short -->\nold, by hand\n<!-- /table:study:short -->\n\ntext\n\n"
                   "<!-- table:refine -->\n<!-- /table:refine -->\n")
    main = _script().main
    assert main(["study", "--results", str(out), "--write", str(doc), "--name", "short",
                 "--made-by", "run_study.py --dataset grab --objects cubesmall"]) == 0
    assert main(["refine", "--results", str(out), "--write", str(doc)]) == 0
    text = doc.read_text()
    assert "old, by hand" not in text and text.startswith("# figures\n") and "\n\ntext\n\n" in text
    assert f"<!-- table:study:short written by: python scripts/tables.py study --results {out} --write {doc} " \
           f"--name short (results: run_study.py --dataset grab --objects cubesmall) -->" in text
    row = study["rollouts"][0]
    (cells,) = _cells(text, "study:short")
    shown = {"not_lifted": "not lifted"}.get(row["outcome"], row["outcome"])  # the report's word
    assert cells[0] == "cubesmall_lift" and cells[1] == shown + (f" ({row['diagnosis']})" if row["diagnosis"] else "")
    assert float(cells[2]) == pytest.approx(row["rise"] * 1000.0, abs=0.05)
    assert cells[4] == {None: "-", True: "stuck", False: "fell"}[row["stuck_after_release"]]
    assert cells[6] == ("-" if row["contact_agreement_recall"] is None else f"{row['contact_agreement_recall']:.2f}")
    (ref,) = _cells(text, "refine")
    f = study["refine_rollouts"][0]
    assert ref[:3] == ["cubesmall", cells[1], {"not_lifted": "not lifted"}.get(f["refine_outcome"], f["refine_outcome"])] and float(ref[3]) == f["refine_wrist_mm"]
    nb = f["refine_neighbourhood_success"]
    assert ref[7] == ("-" if nb is None else f"{nb:.2f}") and ref[8] == {None: "-", True: "yes", False: "no"}[f["refine_seed_agreement"]]
    again = doc.read_text()
    assert main(["study", "--results", str(out), "--write", str(doc), "--name", "short",
                 "--made-by", "run_study.py --dataset grab --objects cubesmall"]) == 0
    assert doc.read_text() == again  # the same results give the same document
    capsys.readouterr()
    assert main(["study", "--results", str(out)]) == 0 and capsys.readouterr().out == tables.study_table(study)


def test_attribution_table_from_factor_rows():
    rows = {"a_lift": {"lifted": True, "outcome": "lifted", "class": None, "shake_held": True},
            "b_lift": {"lifted": False, "outcome": "not_lifted", "class": "no_contact", "shake_held": None},
            "c_lift": {"lifted": False, "outcome": "stuck", "class": "stuck_after_release", "shake_held": True}}
    f = summarize_factor(Factor(name="hand-object friction", value=1.5, source="-"), rows)
    (cells,) = [r for r in tables.attribution_table({"factors": [f]}).splitlines()[2:]]
    c = [x.strip() for x in cells.strip("|").split("|")]
    names = [k for k in CLASSES if k != "unstable"]
    assert c[:5] == ["hand-object friction", "1.5", "1/3", "2", "0"]
    assert c[5 + names.index("no_contact")] == "1" and c[5 + names.index("stuck_after_release")] == "1"
    assert sum(int(x) for x in c[5:]) == 2


def test_a_document_without_the_block_is_a_one_line_error(tmp_path, capsys):
    res = tmp_path / "a.json"
    res.write_text('{"factors": []}')
    doc = tmp_path / "d.md"
    doc.write_text("no block here\n")
    assert run(lambda: _script().main(["attribution", "--results", str(res), "--write", str(doc)])) == 1
    err = capsys.readouterr().err
    assert str(doc) in err and "table:attribution" in err and "Traceback" not in err and len(err.splitlines()) == 1
    with pytest.raises(ValueError, match="2 blocks"):
        tables.replace_block("<!-- table:study -->\n<!-- /table:study -->\n" * 2, "study", "cmd", body="x\n")


def test_a_documents_block_regenerates_in_place():
    """A table block in a document: regenerated, only the block changes, indented as its comment
    (a table inside a list item)."""
    text = "# doc\n\n1. **a finding**\n\n   <!-- table:attribution written by: old -->\n   | old |\n" \
           "   <!-- /table:attribution -->\n\nafter\n"
    kind = "attribution"
    new = tables.replace_block(text, kind, "CMD", body="| a |\n|---|\n| 1 |\n")
    head, tail = text.split(f"<!-- table:{kind} ")[0], text.split(f"<!-- /table:{kind} -->")[1]
    assert new.startswith(head) and new.endswith(tail)
    ind = head.rsplit("\n", 1)[1]
    assert ind == "   "
    assert f"{ind}<!-- table:{kind} written by: CMD -->\n{ind}| a |\n{ind}|---|\n{ind}| 1 |\n{ind}<!-- /table:{kind} -->" in new


def test_scale_table_states_the_goals_ratios():
    """The scale table: one row per size, the overhead ratio largest / smallest against the 1.2x goal,
    the bytes ratio, the driver's peak, the stepping share (figures of a made-up two-size run)."""
    from replay.output.tables import table

    row = dict(wall_s=13.1, driver_peak_rss_mb=137.0, report_s=4.9, report_load_s=0.15, montage_s=41.0,
               montage_tiles=30)
    doc = {"sizes": [dict(row, recordings=30, overhead_per_recording_s=0.40, bytes_per_recording=2.0e5),
                     dict(row, recordings=1500, overhead_per_recording_s=0.10, bytes_per_recording=2.2e5,
                          driver_peak_rss_mb=480.0, montage_tiles=48)],
           "stepping_fraction": 0.31, "stepping_s": 0.62, "profiled_s": 2.0, "profiled": ["mug_lift"]}
    md = table("scale", doc)
    assert "| 1,500 |" in md and "0.100" in md and "48 tiles" in md
    assert f"{0.10 / 0.40:.2f}x (goal at most 1.2x)" in md and f"{2.2 / 2.0:.2f}x (goal flat)" in md
    assert "driver peak 480 MB" in md and "stepping: 31 %" in md
    assert "another recording of each object" not in md  # an older file: the first share alone
    placed = dict(doc, stepping_fraction_placed=0.55, stepping_placed_s=0.64, profiled_placed_s=1.18,
                  profiled_placed=["mugv001_lift"])
    assert "(its scene kept and placed): 55 % (0.64 of 1.18 s over mugv001_lift)" in table("scale", placed)
    with pytest.raises(ValueError, match="not a scale benchmark result"):
        table("scale", {"rows": []})


def test_pose_mapping_summary_and_table(tmp_path, capsys):
    """Two validate_pose_mapping.py results (two hand shapes) -> one summary, one column each; another JSON is
    refused in one line by ``tables.py summarize pose_mapping``."""
    import json

    def run_doc(shape, med):
        per = {"wrist": {"n": 3, "median_mm": med, "p90_mm": 2 * med, "max_mm": 3 * med}, "index_tip": None}
        return {"overall": {"frames": 3, "per_landmark": per}, "sequences": [{"name": "mug_lift"}],
                "run": {"hand_shape": {"grab": shape}, "window": "grasp"}}

    paths = []
    for shape, med in (("zerohand", 1.255), ("fitted", 0.25)):
        paths.append(tmp_path / f"{shape}.json")
        paths[-1].write_text(json.dumps(run_doc(shape, med)))
    out = tmp_path / "fit.json"
    main = _script().main
    assert run(lambda: main(["summarize", "pose_mapping", *map(str, paths), "--out", str(out), "--made-by", "x",
                             "--commit", "abc", "--date", "2026-12-06"])) == 0
    text = tables.table("pose_mapping", json.loads(out.read_text()))
    assert "| landmark | `zerohand` median (p90) mm | `fitted` median (p90) mm |" in text
    assert "| wrist | 1.25 (2.51) | 0.25 (0.50) |" in text and "index_tip" not in text
    assert "- each: 3 frames (window grasp) of 1 recordings: mug_lift" in text
    capsys.readouterr()
    (tmp_path / "study.json").write_text(json.dumps({"rollouts": []}))
    assert run(lambda: main(["summarize", "pose_mapping", str(tmp_path / "study.json"), "--out", str(out),
                             "--made-by", "x"])) == 1
    err = capsys.readouterr().err.strip()
    assert "not a pose-mapping validation" in err and len(err.splitlines()) == 1
