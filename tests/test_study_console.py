"""The study console's words: the progress bar counts what the summary line counts."""

from __future__ import annotations


def test_the_bar_counts_not_lifted_in_the_summary_s_words():
    from replay.results.records import RolloutRecord
    from replay.study.console import StudyConsole

    con = StudyConsole("grab", total=3, done=0, enabled=False)
    for seq, outcome in (("a", "not_lifted"), ("b", "lifted"), ("c", "not_lifted")):
        con.result(seq, "ok", RolloutRecord(outcome=outcome))
    con.result("d", "refused", "bad input")
    assert dict(con.counts) == {"not lifted": 2, "lifted": 1, "refused": 1}
