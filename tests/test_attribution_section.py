"""The attribution report section (replay.output.attribution_section)."""

from __future__ import annotations

import json

from replay.output.attribution_section import attribution_section_for, attribution_section_html

DOC = {"factors": [
    {"name": "defaults", "value": "-", "source": "today", "lifted": 7, "of": 30, "unstable": 0,
     "diagnosis": {"no_contact": 5, "never_gripped": 13}},
    {"name": "finger effort", "value": 1.0, "source": "Westling & Johansson 1984", "lifted": 10, "of": 30,
     "unstable": 0, "diagnosis": {"shaken_loose": 7}},
]}


def test_section(tmp_path):
    page = attribution_section_html(DOC)
    assert "<table id=attribution>" in page and page.count("<tr>") == 3 and "10/30" in page
    head = ["factor", "value", "lifted", "unstable", "stuck_after_release", "no_contact"]
    assert "".join(f"<th>{h}</th>" for h in head) in page
    assert "<td>defaults</td><td>-</td><td>7/30</td><td>0</td><td>0</td><td>5</td>" in page
    assert page.count("<tr>") == 3 and "<td>Westling &amp; Johansson 1984</td></tr>" in page
    assert attribution_section_for(tmp_path / "study.json") == ""  # no attribution.json: no section
    (tmp_path / "attribution.json").write_text(json.dumps(DOC))
    assert "finger effort" in attribution_section_for(tmp_path / "study.json")
