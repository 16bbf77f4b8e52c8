"""What a verdict's samples cost against their stepping (issue 47), per recording, in one process.

    python benchmarks/sample_cost.py --json docs/results/sample_cost.json
    python benchmarks/sample_cost.py --recordings mug_lift --sizes 8,32 --json /tmp/sc.json

Per recording (default: the GRAB lifts mug, stapler, banana of ``REPLAY_MIRROR``), after one untimed
warm-up rollout (imports, numba caches, the hand: ~4.6 s of a worker's first result, no sample's
cost), each with no scene kept from before (:func:`replay.sim.scene_cache.clear`: every figure pays
its one build):

* ``one``: wall s and CPU s (``time.process_time``) of one rollout (``run_rollouts`` with the default
  variant), the recording read and fitted (``prepare_recording``) included;
* per N in ``--sizes`` (8, 32, 128): the same for N samples, ``Variant`` s drawn from a seeded RNG
  (:func:`draw_samples`: friction, object mass, wrist offset), one world each of one batch, on one
  thread; and their stepping CPU s: the same call again under cProfile (CPU clock), the time of the
  compiled stepping calls (:data:`STEPPING`, as ``benchmarks/study_scale.py``; the profiler slows
  Python, not them);
* ``threads2_step_wall_s`` / ``threads1_step_cpu_s``: the smallest N's batch stepping alone
  (``step_protocol`` on the built scene) on 2 threads, wall s / on 1 thread, CPU s; ``raw_step_s``: raw
  ``mj_step`` (``mujoco.rollout``) replaying each of those worlds' own inputs on its own compiled model
  (:func:`raw_steps`: the same steps, MuJoCo's alone), one thread, CPU s.

Top-level figures (the machine is shared with other work: each is a ratio of times measured in this
one run, not an absolute speed):

* ``extra_sample_cost_ratio``: each extra sample's CPU over its own stepping CPU, (CPU at the
  largest N - CPU at the smallest) / (stepping at the largest - at the smallest), summed over
  the recordings; goal at most 1.25;
* ``stepping_share``: stepping CPU / CPU of a 32-sample study (recording read, fitted, built, stepped,
  measured), summed over the recordings; goal at least 0.70;
* ``batch_efficiency``: the samples on 2 threads against 2 x raw ``mj_step``:
  ``raw_step_s / (2 x threads2_step_wall_s)``, summed over the recordings; goal at least 0.85 (a wall
  time: on cores other processes share it measures the machine's load as much as the batch; and
  ``batch_efficiency_1thread``, ``raw_step_s / threads1_step_cpu_s``, the same on one thread in CPU
  time, which the load does not move).

``--compare-batch N`` (MuJoCo C only) also steps N samples of each recording in MuJoCo 3.17's
``mujoco.batch.Batch`` against the engine's batch on 1 and 2 threads (``benchmarks/mujoco_batch.py``:
wall and CPU, and whether the trajectories agree), and ``mujoco_batch_over_mjc`` their ratios.

``--device cuda`` runs the same samples on mujoco-warp (``ReplayConfig(engine="mujoco-warp", device="cuda")``: every sample a
world of one launch, its friction, mass and effort per-world model fields,
:mod:`replay.sim.engine.mjwarp.warp_batch`), timed by wall clock: ``wall_s`` a run less its stepping,
``stepping_s`` ``step_protocol``'s wall on a built scene, and ``samples_per_min`` at the largest N
(goal on one GPU: at least 1,000 samples per minute); ``--device warp-cpu`` the same on Warp's CPU
device (tests, with ``--frame-limit``). Not measured on this machine (no GPU).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from replay.output.results_summary import head_commit  # noqa: E402
from replay.results.engine_choice import EngineChoice, from_legacy  # noqa: E402

#: the compiled stepping calls, by name as cProfile lists them (as benchmarks/study_scale.py's STEPPING)
STEPPING = ("run_frames", "ctrl_steps", "mj_step")
RECORDINGS = ("mug_lift", "stapler_lift", "banana_lift")
SIZES = (8, 32, 128)


def draw_samples(n: int, mass: float, seed: int = 0) -> list:
    """``n`` Variants from ``np.random.default_rng(seed)``: sliding friction U(0.5, 1.5), object mass
    ``mass`` x U(0.8, 1.2) kg, wrist offset N(0, 2 mm) per axis, m (the first sample: the default)."""
    from replay.sim.engine.variants import Variant

    rng = np.random.default_rng(seed)
    out = [Variant()]
    for _ in range(n - 1):
        out.append(Variant(friction=float(rng.uniform(0.5, 1.5)), object_mass=float(mass * rng.uniform(0.8, 1.2)),
                           wrist_offset=tuple(float(x) for x in rng.normal(0.0, 0.002, 3))))
    return out


def _stepping(prof: cProfile.Profile) -> float:
    st = pstats.Stats(prof)
    return float(sum(v[3] for (_, _, func), v in st.stats.items()
                     if any(re.search(rf"\b{name}\b", func) for name in STEPPING)))


def _measure(fn) -> dict:
    """wall s, CPU s of ``fn()`` (no scene kept before), then its stepping CPU s under cProfile."""
    from replay.sim import scene_cache

    scene_cache.clear()
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    scene_cache.clear()
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    fn()
    prof.disable()
    return {"wall_s": wall, "cpu_s": cpu, "stepping_s": _stepping(prof), "result": out}


def batch_stepping_wall(rec, coords, mjcf, cfg, variants, threads: int, frame_limit=None) -> tuple[float, float]:
    """``(wall s, CPU s)`` of the batch's stepping alone (``step_protocol`` on a built scene and engine) on
    ``threads`` threads (MuJoCo C; mujoco-warp steps every world in one launch per kernel)."""
    from replay.protocol.rollout import build_replay_scene
    from replay.protocol.step_plan import step_protocol
    from replay.sim.engine.factory import engine_for_scene

    plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg=cfg)
    batch = engine_for_scene(scene, variants, threads=threads)
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        step_protocol(plan, batch, cfg, frame_limit=frame_limit)
        return time.perf_counter() - w0, time.process_time() - c0
    finally:
        batch.close()


def raw_steps(rec, coords, mjcf, cfg, variants, frame_limit=None) -> float:
    """CPU s of raw ``mj_step`` (``mujoco.rollout``, one thread) replaying each world's own inputs
    (:func:`replay.protocol.input_log.record_rollout`: its ctrl and wrist wrench per step, on its compiled
    model from its initial state): the same steps as the batch's worlds, MuJoCo's step alone."""
    import mujoco
    from mujoco import rollout as mj_rollout

    from replay.protocol.input_log import STATE_SPEC, record_rollout

    full = mujoco.mjtState.mjSTATE_FULLPHYSICS
    cspec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_XFRC_APPLIED
    total = 0.0
    with mj_rollout.Rollout(nthread=0) as r:
        for v in variants:
            log = record_rollout(rec, coords, mjcf, cfg=cfg, variant=v)
            m = log.model
            d = mujoco.MjData(m)
            mujoco.mj_setState(m, d, log.state0, STATE_SPEC)
            s0 = np.empty(mujoco.mj_stateSize(m, full))
            mujoco.mj_getState(m, d, s0, full)
            controls = np.concatenate([log.ctrl, log.xfrc_applied.reshape(len(log.ctrl), -1)], axis=1)
            if frame_limit is not None:  # the steps of the batch's first frame_limit frames
                controls = controls[: int(np.sum(log.frame_steps[:frame_limit]))]
            warm = d.qacc_warmstart.copy()[None]
            c0 = time.thread_time()
            r.rollout(m, d, s0[None], controls[None], control_spec=cspec, initial_warmstart=warm)
            total += time.thread_time() - c0
    return total


def one_recording(seq: str, mirror: Path, cfg, sizes, frame_limit=None) -> dict:
    """The figures of one recording (module doc). MuJoCo C: CPU s, stepping CPU s under cProfile;
    mujoco-warp (``cfg.engine`` mujoco-warp): wall s, stepping as ``step_protocol``'s wall s."""
    from replay.protocol.rollout import run_rollouts
    from replay.sim.engine.variants import Variant
    from replay.study.prepare import prepare_recording

    warp = cfg.engine is EngineChoice.MUJOCO_WARP

    def prep():
        return prepare_recording(
            "grab", seq, str(mirror), manosim_dir=str(mirror / "manosim"), cfg=cfg, protocol="lift", settings=None
        )[:3]

    rec, coords, mjcf = prep()

    def run(variants, threads=1):
        r, c, mj = prep()
        return run_rollouts(r, c, str(mj), cfg=cfg, variants=variants, threads=threads, frame_limit=frame_limit)

    def measure(variants):
        if not warp:
            return _measure(lambda: run(variants))
        w0 = time.perf_counter()
        out = run(variants)
        wall = time.perf_counter() - w0
        step = batch_stepping_wall(rec, coords, str(mjcf), cfg, variants, 1, frame_limit)[0]
        return {"wall_s": wall, "cpu_s": None, "stepping_s": step, "result": out}

    one = measure([Variant()])
    # the asset's mass as simulated (density x volume), read off the built scene
    mass = float(one["result"][0].metrics["object_mass"])
    row = {"recording": seq, "object_mass": mass, "one": {k: one[k] for k in ("wall_s", "cpu_s", "stepping_s")},
           "samples": []}
    for n in sizes:
        got = measure(draw_samples(n, mass))
        row["samples"].append({"n": n, **{k: got[k] for k in ("wall_s", "cpu_s", "stepping_s")},
                               "lifted": int(sum(bool(r.metrics["lifted"]) for r in got["result"]))})
    if not warp:  # the smallest N's stepping on 2 threads against raw mj_step of the same worlds
        few = draw_samples(sizes[0], mass)
        row["threads2_step_wall_s"] = batch_stepping_wall(rec, coords, str(mjcf), cfg, few, 2, frame_limit)[0]
        row["threads1_step_cpu_s"] = batch_stepping_wall(rec, coords, str(mjcf), cfg, few, 1, frame_limit)[1]
        row["raw_step_s"] = raw_steps(rec, coords, str(mjcf), cfg, few, frame_limit)
    return row


def compare_batch(seq: str, mirror: Path, cfg, n: int, row: dict) -> dict:
    """One recording's engine batch against ``mujoco.batch`` (``benchmarks/mujoco_batch.py``), ``n``
    samples (:func:`draw_samples`, the object's mass as ``row`` measured it)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from mujoco_batch import compare

    from replay.study.prepare import prepare_recording

    rec, coords, mjcf = prepare_recording(
        "grab", seq, str(mirror), manosim_dir=str(mirror / "manosim"), cfg=cfg, protocol="lift", settings=None
    )[:3]
    mass = float(row["object_mass"])
    out = compare(rec, coords, str(mjcf), cfg, draw_samples(n, mass), stepping=batch_stepping_wall)
    return {"recording": seq, **out}


def batch_figures(versus: list[dict]) -> dict:
    """``mujoco_batch_over_mjc``: per thread count, mujoco.batch's stepping wall s and CPU s over the
    engine batch's, summed over the recordings (> 1: the engine's batch is faster); the largest
    trajectory differences."""
    out = {}
    for t in versus[0]["mjc"]:
        for k in ("wall_s", "cpu_s"):
            out[f"{t}_{k}"] = (sum(v["mujoco_batch"][t][k] for v in versus) / sum(v["mjc"][t][k] for v in versus))
    return {"mujoco_batch_over_mjc": out,
            "mujoco_batch_max_abs_qpos": max(v["agree"]["max_abs_qpos"] for v in versus),
            "mujoco_batch_max_abs_xpos_vs_engine": max(v["agree"]["max_abs_xpos_vs_engine"] for v in versus)}


def figures(rows: list[dict], device: str) -> dict:
    """The top-level figures of the rows (module doc); on mujoco-warp from wall times (``cpu_s`` is None),
    with ``samples_per_min`` at the largest N."""
    lo = [r["samples"][0] for r in rows]
    hi = [r["samples"][-1] for r in rows]
    s = lambda xs, k: float(sum(x[k] for x in xs))  # noqa: E731
    t = "cpu_s" if device == "cpu" else "wall_s"
    extra_step = s(hi, "stepping_s") - s(lo, "stepping_s")  # <= 0: too few frames to tell (None)
    out = {"extra_sample_cost_ratio": (s(hi, t) - s(lo, t)) / extra_step if extra_step > 0 else None}
    at32 = [next((x for x in r["samples"] if x["n"] == 32), r["samples"][-1]) for r in rows]
    out["stepping_share"] = s(at32, "stepping_s") / s(at32, t)
    if device == "cpu":
        out["batch_efficiency"] = s(rows, "raw_step_s") / (2.0 * s(rows, "threads2_step_wall_s"))
        out["batch_efficiency_1thread"] = s(rows, "raw_step_s") / s(rows, "threads1_step_cpu_s")
    else:
        out["samples_per_min"] = 60.0 * s(hi, "n") / s(hi, "wall_s")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recordings", default=",".join(RECORDINGS))
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda", "warp-cpu"),
                    help="cpu: MuJoCo C; cuda: mujoco-warp on the GPU; warp-cpu: mujoco-warp on Warp's CPU device (tests)")
    ap.add_argument("--frame-limit", type=int, default=None, help="stop every rollout after this many frames (tests)")
    ap.add_argument("--compare-batch", type=int, default=0, metavar="N",
                    help="also step N samples per recording in mujoco.batch.Batch against the engine's batch, "
                         "1 and 2 threads each, whole rollouts (benchmarks/mujoco_batch.py; cpu only)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no further recording (after the first) once this many wall s have passed (a lent GPU's time); "
                         "the JSON says budget_stopped and holds the recordings done")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    import os

    from replay import resolve_path_env

    resolve_path_env()
    mirror = Path(os.environ.get("REPLAY_MIRROR", ROOT.parent / "shared" / "datasets")).resolve()
    if not (mirror / "grab").is_dir():
        print(f"sample_cost: no GRAB mirror at {mirror} (set REPLAY_MIRROR)", file=sys.stderr)
        return 2
    from replay.config import ReplayConfig
    from replay.protocol.rollout import run_rollouts
    from replay.sim.hand_assets import resolve_hand_variant
    from replay.study.prepare import prepare_recording
    from replay.study.worker_imports import import_physics

    import_physics()
    engine, device = from_legacy("mujoco", "direct", a.device)  # cpu: MuJoCo C; cuda, warp-cpu: mujoco-warp
    cfg = resolve_hand_variant(ReplayConfig(engine=engine, device=device), "grab")
    sizes = [int(x) for x in a.sizes.split(",")]
    r, c, mj = prepare_recording(
        "grab", "cubesmall_lift", str(mirror), manosim_dir=str(mirror / "manosim"), cfg=cfg, protocol="lift",
        settings=None,
    )[:3]
    # warm-up: numba caches, the hand, Warp's kernels, first-time costs
    run_rollouts(r, c, str(mj), cfg=cfg, variants=draw_samples(2, 0.1), frame_limit=a.frame_limit)
    rows, versus, t_start, stopped = [], [], time.perf_counter(), False
    for seq in a.recordings.split(","):
        if rows and a.budget_s is not None and time.perf_counter() - t_start > a.budget_s:
            stopped = True
            break
        rows.append(one_recording(seq, mirror, cfg, sizes, a.frame_limit))
        print(json.dumps(rows[-1]), flush=True)
        if a.compare_batch and a.device == "cpu":
            versus.append(compare_batch(seq, mirror, cfg, a.compare_batch, rows[-1]))
            print(json.dumps(versus[-1]), flush=True)
    doc = {"source": "sample_cost",
           "made_by": "python benchmarks/sample_cost.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "commit": head_commit(ROOT), "date": time.strftime("%Y-%m-%d", time.gmtime()), "device": a.device,
           "sizes": sizes, "recordings": rows, "budget_stopped": stopped, **figures(rows, a.device),
           **({"compare_batch": versus, **batch_figures(versus)} if versus else {})}
    print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in doc.items() if k != "recordings"})
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
