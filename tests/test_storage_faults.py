"""A full disk loses nothing, and an unreadable per-recording file on --resume is said (issue 30).

The disk is real: a small tmpfs mounted for the test (root only; where mount is not permitted,
e.g. an unprivileged sandbox, the tests that need it skip and say why). Filling it makes every
later write fail with ENOSPC, as a full output disk does.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from short_window import SHORT


@pytest.fixture
def tiny_fs(tmp_path):
    """A 4 MiB tmpfs at ``tmp_path / "fs"`` (unmounted afterwards)."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", f"tmpfs-{uuid.uuid4().hex[:8]}", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or r.returncode}): needs root in a "
                    "sandbox that permits mount")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(folder: Path) -> Path:
    """Write a filler file in ``folder`` until the file system is full (ENOSPC); returns it."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 16, 512, 1):  # big blocks, then the last bytes
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as e:
                    assert e.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler


def test_a_write_to_a_full_disk_is_one_line_and_keeps_the_old_file(tiny_fs):
    from replay.errors import StorageError
    from replay.fileio import atomic_write_text, storage_fault, write_or_stop

    target = tiny_fs / "out" / "study.json"
    atomic_write_text(target, '{"kept": true}')
    _fill(tiny_fs)
    with pytest.raises(StorageError) as exc:
        write_or_stop(lambda: atomic_write_text(target, "x" * 200_000))
    msg = str(exc.value)
    assert msg.startswith(f"{target}: cannot write: No space left on device (errno ENOSPC)") and "--resume" in msg
    assert "\n" not in msg
    assert json.loads(target.read_text()) == {"kept": True}  # the atomic write left the old file whole
    assert [p.name for p in target.parent.iterdir()] == ["study.json"]  # and no temporary file
    assert storage_fault(ValueError("x")) is None and storage_fault(FileNotFoundError(2, "gone")) is None


@pytest.mark.slow  # three short replays: ~2 min on the shared 2-core machine
@pytest.mark.needs_data
def test_a_study_on_a_full_disk_stops_with_one_line_and_resume_finishes_it(tiny_fs, mirror, tmp_path, capsys,
                                                                          monkeypatch):
    """cubesmall_lift replays; the disk then fills; mug_lift's writes fail: the study stops with one line
    (exit 1, no traceback), cubesmall's rollout is kept, and after freeing
    space --resume keeps it and replays mug_lift. A truncated rollout JSON on --resume is said and re-run."""
    import importlib.util

    from replay.study import job as job_mod

    spec = importlib.util.spec_from_file_location("run_study_script", Path(__file__).resolve().parents[1] / "scripts"
                                                  / "run_study.py")
    run_study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_study)

    data = tmp_path / "data" / "grab"
    (data / "recordings").mkdir(parents=True)
    for s in ("cubesmall_lift", "mug_lift"):
        os.symlink(mirror / "grab" / "recordings" / f"{s}.pkl", data / "recordings" / f"{s}.pkl")
    os.symlink(mirror / "grab" / "objects", data / "objects")
    cfg = tmp_path / "short.json"
    cfg.write_text(json.dumps(SHORT))
    out = tiny_fs / "study" / "study.json"
    argv = ["--dataset", "grab", "--objects", "cubesmall,mug", "--out", str(out), "--workers", "0",
            "--no-ablation", "--config", str(cfg), "--data", str(tmp_path / "data"), "--quiet"]
    real, calls = job_mod.run_job, []

    def run_then_fill(job):
        calls.append(job.sequence)
        if len(calls) == 2:  # the disk fills while the second recording runs
            _fill(tiny_fs)
        return real(job)

    monkeypatch.setattr(job_mod, "run_job", run_then_fill)
    assert run_study.main(argv) == 1
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "cannot write: No space left on device" in lines[0] and "--resume" in lines[0]
    assert str(tiny_fs) in lines[0]  # the file is named
    assert calls == ["cubesmall_lift", "mug_lift"]
    rdir = out.parent / "study_rollouts"
    kept = json.loads((rdir / "cubesmall_lift.json").read_text())
    assert kept["sequence"] == "cubesmall_lift" and not (rdir / "mug_lift.json").exists()

    (tiny_fs / "filler.bin").unlink()
    calls.clear()
    monkeypatch.setattr(job_mod, "run_job", lambda job: (calls.append(job.sequence), real(job))[1])
    assert run_study.main([*argv, "--resume"]) == 0
    capsys.readouterr()
    assert calls == ["mug_lift"]  # cubesmall kept from the first run
    assert json.loads((rdir / "cubesmall_lift.json").read_text()) == kept
    study = json.loads(out.read_text())
    assert {r["sequence"] for r in study["rollouts"]} == {"cubesmall_lift", "mug_lift"}

    path = rdir / "mug_lift.json"
    path.write_text(path.read_text()[:100])  # truncated (a crash mid-write of a non-atomic writer)
    calls.clear()
    argv_notes = [a for a in argv if a != "--quiet"]
    assert run_study.main([*argv_notes, "--resume"]) == 0
    out_err = capsys.readouterr()
    said = out_err.out + out_err.err
    assert f"resume: rerunning mug_lift: its rollout {path} cannot be read (not a readable JSON file" in said
    assert calls == ["mug_lift"] and json.loads(path.read_text())["sequence"] == "mug_lift"
