"""The study console (issue #56): the bar counts recordings (a recording is done with its last job), the lead
protocol's verdicts so far, a refused recording once; the notes every run makes are said once, after the bar,
never in the middle of it; the time left weighs the sampled jobs."""

from __future__ import annotations

import re

import pytest

from replay.protocol.protocols.base import ResultKey
from replay.results.records import RolloutRecord
from replay.study.console import StudyConsole
from replay.study.progress import SAMPLE_COST, Progress

NOTE = "capsule_hand.xml: 6 actuator(s) target a joint that is FREE in Newton and were not imported"
FLUTTER = "finger drive damping raised to its flutter bound"


def _rec(lifted: bool, warnings=()) -> RolloutRecord:
    r = RolloutRecord(outcome="lifted" if lifted else "not_lifted", lifted=lifted, run_warnings=list(warnings))
    r.scene.import_warnings = [NOTE]
    return r


def test_the_bar_counts_recordings_and_their_verdicts():
    con = StudyConsole("grab", enabled=False)
    jobs = [("a", 64), ("a", 0), ("a", 0), ("b", 64), ("b", 0), ("b", 0), ("c", 64)]
    con.start(jobs, done=1, lead="lift")
    assert con.total == 4 and con.done == 1  # 3 recordings to run, 1 done before
    con.result(ResultKey("a", "hug-oracle", "replay"), "ok", _rec(True), worlds=0)
    con.result(ResultKey("a", "lift"), "ok", _rec(True), worlds=64)
    # the verdict counted is the lead protocol's own (a single run, unsampled: its verdict is that run's); the bar
    # moves when the recording's last job ends
    assert con.done == 1 and dict(con.counts) == {"holds": 1}
    con.result(ResultKey("a", "hug-oracle", "authored"), "ok", _rec(False), worlds=0)
    assert con.done == 2 and dict(con.counts) == {"holds": 1}
    for k in (ResultKey("b", "lift"), ResultKey("b", "hug-oracle", "replay"), ResultKey("b", "hug-oracle", "authored")):
        con.result(k, "refused", "grab/recordings/b.pkl: fps: not a number", worlds=0)
    assert dict(con.counts) == {"holds": 1, "refused": 1} and con.done == 3  # refused once, not once per pair
    con.result(ResultKey("c", "lift"), "ok", _rec(False), worlds=64)
    assert dict(con.counts) == {"holds": 1, "refused": 1, "fails": 1} and con.done == 4


def test_notes_are_said_once_after_the_bar_never_in_it(capsys):
    con = StudyConsole("grab", enabled=True)
    con.start([("a", 0), ("b", 0), ("c", 0)], lead="lift")
    con.result(ResultKey("a", "lift"), "ok", _rec(True, [FLUTTER]), worlds=0)
    con.result(ResultKey("b", "lift"), "ok", _rec(False), worlds=0)
    con.result(ResultKey("c", "lift"), "ok", _rec(False, [FLUTTER]), worlds=0)
    during = capsys.readouterr().err
    assert NOTE not in during and "flutter" not in during  # nothing but the bar while it runs
    con.close()
    after = capsys.readouterr().err.splitlines()
    notes = [ln for ln in after if "FREE in Newton" in ln or "flutter" in ln]
    assert len(notes) == 2, after  # each once
    assert notes[0].endswith("(every recording)") and notes[1].endswith("(a, c)")


def test_notes_alike_but_past_the_shortened_text_are_said_once(capsys):
    """The hand-import note names each recording's own fitted-hand file at its end: shortened, one line."""
    con = StudyConsole("grab", enabled=True)
    con.start([("a", 0), ("b", 0)], lead="lift")
    tail = " " + "x" * 400
    con.note(NOTE + tail + "/cache/a/capsule_hand.xml", "a")
    con.note(NOTE + tail + "/cache/b/capsule_hand.xml", "b")
    con.close()
    notes = [ln for ln in capsys.readouterr().err.splitlines() if "FREE in Newton" in ln]
    assert len(notes) == 1 and notes[0].endswith("(every recording)"), notes


def test_the_time_left_weighs_the_sampled_jobs():
    """One recording of one single job, one of a sampled job (64 worlds) and a single one, one of two single jobs:
    once the first recording is done (its single job, 2 s), the estimate counts the sampled job as
    1 + SAMPLE_COST * 64 single jobs (the prior); once both kinds have finished, their own times."""
    p = Progress([("a", 0), ("b", 64), ("b", 0), ("c", 0), ("c", 0)])
    p.done("a", 0, 2.0)
    left = p.left_s(2.0)
    assert left == pytest.approx(2.0 * ((1 + SAMPLE_COST * 64) + 3) / 1.0)
    p.done("b", 64, 34.0)  # a job's cost a + b * worlds fitted: a = 2 s, b = 0.5 s per world
    assert p.left_s(36.0) == pytest.approx(36.0 * 3 * 2.0 / (2.0 + 34.0))


def test_no_time_left_is_said_until_a_recording_is_done():
    """The jobs that end first are often one recording's cheap ones (its contact run, 2 s) beside its sampled job:
    an estimate from them alone read hours; the bar says when it will have one instead, and its estimate once the
    recording's last job ends."""
    p = Progress([("a", 64), ("a", 0), ("b", 64), ("b", 0)])
    p.done("a", 0, 2.0)
    assert p.recordings_done == 0 and p.left_s(2.0) is None
    con = StudyConsole("grab", enabled=False)
    con.start([("a", 64), ("a", 0), ("b", 64), ("b", 0)], lead="lift")
    con.result(ResultKey("a", "hug-oracle", "replay"), "ok", _rec(True), worlds=0)
    assert con.bar.postfix == "ETA after the first recording" and con.done == 0
    con.result(ResultKey("a", "lift"), "ok", _rec(True), worlds=64)
    assert con.done == 1 and re.fullmatch(r"holds 1, about \d+(:\d\d)+ left", con.bar.postfix), con.bar.postfix
    con.result(ResultKey("b", "hug-oracle", "replay"), "ok", _rec(True), worlds=0)
    con.result(ResultKey("b", "lift"), "ok", _rec(True), worlds=64)
    assert con.bar.postfix == "holds 2"  # all done: no time left said


def test_a_jobs_logged_warnings_come_back_with_its_result_not_on_the_terminal(capsys):
    """replay.study.job.run_job keeps what a rollout warns (the package's log records and Python warnings) for the
    console's notes: the flutter bound's raised damping (replay.sim.silent_failures) is one."""
    import logging
    import warnings

    import numpy as np
    from scipy.spatial.transform import Rotation

    from replay import console
    from replay.config import ReplayConfig
    from replay.sim.silent_failures import flutter_margins

    q = np.tile(Rotation.from_rotvec([0, 0, 1.24]).as_quat(), (10, 15, 1))
    log = logging.getLogger("replay")
    handlers = log.handlers[:]
    with console.kept_warnings() as kept:
        recs = flutter_margins(q, np.full(45, 1e-3), ke=np.full(45, 30.0), damping=np.full(45, 0.01), kd=np.zeros(45),
                               config=ReplayConfig())
        warnings.warn("a library's note", UserWarning, stacklevel=1)
    raised = [r for r in recs if r["raised_to"] is not None]
    assert len(raised) == 15 and kept[0] == "UserWarning: a library's note"
    assert [x.split(":")[0] for x in kept[1:]] == [f"finger joint {r['joint'] + 1}" for r in raised]
    assert capsys.readouterr().err == "" and log.handlers == handlers  # said by the console after the bar only
