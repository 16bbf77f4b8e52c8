"""The report's hug-oracle section (replay.output.oracle_section): no data needed."""

from __future__ import annotations

from replay.output.oracle_section import oracle_section_html
from replay.results.records import StudyRecord


def test_section_lists_each_oracle_row_beside_the_lift_outcome():
    study = StudyRecord(
        rollouts=[{"sequence": "mug_lift", "outcome": "not_lifted"}],
        oracle_rollouts=[
            {
                "sequence": "mug_lift",
                "outcome": "lifted",
                "diagnosis": None,
                "rise": 0.4862,
                "contacts_force_at_lift": 4,
                "ablation_max_disp_mm": 0.01,
            }
        ],
        counts={
            "hug-oracle": {
                "rollouts": 1,
                "lifted": 1,
                "unstable": 0,
                "ablation_no_rise": 1,
                "ablation_run": 1,
                "ablation_max_disp_mm": 0.01,
            }
        },
    )
    h = oracle_section_html(study)
    assert "<td>mug_lift</td><td>lifted</td><td>-</td><td>486.2</td><td>4</td><td>0.01</td><td>not lifted</td>" in h
    assert "lifted off the table 1 of 1" in h
    assert oracle_section_html(StudyRecord()) == ""


def test_summary_of_a_study_without_a_lift_judged_protocol_points_at_its_sections():
    """A recorded-protocol study has no contact run judged on a lift: the summary says so and names its protocols; a
    hug-oracle study alone is led by the hug-oracle's own contact run (its verdicts, issue 56)."""
    from replay.output.report import _summary_html
    from replay.results.study_counts import Counts

    rec = StudyRecord(protocols=["recorded"], counts={"recorded": {"rollouts": 1}})
    h = _summary_html(rec, Counts.from_dict(rec.counts), {})
    assert "No lift-protocol rollouts in this study (protocols: recorded)" in h
    counts = {
        "protocol": "hug-oracle",
        "rollouts": 1,
        "hug-oracle": {"rollouts": 1, "lifted": 1, "ablation_run": 1, "ablation_clean": 1},
    }
    rec = StudyRecord(protocols=["hug-oracle"], counts=counts)
    h = _summary_html(rec, Counts.from_dict(rec.counts), {})
    assert "No lift-protocol rollouts" not in h and "<h3>The contact run</h3>" in h
    assert "contact ablation clean</span>: 1 of 1" in h
    rec = StudyRecord(protocols=["lift"], counts={"rollouts": 0})
    assert "contact ablation clean</span>: 0 of 0" in _summary_html(rec, Counts.from_dict(rec.counts), {})
