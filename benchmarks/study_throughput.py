"""The study's throughput in two (or more) checkouts, run in turn on the same machine.

    python benchmarks/study_throughput.py --tree before=/tmp/old-checkout --tree after=. --rounds 3 \
        -- --dataset grab --workers 2

For each round, each ``--tree NAME=PATH`` in the order given runs ``scripts/run_study.py`` with the
arguments after ``--`` in its own folder (``PYTHONPATH`` set to it, so the checkout's own ``replay``
runs; its landmark-IK cache is its own ``data/cache``), writing to a temporary folder, and the
command's wall time, its processes' CPU time (user + system of the study and its workers, from
``resource.getrusage(RUSAGE_CHILDREN)``) and the rollouts the study ran (its recordings plus their
ablations, ``counts``) are recorded. Running the trees in turn lets each see the same machine;
one warm-up run per tree first (``--no-warmup`` to skip) fills its IK cache, its asset-figure cache
(:mod:`replay.data.asset_memo`) and its numba cache,
which would otherwise be timed in the first round. It prints one line per run and, per tree, the
best and median rollouts per minute of wall time, the median CPU time and the median of the jobs'
own time (the sum of the rollouts' ``wall_s_total``: the study less its workers' start and the
driver), each also as a ratio to the first tree's; ``--json`` writes every figure. ``--envelope-too`` also runs each tree with
``--envelope`` (the verdict envelope, issue #39) as ``<name>+envelope``, whose rollouts count the
envelope's settings too (``counts["envelope"]["rollouts"]``; a tree where ``--envelope`` is the sampled verdict's
alias, issue #46: ``counts["p_lift_rollouts"]``): the envelope's cost in rollouts/min
and in wall time per recording. The trees' results are not compared here:
``benchmarks/compare_studies.py`` does that (``--keep DIR`` keeps each run's study folder for it).

A relative ``REPLAY_MIRROR`` and a relative ``--data`` among the study arguments are made absolute
first (against the folder this command runs in), so every tree reads the same files. Exit status: 0
done, 1 a study exited non-zero (its last lines printed), 2 bad arguments, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replay.cli import run
from replay.errors import UsageError
from replay.output.results_summary import head_commit


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(tree: Path, study_args: list[str], out: Path) -> dict:
    """One study in ``tree``: ``{"wall_s", "cpu_s", "rollouts"}`` (rollouts: its recordings' replays
    plus ablations, from the study JSON's ``counts``).

    Raises:
        RuntimeError: the study exited non-zero (its last output lines in the message).
    """
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, "scripts/run_study.py", *study_args, "--out", str(out / "study.json")]
    c0, t0 = _cpu_children(), time.perf_counter()
    r = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, _cpu_children() - c0
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).splitlines()[-5:])
        raise RuntimeError(f"{tree}: run_study.py exited {r.returncode}:\n{tail}")
    counts = json.loads((out / "study.json").read_text())["counts"]
    # each protocol's counts once: under its name where the study has them (the top level repeats the first's)
    parts = [counts[p] for p in ("lift", "hug-oracle") if isinstance(counts.get(p), dict)] if "protocol" in counts \
        else [counts, counts.get("hug-oracle") or {}]
    n = sum(int(c.get("rollouts") or 0) + int(c.get("ablation_run") or 0)
            + int((c.get("envelope") or {}).get("rollouts") or 0) + int(c.get("p_lift_rollouts") or 0) for c in parts)
    jobs = 0.0  # the jobs' own time (each rollout's wall_s_total): the study less its workers' start
    for f in (out / "study_rollouts").glob("*.json"):
        try:
            d = json.loads(f.read_text())  # results format 6 nests it in `timing`; older checkouts' flat
            jobs += float(d.get("wall_s_total") or (d.get("timing") or {}).get("wall_s_total") or 0.0)
        except (OSError, ValueError):
            pass
    return {"wall_s": wall, "cpu_s": cpu, "rollouts": n, "recordings": int(counts["rollouts"]) or
            int((counts.get("hug-oracle") or {}).get("rollouts") or 0), "jobs_s": jobs}


def summarize(runs: dict[str, list[dict]]) -> dict:
    """Per tree: best and median rollouts per minute of wall time, median CPU s, and the ratios of
    the best and median rates to the first tree's (CPU: first tree's over this one's)."""
    out, first = {}, None
    for name, rs in runs.items():
        rates = [60.0 * r["rollouts"] / r["wall_s"] for r in rs]
        s = {"best_per_min": max(rates), "median_per_min": statistics.median(rates),
             "median_cpu_s": statistics.median(r["cpu_s"] for r in rs), "runs": len(rs),
             "median_jobs_s": statistics.median(r.get("jobs_s") or 0.0 for r in rs)}
        first = first or s
        s["best_ratio"] = s["best_per_min"] / first["best_per_min"]
        s["median_ratio"] = s["median_per_min"] / first["median_per_min"]
        s["cpu_ratio"] = first["median_cpu_s"] / s["median_cpu_s"]
        s["jobs_ratio"] = first["median_jobs_s"] / s["median_jobs_s"] if s["median_jobs_s"] else None
        out[name] = s
    return out


def _trees(specs: list[str]) -> dict[str, Path]:
    """``NAME=PATH`` pairs as ``{name: resolved checkout}``.

    Raises:
        UsageError: a pair without a name, or a path holding no ``scripts/run_study.py``.
    """
    trees = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        root = Path(path).expanduser().resolve()
        if not sep or not name or not (root / "scripts" / "run_study.py").is_file():
            raise UsageError("--tree", f"{spec!r}: give NAME=PATH of a checkout holding scripts/run_study.py")
        trees[name] = root
    return trees


def _portable(root: Path, commit: str) -> str:
    """A checkout as the results file records it: its path relative to this folder when it lies below
    it (``.``), else ``<checkout at COMMIT>`` (no machine's path in a checked-in file)."""
    try:
        return str(root.relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return f"<checkout at {commit}>"


def _recorded_args(argv: list[str], where: dict[str, str]) -> list[str]:
    """``argv`` with each ``--tree NAME=PATH`` written as ``NAME=`` its :func:`_portable` form."""
    out = []
    for i, x in enumerate(argv):
        name = x.partition("=")[0]
        out.append(f"{name}={where[name]}" if i and argv[i - 1] == "--tree" and name in where else x)
    return out


def _absolute_data(study_args: list[str]) -> list[str]:
    """The study arguments with a relative ``--data`` made absolute against this folder (each study runs
    in its own checkout's folder)."""
    out = list(study_args)
    for i, x in enumerate(out):
        if x == "--data" and i + 1 < len(out):
            out[i + 1] = str(Path(out[i + 1]).expanduser().resolve())
        elif x.startswith("--data="):
            out[i] = "--data=" + str(Path(x.split("=", 1)[1]).expanduser().resolve())
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ours, study_args = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tree", action="append", required=True, help="NAME=PATH of a checkout (repeat; the first "
                                                                   "is the reference of the ratios)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-warmup", action="store_true", help="skip each tree's untimed first run")
    p.add_argument("--keep", type=Path, default=None, help="keep each run's study folder under this folder")
    p.add_argument("--json", type=Path, default=None, help="also write every figure here")
    p.add_argument("--envelope-too", action="store_true", help="also each tree with --envelope, as NAME+envelope")
    a = p.parse_args(ours)
    if a.rounds < 1:
        p.error(f"--rounds must be >= 1, got {a.rounds}")
    if any(x == "--out" or x.startswith("--out=") for x in study_args):
        p.error("--out is set per run; leave it out of the study arguments")
    trees = _trees(a.tree)
    study_args = _absolute_data(study_args)
    args = {name: study_args for name in trees}
    if a.envelope_too:
        args.update({f"{name}+envelope": [*study_args, "--envelope"] for name in trees})
        trees.update({f"{name}+envelope": root for name, root in list(trees.items())})
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="study-throughput-") as tmp:
        base = a.keep or Path(tmp)
        try:
            if not a.no_warmup:
                for name, root in trees.items():
                    run_once(root, args[name], base / f"{name}_warmup")
            for i in range(a.rounds):
                for name, root in trees.items():
                    r = dict(run_once(root, args[name], base / f"{name}_{i + 1}"), load_1min=os.getloadavg()[0])
                    runs[name].append(r)
                    print(f"round {i + 1} {name:<12} {r['rollouts']} rollouts in {r['wall_s']:.1f} s "
                          f"= {60 * r['rollouts'] / r['wall_s']:.0f}/min, {r['wall_s'] / max(1, r['recordings']):.1f} "
                          f"s/recording, CPU {r['cpu_s']:.1f} s, "
                          f"1-min load {r['load_1min']:.1f}", flush=True)
        except RuntimeError as e:
            print(f"study_throughput.py: error: {e}", file=sys.stderr)
            return 1
    summary = summarize(runs)
    first = next(iter(trees))
    for name, s in summary.items():
        vs = "" if name == first else f" ({first}'s / this: {s['cpu_ratio']:.2f})"
        jobs = "" if not s["jobs_ratio"] else f"; jobs' own time median {s['median_jobs_s']:.1f} s ({s['jobs_ratio']:.2f}x)"
        print(f"{name:<12} rollouts/min best {s['best_per_min']:.0f} ({s['best_ratio']:.2f}x {first}'s), median "
              f"{s['median_per_min']:.0f} ({s['median_ratio']:.2f}x); CPU median {s['median_cpu_s']:.1f} s{vs}{jobs}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        commits = {k: head_commit(v) for k, v in trees.items()}
        where = {k: _portable(v, commits[k]) for k, v in trees.items()}
        made_by = " ".join(_recorded_args(argv, where))
        a.json.write_text(json.dumps({
            "source": "study_throughput", "made_by": "python benchmarks/study_throughput.py " + made_by,
            "commit": head_commit(), "date": time.strftime("%Y-%m-%d", time.gmtime()), "tree_commits": commits,
            "trees": where, "study_args": study_args, "runs": runs, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
