"""The study's append-only records (issue 41): a line per finished job, the summary remade at
intervals (never per job), and ``--resume`` from the records after a kill at any point
(a torn last line, a summary older than the records, a rollout finished after the last record)."""

from __future__ import annotations

import json

import pytest
from test_study import SHORT

from replay.config import ReplayConfig
from replay.results.convert import ResultsFormatError
from replay.results.study_log import append_record, read_records, records_path, repair_tail
from replay.study import job as job_mod
from replay.study import runner as runner_mod
from replay.study.runner import run_study
from replay.study.study_records import SUMMARY_EVERY_MIN, summary_due

OBJECTS = ["cubesmall", "cylindersmall", "mug"]


def test_torn_last_line_is_dropped_and_cut_before_the_next_append(tmp_path):
    p = tmp_path / "study.records.jsonl"
    append_record(p, [{"key": "a", "status": "ok"}, {"key": "b", "status": "refused", "reason": "x"}])
    whole = p.read_bytes()
    p.write_bytes(whole + b'{"key": "c", "sta')  # a kill mid-append
    assert [r["key"] for r in read_records(p)] == ["a", "b"]
    assert repair_tail(p) == len(b'{"key": "c", "sta') and p.read_bytes() == whole
    append_record(p, [{"key": "c", "status": "ok", "wall_s": float("nan")}])
    recs = read_records(p)
    assert [r["key"] for r in recs] == ["a", "b", "c"] and recs[-1]["wall_s"] is None
    # a damaged line before the last is not silently skipped: the file and the line are named
    p.write_bytes(whole.replace(b'{"key":"a"', b'{"key"a'))
    with pytest.raises(ResultsFormatError, match=r"study.records.jsonl.*line 1"):
        read_records(p)
    assert read_records(tmp_path / "none.jsonl") == [] and repair_tail(tmp_path / "none.jsonl") == 0


def test_summaries_per_study_are_about_ten_whatever_its_size():
    """A summary costs in proportion to the study: ~10 of them keep its writing linear."""
    for total, most in ((3, 1), (30, 2), (300, 12), (1500, 10)):
        n_new = made = 0
        for _ in range(total):
            n_new += 1
            if summary_due(n_new, 1.0, total):
                made, n_new = made + 1, 0
        assert made <= most, (total, made)
    assert summary_due(1, 301.0, 1500) and not summary_due(0, 999.0, 10) and summary_due(SUMMARY_EVERY_MIN, 0.0, 3)


@pytest.mark.needs_data
@pytest.mark.slow  # three short replays and two partial reruns in this process: ~1 min on 2 shared cores
def test_records_then_resume_after_a_kill_at_any_point(tmp_path, mirror, monkeypatch):
    cfg = ReplayConfig(**SHORT)
    out = tmp_path / "study.json"
    writes, real_write = [], runner_mod.write_study
    monkeypatch.setattr(runner_mod, "write_study", lambda *a, **k: (writes.append(1), real_write(*a, **k))[1])
    calls, real_job = [], job_mod.run_job
    monkeypatch.setattr(job_mod, "run_job", lambda j: (calls.append(j.sequence), real_job(j))[1])
    ref = run_study("grab", out, cfg, objects=OBJECTS, workers=0, ablation=False, progress=False, data_dir=mirror)
    seqs = [f"{o}_lift" for o in OBJECTS]
    assert calls == seqs and len(writes) == 2  # the summary at the start and the end, not once per rollout
    log = records_path(out)
    recs = read_records(log)
    assert [r["key"] for r in recs] == seqs and {r["status"] for r in recs} == {"ok"}
    for r in recs:  # each line names its rollout JSON, written before it, and the job's own time
        doc = json.loads((tmp_path / r["json"]).read_text())
        assert doc["sequence"] == r["sequence"] and r["job_s"] == pytest.approx(doc["timing"]["wall_s_total"])
    assert [r["wall_s"] for r in recs] == sorted(r["wall_s"] for r in recs)
    assert recs[-1]["wall_s"] <= ref["counts"]["wall_s"]

    # killed while the third job ran: its rollout not written, its record not appended, the
    # second record torn mid-line, and the summary from the start of the run (no rollouts)
    lines = log.read_bytes().split(b"\n")
    log.write_bytes(lines[0] + b"\n" + lines[1][:25])
    (tmp_path / recs[2]["json"]).unlink()
    (tmp_path / "study_rollouts" / f"{seqs[2]}.npz").unlink()
    out.write_text(json.dumps(dict(ref, rollouts=[], counts=dict(ref["counts"], wall_s=0.5))))
    calls.clear()
    again = run_study("grab", out, cfg, objects=OBJECTS, workers=0, ablation=False, resume=True, progress=False,
                      data_dir=mirror)
    # only the running job is lost: the second, torn in the records but whole on disk, is kept
    assert calls == [seqs[2]]
    assert [r["sequence"] for r in again["rollouts"]] == seqs and again["counts"]["resumed"] == 2
    assert [r["outcome"] for r in again["rollouts"]] == [r["outcome"] for r in ref["rollouts"]]
    # the wall time carried over is the records' (the summary's 0.5 s was older)
    assert again["counts"]["wall_s"] >= recs[0]["wall_s"] + again["counts"]["wall_s_this_run"] - 1e-6
    recs2 = read_records(log)
    assert [r["key"] for r in recs2] == seqs  # the torn line cut; the kept one re-recorded, the rerun appended

    # a job whose latest record is a failure is rerun even where an older rollout of it survives
    append_record(log, [{"key": seqs[0], "status": "error", "reason": "worker lost", "config_hash": recs[0]["config_hash"],
                         "wall_s": 1.0}])
    calls.clear()
    run_study("grab", out, cfg, objects=OBJECTS, workers=0, ablation=False, resume=True, progress=False,
              data_dir=mirror)
    assert calls == [seqs[0]]
    # a new study (no --resume, no subset merged) at the same place starts its own records
    run_study("grab", out, cfg, sequences=seqs[1:2], workers=0, ablation=False, progress=False, data_dir=mirror)
    assert [r["key"] for r in read_records(log)] == seqs[1:2]


@pytest.mark.needs_data
@pytest.mark.slow  # one short replay, then 1,830 instant jobs through the real runner: ~1.5 min on 2 shared cores
def test_bytes_written_per_recording_stay_flat_from_30_to_1500(tmp_path, mirror, monkeypatch):
    """The study's own writing (summaries, CSV, records) per recording at 30, 300 and 1,500 jobs:
    each job is a real rollout (one short replay, copied under each name) handed back at once, so
    only the runner's bookkeeping is measured. Rewriting the study per job (before issue 41) made it
    grow with the study: ~0.5 MB a job at 300."""
    from replay.results import files as files_mod

    real = run_study("grab", tmp_path / "real" / "study.json", ReplayConfig(**SHORT), objects=["cubesmall"],
                     workers=0, ablation=False, progress=False, data_dir=mirror)
    doc = json.loads((tmp_path / "real" / real["rollouts"][0]["json"]).read_text())
    written = []
    real_atomic = files_mod.atomic_write_text
    monkeypatch.setattr(files_mod, "atomic_write_text",
                        lambda p, text: (written.append(len(text.encode())), real_atomic(p, text))[1])
    per = {}
    for n in (30, 300, 1500):
        names = [f"cubesmallv{k:04d}_lift" for k in range(n)]
        monkeypatch.setattr(runner_mod, "list_sequences", lambda *a, names=names: list(names))
        monkeypatch.setattr(runner_mod, "resolve_sequences", lambda ds, all_seqs, *a, **k: list(all_seqs))
        monkeypatch.setattr(job_mod, "run_job", lambda j: dict(doc, sequence=j.sequence))
        written.clear()
        out = tmp_path / f"s{n}" / "study.json"
        study = run_study("grab", out, ReplayConfig(**SHORT), workers=0, ablation=False, progress=False,
                          data_dir=mirror)
        assert study["counts"]["rollouts"] == n and len(read_records(records_path(out))) == n
        per[n] = (sum(written) + records_path(out).stat().st_size) / n
    # measured here: 3.7, 11.0, 10.9 kB a recording (a summary row ~0.9 kB, remade ~12 times in half a
    # study's rows on average; a record 0.2 kB); at 30 the summary is remade once midway (every 25), from
    # 300 on every tenth of the study. A summary per job would be ~n/2 rows a job: ~140 kB at 300, 0.7 MB at 1,500
    assert per[1500] <= 1.1 * per[300] and per[300] < 20e3 and per[30] < per[300], per
