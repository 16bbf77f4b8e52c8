"""The report's hug-oracle section (replay.output.oracle_section): no data needed."""

from __future__ import annotations

from replay.output.oracle_section import oracle_section_html
from replay.results.records import StudyRecord


def test_section_lists_each_oracle_row_beside_the_lift_outcome():
    study = StudyRecord(rollouts=[{"sequence": "mug_lift", "outcome": "not_lifted"}],
                        oracle_rollouts=[{"sequence": "mug_lift", "outcome": "lifted", "diagnosis": None, "rise": 0.4862,
                                          "contacts_force_at_lift": 4, "ablation_max_disp_mm": 0.01}],
                        counts={"hug-oracle": {"rollouts": 1, "lifted": 1, "unstable": 0, "ablation_no_rise": 1,
                                               "ablation_run": 1, "ablation_max_disp_mm": 0.01}})
    h = oracle_section_html(study)
    assert "<td>mug_lift</td><td>lifted</td><td>-</td><td>486.2</td><td>4</td><td>0.01</td><td>not lifted</td>" in h
    assert "lifted off the table 1 of 1" in h
    assert oracle_section_html(StudyRecord()) == ""


def test_summary_of_an_oracle_only_study_points_at_its_section():
    from replay.output.report import _summary_html

    h = _summary_html(StudyRecord(protocols=["hug-oracle"], counts={"hug-oracle": {"rollouts": 1}}), {})
    assert "No lift-protocol rollouts" in h and "hug-oracle" in h and "recordings</span>: 0" not in h
    assert "recordings" in _summary_html(StudyRecord(protocols=["lift"], counts={"rollouts": 0}), {})
