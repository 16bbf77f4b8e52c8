"""The report's view of the sampled verdict (issue #46), on a study record with exactly the schema's
fields (:mod:`p_lift_fixture`; no data needed): the table's class column and filter per condition, a
recording's verdicts side by side with its chart, the counts per condition, the discrimination table;
and an older study's envelope record (format 3) read and left off the page."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from p_lift_fixture import CLASS_WORDS, CONDITIONS, ORACLE, RECORDINGS, N, entry, write_p_lift_study

from replay.output.p_lift_section import _X0, _X1, p_lift_svg
from replay.output.report import build_report
from replay.protocol.p_lift_stats import wilson
from replay.results.judge import DEFAULT_JUDGE
from replay.results.verdict_record import PLiftEntry, Word


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("p_lift")
    n = build_report(write_p_lift_study(d), d / "report.html")
    return d, n


def test_table_has_a_class_column_and_filter_per_condition(built):
    d, n = built
    assert n["rows"] == len(RECORDINGS)
    page = (d / "report.html").read_text()
    heads = re.findall(r"<th data-key='([^']+)'>", page)
    assert heads[heads.index("outcome") + 1 : heads.index("outcome") + 1 + len(CONDITIONS)] == [
        f"p_lift:{c}" for c in CONDITIONS
    ]
    for i, c in enumerate(CONDITIONS):
        sel = re.search(rf"<select data-filter='p_lift:{c}' id='filter-p_lift-{c}'>(.*?)</select>", page).group(1)
        want = Counter(CLASS_WORDS[entry(r[-1][i])["class"]] for r in RECORDINGS)
        got = {v: int(k) for v, k in re.findall(r"<option value='[^']+'>([^<]+) \((\d+)\)</option>", sel)}
        assert got == dict(want), (c, got)
    # a class cell sorts by p (its data-k), not by its word
    mug = entry(RECORDINGS[0][-1][0])
    assert f"<td data-k='{float(mug['p'])!r}'" in page


def test_a_condition_s_cell_shows_p_and_its_interval_and_its_filter_matches_the_word(built):
    """Each P(lift) column shows p with its 95 % interval (``0.94 [0.80, 0.98]``), not a word; the verdict column
    keeps its word, and the condition's filter still matches what the entry says (its ``data-f``)."""
    d, _ = built
    page = (d / "report.html").read_text()
    heads = re.findall(r"<th data-key='([^']+)'>", page)
    body = re.search(r"<table id=rows>.*?<tbody>(.*?)</tbody>", page, re.S).group(1)
    for seq, *_, ks in RECORDINGS:
        tr = re.search(rf"<tr><td><a href='[^']*{seq}\.html'>.*?</tr>", body).group(0)
        cells = re.findall(r"<td([^>]*)>(.*?)</td>", tr)
        for c, k in zip(CONDITIONS, ks):
            attrs, text = cells[heads.index(f"p_lift:{c}")]
            lo, hi = wilson(k, N)  # re-derived from the lifted count, not read from the entry
            assert text == f"{k / N:.2f} [{lo:.2f}, {hi:.2f}]", (seq, c, text)
            assert f"data-f='{CLASS_WORDS[entry(k)['class']]}'" in attrs, (seq, c, attrs)
        assert cells[heads.index("verdict")][1] in {w.value for w in Word}


def test_counts_per_condition_lead_the_summary_lifts_and_others_apart(built):
    d, _ = built
    page = (d / "report.html").read_text()
    # the verdicts lead, the counts per condition are detail under them
    assert page.index("id=verdict-counts") < page.index("id=rows") < page.index("id=p-lift-counts")
    for group, keep in (("lifts", lambda r: r[2] == "lift"), ("other intents", lambda r: r[2] != "lift")):
        for i, c in enumerate(CONDITIONS):
            want = Counter(entry(r[-1][i])["class"] for r in RECORDINGS if keep(r))
            row = re.search(rf"<tr><td>lift</td><td>{group}</td><td>{c}</td>(.*?)</tr>", page).group(1)
            got = [int(x) for x in re.findall(r">(\d+)</td>", row)]
            assert got == [want[k] for k in CLASS_WORDS] + [sum(want.values())], (group, c, got)
    for i, c in enumerate(CONDITIONS):  # the hug-oracle's apart (one recording ran it)
        cls = entry(ORACLE["mug_lift"][i])["class"]
        row = re.search(rf"<tr><td>hug-oracle</td><td>lifts</td><td>{c}</td>(.*?)</tr>", page).group(1)
        assert [int(x) for x in re.findall(r">(\d+)</td>", row)] == [int(k == cls) for k in CLASS_WORDS] + [1]


def test_discrimination_table(built):
    d, _ = built
    page = (d / "report.html").read_text()
    table = re.search(r"<table id=discrimination>(.*?)</table>", page, re.S).group(1)
    assert table.count("<tr>") == 1 + len(CONDITIONS) and "wrist_offset_2cm" in table and "0.50 [1]" in table
    assert "<p class=ref>[1] HUG paper, 2 cm wrist offset</p>" in page  # the source once, under the table


def test_recording_page_leads_with_its_verdict_then_the_evidence(built):
    d, _ = built
    mug = (d / "report_files" / "mug_lift.html").read_text()
    # the verdict under the judged condition (its interval against 0.5), its cross-checks, then the evidence
    assert mug.index("id=verdict") < mug.index("id=recording-checks") < mug.index("<h2>Evidence")
    assert mug.index("<h2>Evidence") < mug.index("id=verdicts") < mug.index("id=fields")
    e = entry(RECORDINGS[0][-1][CONDITIONS.index(DEFAULT_JUDGE.condition)])
    word = "holds" if e["lo"] >= 0.5 else "fails" if e["hi"] <= 0.5 else "uncertain"
    head = re.search(r"<p id=verdict[^>]*>(.*?)</p>", mug, re.S).group(1)
    assert f">{word}</b>" in head and f"{e['p']:.2f} [{e['lo']:.2f}, {e['hi']:.2f}]" in head
    verdicts = re.search(r"<table id=verdicts>(.*?)</table>", mug, re.S).group(1)
    assert "lift / replay" in verdicts and "hug-oracle / replay" in verdicts
    oracle_as_replayed = entry(ORACLE["mug_lift"][0])
    assert f"{oracle_as_replayed['p']:.2f} [{oracle_as_replayed['lo']:.2f}, {oracle_as_replayed['hi']:.2f}]" in verdicts
    assert mug.count("<svg") == 2
    duck = (d / "report_files" / "duck_lift.html").read_text()  # no hug-oracle rollout
    assert "hug-oracle / replay" not in duck


def test_chart_draws_each_interval_and_p_on_the_0_1_axis():
    e = entry(13)
    svg = p_lift_svg({"as_replayed": PLiftEntry.from_dict(e)})
    x = lambda p: _X0 + (_X1 - _X0) * p  # noqa: E731
    assert f"x1='{x(e['lo']):.1f}'" in svg and f"x2='{x(e['hi']):.1f}'" in svg and f"cx='{x(e['p']):.1f}'" in svg
    assert p_lift_svg(None) == "" and p_lift_svg({}) == ""


def test_older_study_without_p_lift_has_no_chart(tmp_path):
    study = write_p_lift_study(tmp_path)
    import json

    doc = json.loads(study.read_text())
    for k in ("discrimination", "sampling"):
        doc.pop(k)
    doc["counts"].pop("p_lift")
    study.write_text(json.dumps(doc))
    for r in doc["rollouts"] + doc["oracle_rollouts"]:
        p = tmp_path / r["json"]
        rec = json.loads(p.read_text())
        rec.pop("sampled")
        p.write_text(json.dumps(rec))
    build_report(study, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert "p_lift:" not in page and "p-lift-counts" not in page and "discrimination" not in page
    assert "<svg" not in (tmp_path / "report_files" / "mug_lift.html").read_text()


def test_readme_trust_table_from_the_study_and_its_summary(tmp_path):
    """The README's first table (``tables.py p_lift``): per condition robust lift / uncertain / robust failure
    as the study counted them, and the discrimination figures; the same from the small results file
    (``tables.py summarize study``) as from the study JSON, through a document block."""
    import json

    from replay.output.doc_blocks import stale_blocks, update_text
    from replay.output.results_summary import summarize
    from replay.output.tables import table

    doc = json.loads(write_p_lift_study(tmp_path).read_text())
    text = table("p_lift", doc)
    small = summarize("study", doc, made_by="run_study.py --samples 32", commit="abc1234", date="2026-12-04")
    assert table("p_lift", json.loads(json.dumps(small))) == text and small["sampling"]["samples"] == 32
    lines = [ln for ln in text.splitlines() if ln.startswith("| lift |")]
    assert [ln.split("|")[2].strip(" `") for ln in lines] == list(CONDITIONS)
    oracle = [ln for ln in text.splitlines() if ln.startswith("| hug-oracle |")]
    assert len(oracle) == len(CONDITIONS) and all(
        ln.endswith("| 1 | - |") for ln in oracle
    )  # one recording, no corruption
    for ln, c in zip(lines, CONDITIONS):
        cells = [x.strip() for x in ln.split("|")[3:-1]]
        want = [
            sum(entry(r[-1][CONDITIONS.index(c)])["class"] == k for r in RECORDINGS if r[2] == "lift")
            for k in CLASS_WORDS
        ]
        assert [int(x) for x in cells[:4]] == want + [sum(want)], (c, cells)
        d = next(x for x in doc["discrimination"] if x["condition"] == c)
        assert cells[4] == (
            f"{d['p_real']:.2f} -> {d['p_corrupted']:.2f}, AUC {d['auc']:.2f}, ratio {d['ratio']:.2f} (0.50)"
        ), cells
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "trust.json").write_text(json.dumps(small))
    readme = tmp_path / "README.md"
    readme.write_text("<!-- table:p_lift:grab from docs/results/trust.json -->\nold\n<!-- /table:p_lift:grab -->\n")
    readme.write_text(update_text(readme.read_text(), tmp_path))
    assert "| holds |" in readme.read_text() and stale_blocks(readme.read_text(), tmp_path) == []
    with pytest.raises(ValueError, match="--samples"):
        table("p_lift", {"rollouts": [], "counts": {}})


def test_the_fixture_s_entries_are_the_study_s():
    """The fixture's interval and class (scipy's Wilson score) are what the study writes (replay.protocol.p_lift_stats),
    so the report is tested on the fields a sampled study really holds."""
    from replay.protocol.p_lift_stats import verdict_class, wilson

    for k in (0, 1, 12, 16, 20, 31, 32):
        e = entry(k)
        assert (e["lo"], e["hi"]) == pytest.approx(wilson(k, 32), abs=1e-12) and e["class"] == verdict_class(
            *wilson(k, 32)
        )


def test_an_older_envelope_study_is_read_and_its_envelope_left_off(tmp_path):
    """A format-3 study run with --envelope (its record under ``verdict_envelope``): the report is built, the
    record kept as an unknown key of the rollout and shown nowhere (no column, filter or raw record)."""
    import json

    study = write_p_lift_study(tmp_path)
    doc = json.loads(study.read_text())
    doc["format_version"] = 3
    for k in ("discrimination", "sampling"):
        doc.pop(k)
    study.write_text(json.dumps(doc))
    classes = {}
    for i, r in enumerate(doc["rollouts"]):
        p = tmp_path / r["json"]
        rec = json.loads(p.read_text())
        rec.pop("sampled")
        cls = ("robust_lift", "fragile", "robust_failure")[i % 3]
        rec.update(
            format_version=3,
            verdict_envelope={
                "settings": ["default", "gravity_compensation"],
                "lifted": [True, False],
                "fraction": 0.5,
                "class": cls,
                "wall_s": [1.0, 1.1],
            },
        )
        classes[r["sequence"]] = cls
        p.write_text(json.dumps(rec))
    n = build_report(study, tmp_path / "report.html")
    assert n["rows"] == len(doc["rollouts"])
    page = (tmp_path / "report.html").read_text()
    assert "verdict_envelope" not in page and "'settings'" not in page and "fragile" not in page
    mug = (tmp_path / "report_files" / "mug_lift.html").read_text()
    assert "verdict_envelope" not in mug and "gravity_compensation" not in mug
    from replay.results.files import read_rollout

    rec = read_rollout(tmp_path / doc["rollouts"][0]["json"])
    assert rec.extra["verdict_envelope"]["class"] == classes[doc["rollouts"][0]["sequence"]]
