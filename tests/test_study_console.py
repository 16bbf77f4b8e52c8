"""The study console's words: the progress bar counts what the summary line counts."""

from __future__ import annotations


def test_the_bar_counts_dropped_as_not_lifted_like_the_summary():
    from replay.study.console import StudyConsole

    con = StudyConsole("grab", total=3, done=0, enabled=False)
    for seq, outcome in (("a", "dropped"), ("b", "lifted"), ("c", "dropped")):
        con.result(seq, "ok", {"outcome": outcome})
    con.result("d", "refused", "bad input")
    assert dict(con.counts) == {"not lifted": 2, "lifted": 1, "refused": 1}
