"""The report's table on its own (no data needed): the filters list each value with its count, and a link
per row."""

from __future__ import annotations

import re

from replay.output.report_table import COLUMNS, columns_for, table_html
from replay.results.study_rows import StudyRow

DICTS = [
    {"sequence": "mug_lift", "object": "mug", "outcome": "lifted", "diagnosis": None, "rise": 0.051},
    {"sequence": "duck_lift", "object": "duck", "outcome": "not_lifted", "diagnosis": "no_contact", "rise": 0.0004},
    {"sequence": "bowl_lift", "object": "bowl", "outcome": "not_lifted", "diagnosis": "slid_out", "rise": 0.012},
]
ROWS = [StudyRow.from_dict(d) for d in DICTS]


def _link(r):
    return f"report_files/{r.name}.html"


def test_filters_count_each_value_and_the_outcome_is_said_as_the_reader_is_told():
    text = table_html(ROWS, _link)
    assert columns_for(ROWS) == COLUMNS and "envelope" not in text
    # the verdict's columns lead (none here: rows of a study before issue 56 say '-'), then the contact run's
    heads = re.findall(r"<th data-key='[^']+'>([^<]+)</th>", text)
    assert heads[:4] == ["recording", "verdict", "p_lift [95 %]", "reason"]
    verdict = re.search(r"<select data-filter='verdict' id='filter-verdict'>(.*?)</select>", text).group(1)
    assert re.findall(r"<option value='([^']*)'>([^<]*)<", verdict) == [("", "all"), ("-", "- (3)")]
    outcome = re.search(r"<select data-filter='outcome' id='filter-contact-run'>(.*?)</select>", text).group(1)
    # not_lifted is said "not lifted" whatever the diagnosis (replay.results.outcomes.words)
    assert sorted(re.findall(r"<option value='([^']*)'>", outcome)) == ["", "lifted", "not lifted"]
    assert "lifted (1)" in outcome and "not lifted (2)" in outcome
    cause = re.search(r"<select data-filter='diagnosis' id='filter-cause'>(.*?)</select>", text).group(1)
    assert "no_contact (1)" in cause and "slid_out (1)" in cause and "- (1)" in cause
    assert re.findall(r"<a href='(report_files/[^']+)'>", text) == [_link(r) for r in ROWS]
    assert "<td data-k='51.0'" not in text and "<td>51.0</td>" in text  # the sort key is the text where they agree


def test_the_diagnosis_column_and_cause_filter_say_they_are_the_contact_run_s():
    """The diagnosis and its filter come from the single contact run, not the sampled verdict: their header and label
    say so (the verdict's reason is its own column); the filter keeps its address (``#cause=``)."""
    text = table_html(ROWS, _link)
    head = re.search(r"<th data-key='diagnosis'>([^<]+)</th>", text).group(1)
    assert head == "contact run: diagnosis"
    label = re.search(r"<label>([^<]+) <select data-filter='diagnosis' id='filter-cause'>", text).group(1)
    assert label == "contact run: cause"
    heads = re.findall(r"<th data-key='[^']+'>([^<]+)</th>", text)
    assert "diagnosis" not in heads and "reason" in heads
    labels = re.findall(r"<label>([^<]+) <select", text)
    assert labels == ["verdict", "contact run", "object", "contact run: cause"]
