"""The attribution report section and Markdown table (replay.output.attribution_section)."""

from __future__ import annotations

import json

from replay.output.attribution_section import attribution_markdown, attribution_section_for, attribution_section_html

DOC = {"factors": [
    {"name": "defaults", "value": "-", "source": "today", "lifted": 7, "of": 30, "unstable": 0,
     "diagnosis": {"no_contact": 5, "never_gripped": 13}},
    {"name": "finger effort", "value": 1.0, "source": "Westling & Johansson 1984", "lifted": 10, "of": 30,
     "unstable": 0, "diagnosis": {"shaken_loose": 7}},
]}


def test_section_and_markdown(tmp_path):
    page = attribution_section_html(DOC)
    assert "<table id=attribution>" in page and page.count("<tr>") == 3 and "10/30" in page
    md = attribution_markdown(DOC, source=True).splitlines()
    assert md[0].startswith("| factor | value | lifted | unstable | stuck_after_release | no_contact |")
    assert md[2].startswith("| defaults | - | 7/30 | 0 | 0 | 5 |") and md[3].endswith("Westling & Johansson 1984 |")
    assert attribution_section_for(tmp_path / "study.json") == ""  # no attribution.json: no section
    (tmp_path / "attribution.json").write_text(json.dumps(DOC))
    assert "finger effort" in attribution_section_for(tmp_path / "study.json")
