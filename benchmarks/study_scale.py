"""The study at dataset scale (issue 41): studies of 30, 300 and 1,500 recordings on the process pool.

    python benchmarks/study_scale.py --sizes 30,300 --workers 2 --json scale.json
    python benchmarks/study_scale.py                      # 30, 300, 1500 (~1 h on 2 cores)

The recordings are the 30 GRAB lifts of the mirror (``REPLAY_MIRROR``) and, past 30, distinct
variants made of them here (:func:`make_variant`): the hand moved by a small wrist offset (at
most 3 mm) and the whole recorded scene above the table (hand and object) turned about the
vertical through the object's start by up to +-20 deg; each is its own recording file (its own
SHA-256) in a temporary folder outside the repository, laid out as the mirror (its objects a
link to the mirror's). Per size, one study (default config, ``scripts/run_study.py`` in a child
process: the driver) and then its report and montage in this process:

* ``wall_s``: the study's wall time; ``driver_cpu_s`` / ``driver_peak_rss_mb``: the driver's own
  CPU time (``getrusage(RUSAGE_SELF)``) and peak resident memory (``VmHWM`` of ``/proc/self/status``
  at its end: ``ru_maxrss`` would not do, Linux carries a parent's peak into a child across fork and
  exec, and this process's report and montage peak at ~1.4 GB);
* every study starts with an empty cache of its own (``REPLAY_CACHE``: landmark IK, asset figures),
  as a study of new recordings does: each size pays its first-time costs alike;
* ``overhead_per_recording_s``: ``(wall_s x workers - the jobs' own time) / recordings``, the
  jobs' own time being each rollout's ``wall_s_total`` (its records' ``job_s``): what the
  orchestration (worker start and imports, transfer, the driver's bookkeeping, idle workers
  at the end) costs a recording;
* ``bytes_per_recording``: bytes written to files / recordings: the driver's (every atomic write
  and record append it makes, counted as they are made: summaries, CSV, records) plus the result
  files the workers wrote once each (their sizes); ``driver_wchar_per_recording``: all the
  driver's ``write`` calls (``wchar`` of ``/proc/self/io``: also its pipes to the workers and
  its console's progress bar);
* ``report_s``, ``report_mb`` (the main page), ``report_files_mb``, ``report_load_s`` (headless
  Chromium's load event, ``performance.now()`` at ``load``, the table's script done);
* ``montage_s``: ``render_montage`` with its defaults (at most 24 tiles, MONTAGE_MAX_CLIPS).

And once, ``stepping_fraction``: the share of a worker's CPU time spent stepping physics
(``c_loop.run_frames``, ``ctrl_steps``, ``mujoco.mj_step``) over ``run_job`` of a few recordings (each
with its ablation) in one warm process: their stepping's CPU time under cProfile over their CPU time unprofiled; and
``stepping_fraction_placed``, the same over a variant of each of those recordings run after it (its
object's scene kept and placed: :mod:`replay.sim.scene_cache`), a worker's steady state where objects
recur, as in the 300 and 1,500 studies here (:func:`stepping_fraction`). Goals (issue 41): overhead
per recording at 1,500 at most 1.2x that at 30; bytes per recording flat; the driver under 1 GB;
(issue 47) the stepping share at least 70 %.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pickle
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from replay.output.results_summary import head_commit

ROOT = Path(__file__).resolve().parents[1]
#: the functions whose time is physics stepping, by name as cProfile lists them (compiled numba
#: functions and MuJoCo's C calls: nothing below them is listed, so no time is counted twice)
STEPPING = ("run_frames", "ctrl_steps", "mj_step")
#: the recordings profiled for ``stepping_fraction`` (as issue 41's profile)
PROFILED = ("mug_lift", "stapler_lift", "banana_lift")


def make_variant(src: dict, k: int) -> dict:
    """Variant ``k`` (1, 2, ...) of a GRAB recording's pickle dict: the hand moved by a wrist
    offset of at most 3 mm, then hand and object turned about the vertical through the object's
    first position by ``yaw`` in [-20, 20] deg (the table as recorded). Quaternions wxyz, as the file."""
    rng = np.random.default_rng(k)
    off = rng.uniform(-1.0, 1.0, 3)
    off *= 0.003 * rng.uniform(0.3, 1.0) / max(np.linalg.norm(off), 1e-9)  # m
    yaw = rng.uniform(-20.0, 20.0)
    rot = Rotation.from_euler("z", yaw, degrees=True)
    out = pickle.loads(pickle.dumps(src))
    pivot = np.asarray(src["object"]["loc"][0], float) * [1, 1, 0]

    def turn_pts(p):
        return rot.apply(np.asarray(p, float).reshape(-1, 3) - pivot).reshape(np.shape(p)) + pivot

    def turn_q(q_wxyz):
        q = np.asarray(q_wxyz, float)
        r = rot * Rotation.from_quat(q[..., [1, 2, 3, 0]])
        x = r.as_quat()
        return x[..., [3, 0, 1, 2]]

    hand = out["hand"]
    hand["joints_target"] = turn_pts(np.asarray(hand["joints_target"]) + off)
    hand["wrist_loc"] = np.asarray(hand["joints_target"])[:, 0].copy()
    hand["wrist_rot"] = turn_q(hand["wrist_rot"])
    out["object"]["loc"] = turn_pts(out["object"]["loc"])
    out["object"]["rot"] = turn_q(out["object"]["rot"])
    return out


def make_dataset(mirror: Path, n: int, dest: Path) -> list[str]:
    """``dest/grab`` with ``n`` recordings: the mirror's lifts, then variants of each in turn
    (``<object>v<k>_lift``). Returns their names."""
    src_dir = mirror / "grab" / "recordings"
    rec = dest / "grab" / "recordings"
    rec.mkdir(parents=True, exist_ok=True)
    (dest / "grab" / "objects").symlink_to(mirror / "grab" / "objects")
    lifts = sorted(p.stem for p in src_dir.glob("*_lift.pkl"))
    names = []
    for i in range(n):
        base = lifts[i % len(lifts)]
        k = i // len(lifts)
        if k == 0:
            (rec / f"{base}.pkl").symlink_to(src_dir / f"{base}.pkl")
            names.append(base)
            continue
        with open(src_dir / f"{base}.pkl", "rb") as f:
            data = pickle.load(f)
        name = f"{base[:-5]}v{k:03d}_lift"
        with open(rec / f"{name}.pkl", "wb") as f:
            pickle.dump(make_variant(data, k * 1000 + i), f)
        names.append(name)
    return names


DRIVER = """
import json, resource, runpy, sys
import replay.fileio as fileio, replay.results.study_log as study_log
result = sys.argv[2]
sys.argv = ["run_study.py", *json.loads(sys.argv[1])]
files = {"bytes": 0}
atomic, append = fileio.atomic_write_bytes, study_log.append_record
def counted_atomic(path, data):  # every summary, CSV and JSON the driver writes goes through here
    files["bytes"] += len(data)
    return atomic(path, data)
def counted_append(path, lines):
    files["bytes"] += sum(len(json.dumps(ln, separators=(",", ":"), default=str)) + 1 for ln in lines)
    return append(path, lines)
fileio.atomic_write_bytes, study_log.append_record = counted_atomic, counted_append
rc = 0
try:
    runpy.run_path("scripts/run_study.py", run_name="__main__")
except SystemExit as e:
    rc = e.code or 0
r = resource.getrusage(resource.RUSAGE_SELF)
io = dict(ln.split(": ") for ln in open("/proc/self/io").read().split("\\n") if ln)
status = dict(ln.split(":", 1) for ln in open("/proc/self/status").read().splitlines() if ":" in ln)
peak_mb = int(status["VmHWM"].split()[0]) / 1024  # this process's own peak (ru_maxrss holds the parent's too)
json.dump({"rc": rc, "cpu_s": r.ru_utime + r.ru_stime, "peak_rss_mb": peak_mb,
           "wchar": int(io["wchar"]), "file_bytes": files["bytes"]}, open(result, "w"))
"""


def run_driver(data: Path, out: Path, workers: int) -> dict:
    """The study in a child process (the driver); its wall time and the driver's own figures."""
    args = ["--dataset", "grab", "--data", str(data), "--out", str(out / "study.json"), "--workers", str(workers),
            "--quiet"]
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(args), str(out.parent / "driver.json")], cwd=ROOT,
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), REPLAY_CACHE=str(out.parent / f"cache_{out.name}")))
    wall = time.perf_counter() - t0
    try:
        d = json.loads((out.parent / "driver.json").read_text())
    except OSError:
        d = {"rc": r.returncode}
    if r.returncode or d["rc"] not in (0, None):
        raise RuntimeError(f"run_study.py exited {d['rc']}: {(r.stdout + r.stderr)[-1500:]}")
    return dict(d, wall_s=wall)


def chromium_load_s(page: Path) -> float | None:
    """Headless Chromium's load of ``page``, s (the page's own ``data-load-ms``), or None without Chromium."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        return None
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                        "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=300)
    m = re.search(r'data-load-ms="(\d+)"', r.stdout)
    return int(m.group(1)) / 1000.0 if m else None


def _tree_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.rglob("*") if p.is_file())


def one_size(mirror: Path, n: int, workers: int, tmp: Path) -> dict:
    """One study of ``n`` recordings, its report and montage: the figures of the module doc."""
    from replay.output.render.montage import render_montage
    from replay.output.report import build_report
    from replay.results.study_log import read_records, records_path

    data, out = tmp / f"data{n}", tmp / f"study{n}"
    make_dataset(mirror, n, data)
    d = run_driver(data, out, workers)
    study = out / "study.json"
    recs = read_records(records_path(study))
    ok = [r for r in recs if r.get("status") == "ok"]
    job_s = sum(float(r.get("job_s") or 0.0) for r in ok)
    files = _tree_bytes(out / "study_rollouts")
    t0 = time.perf_counter()
    build_report(study, out / "report.html")
    report_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    mont = render_montage(study, out / "montage.mp4")
    montage_s = time.perf_counter() - t0
    counts = json.loads(study.read_text())["counts"]
    return {"recordings": n, "rollouts_ok": len(ok), "failed": len(recs) - len(ok), "lifted": counts.get("lifted"),
            "workers": workers, "wall_s": d["wall_s"], "driver_cpu_s": d["cpu_s"],
            "driver_peak_rss_mb": d["peak_rss_mb"], "jobs_s": job_s,
            "overhead_per_recording_s": (d["wall_s"] * workers - job_s) / n,
            "bytes_per_recording": (d["file_bytes"] + files) / n, "driver_bytes_per_recording": d["file_bytes"] / n,
            "driver_wchar_per_recording": d["wchar"] / n,
            "report_s": report_s, "report_mb": (out / "report.html").stat().st_size / 1e6,
            "report_files_mb": _tree_bytes(out / "report_files") / 1e6,
            "report_load_s": chromium_load_s(out / "report.html"), "montage_s": montage_s,
            "montage_tiles": n - mont.left_out, "montage_size": list(mont.size)}


def stepping_fraction(mirror: Path, tmp: Path) -> dict:
    """The stepping share of ``run_job`` (with ablation) in this process, warm (every job run once first:
    imports, numba caches, the hand, the landmark IK on disk): their CPU time unprofiled, then the
    stepping functions' CPU time under cProfile (compiled calls, which the profiler does not slow), for

    * :data:`PROFILED`, each the first recording of its object in the worker (its scene compiled):
      ``{"stepping_fraction", "profiled_s" (the unprofiled total), "stepping_s"}``;
    * then a variant of each (:func:`make_variant`, ``<object>v001_lift``), its object's scene kept and
      placed (:mod:`replay.sim.scene_cache`): the steady state of a study whose objects recur (GRAB:
      1,335 sequences of 51 objects; HUG-Bench: 900 grasps of 90): ``{"stepping_fraction_placed",
      "profiled_placed_s", "stepping_placed_s"}``.
    """
    from replay.config import ReplayConfig
    from replay.sim import scene_cache
    from replay.sim.hand_assets import resolve_hand_variant
    from replay.study.job import Job, run_job

    cfg = resolve_hand_variant(ReplayConfig(), "grab").to_dict()
    cfg.pop("dt", None)
    data = tmp / "profile_data"
    make_dataset(mirror, 2 * len(list((mirror / "grab" / "recordings").glob("*_lift.pkl"))), data)
    rdir = tmp / "profile" / "study_rollouts"
    rdir.mkdir(parents=True)
    firsts = list(PROFILED)
    placed = [f"{seq[:-5]}v001_lift" for seq in PROFILED]

    def job(seq):
        return Job("grab", seq, str(data), cfg, str(mirror / "manosim"), str(rdir.parent), str(rdir), True,
                   quiet=True)

    def one_pass(prof_first=None, prof_placed=None) -> tuple[float, float]:
        """Each object's first recording then its variant; the CPU time of each kind (profilers optional)."""
        scene_cache.clear()
        spent = [0.0, 0.0]
        for a, b in zip(firsts, placed):
            for i, (seq, prof) in enumerate(((a, prof_first), (b, prof_placed))):
                t0 = time.process_time()
                if prof is not None:
                    prof.enable()
                run_job(job(seq))
                if prof is not None:
                    prof.disable()
                spent[i] += time.process_time() - t0
        return spent[0], spent[1]

    run_job(job("cubesmall_lift"))  # imports, numba caches, the hand: not a rollout's time
    one_pass()  # every recording's landmark IK and asset figures on disk, as in a study's second run
    total, total_placed = one_pass()  # unprofiled: cProfile slows the Python side, not the compiled stepping
    profs = [cProfile.Profile(time.process_time), cProfile.Profile(time.process_time)]  # CPU time, as the totals
    one_pass(*profs)
    out = {}
    for prof, tot, suffix, seqs in ((profs[0], total, "", firsts), (profs[1], total_placed, "_placed", placed)):
        st = pstats.Stats(prof)
        hits = {f"{Path(fname).name}:{func}": v[3] for (fname, _, func), v in st.stats.items()
                if any(re.search(rf"\b{name}\b", func) for name in STEPPING)}
        step = sum(hits.values())
        out.update({f"stepping_fraction{suffix}": step / tot, f"profiled{suffix}_s": tot, f"stepping{suffix}_s": step,
                    f"profiled{suffix}": seqs, f"stepping_entries{suffix}": {k: round(v, 3) for k, v in hits.items()}})
    return out


def table(rows: list[dict]) -> str:
    """The scale table (Markdown)."""
    cols = (("recordings", "{:d}"), ("wall_s", "{:.1f}"), ("driver_cpu_s", "{:.1f}"), ("driver_peak_rss_mb", "{:.0f}"),
            ("overhead_per_recording_s", "{:.3f}"), ("bytes_per_recording", "{:.0f}"),
            ("driver_bytes_per_recording", "{:.0f}"), ("report_s", "{:.1f}"), ("report_mb", "{:.2f}"),
            ("report_load_s", "{:.2f}"), ("montage_s", "{:.1f}"), ("montage_tiles", "{:d}"))
    lines = ["| " + " | ".join(c for c, _ in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join("-" if r.get(c) is None else f.format(r[c]) for c, f in cols) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="30,300,1500", help="recordings per study, comma-separated")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json", type=Path, default=None, help="also write every figure here")
    p.add_argument("--no-profile", action="store_true", help="skip the stepping profile")
    p.add_argument("--keep", type=Path, default=None, help="keep the studies here (default: a temporary folder)")
    a = p.parse_args(argv)
    mirror = Path(os.environ.get("REPLAY_MIRROR", ROOT.parent / "shared" / "datasets")).resolve()
    if not (mirror / "grab" / "recordings").is_dir() or not (mirror / "manosim").is_dir():
        print(f"study_scale.py: error: no offline mirror with grab/recordings and manosim at {mirror}: set "
              "REPLAY_MIRROR to one (e.g. REPLAY_MIRROR=../shared/datasets)", file=sys.stderr)
        return 2
    os.environ["REPLAY_MIRROR"] = str(mirror)  # every study's driver reads manosim from it
    sizes = [int(x) for x in a.sizes.split(",") if x.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="study_scale_")) if a.keep is None else a.keep
    tmp.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n in sizes:
            rows.append(one_size(mirror, n, a.workers, tmp))
            print(json.dumps(rows[-1]), flush=True)
        prof = {} if a.no_profile else stepping_fraction(mirror, tmp)
    except RuntimeError as e:  # a study that exited non-zero: its last lines, in one message
        print(f"study_scale.py: error: {e}", file=sys.stderr)
        return 1
    finally:
        if a.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    print(table(rows))
    if prof:
        for suffix, what in (("", "first of their object"), ("_placed", "another of the object, scene kept")):
            print(f"stepping_fraction{suffix} {prof[f'stepping_fraction{suffix}']:.3f} "
                  f"({prof[f'stepping{suffix}_s']:.2f} of {prof[f'profiled{suffix}_s']:.2f} s CPU over "
                  f"{', '.join(prof[f'profiled{suffix}'])}: {what})")
    if len(rows) > 1:
        print(f"overhead per recording at {rows[-1]['recordings']} / at {rows[0]['recordings']}: "
              f"{rows[-1]['overhead_per_recording_s'] / rows[0]['overhead_per_recording_s']:.2f}x (goal <= 1.2x)")
    if a.json:  # with its provenance: docs/engine.md's scale block is made from this file (scripts/tables.py)
        made_by = "python benchmarks/study_scale.py " + " ".join(argv if argv is not None else sys.argv[1:])
        a.json.write_text(json.dumps({"source": "study_scale", "made_by": made_by, "commit": head_commit(ROOT),
                                      "date": time.strftime("%Y-%m-%d", time.gmtime()), "sizes": rows, **prof,
                                      "workers": a.workers, "cpus": os.cpu_count()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
