"""The smallest correction of a recorded grasp that makes the lift protocol hold it (design: docs/refine.md). A
correction ``x`` (11,): wrist offset (3, mm, world), wrist rotation vector (3, deg, world, about the wrist at the grasp
frame), extra closure per finger (5, deg, MANO order). Search: the cross-entropy method (Rubinstein & Kroese 2004),
feasibility-first rank (Deb 2000)."""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from replay.config import ReplayConfig
from replay.data.types import Recording
from replay.errors import UsageError
from replay.protocol import refine_neighbourhood as nbh
from replay.protocol.measures import measure_world, object_clearance
from replay.protocol.plan import hold_end, lift_start
from replay.protocol.refine_settings import RefineSettings
from replay.protocol.rollout import RolloutResult, Stepping
from replay.protocol.sampling import run_samples
from replay.results.engine_choice import EngineChoice
from replay.sim.engine.variants import Variant

#: after a success, later batches also hold the best correction times each of these
SHRINK = (0.3, 0.55, 0.8)
#: the smallest held correction times each of these is a further neighbourhood candidate
GROW = (1.3, 1.6)


class Target(NamedTuple):
    """The recording a search corrects, as ``run_rollouts`` takes it (coords (T, 67), xyzw)."""

    rec: Recording
    coords: np.ndarray
    mjcf: object


@dataclass
class Sample:
    """One evaluated correction ``x`` (11,) mm/deg; ``rise`` m at the end of the hold (early-stopped: mid-lift)."""

    x: np.ndarray
    cost: float
    lifted: bool
    rise: float
    held: bool = False

    def key(self) -> tuple:
        """Feasibility-first rank, smaller better: held, then lifted (by cost), then the rest (higher rise first)."""
        if self.held or self.lifted:
            return (0 if self.held else 1, self.cost)
        return (2, -self.rise if math.isfinite(self.rise) else math.inf)


@dataclass
class SeedResult:
    """One seed's search and selection: ``neighbourhood`` rate 0-1 (None: none held), ``history`` per iteration
    ``{worlds, lifted, held, best_cost}``, ``tried`` per candidate ``{cost, neighbourhood}``."""

    seed: int
    found: bool
    sample: Sample
    neighbourhood: float | None
    rollouts: int
    history: list
    tried: list

    def robust(self, s: RefineSettings) -> bool:
        """Held, with its neighbourhood at ``neighbourhood_min`` or more."""
        return bool(self.found and self.neighbourhood is not None and self.neighbourhood >= s.neighbourhood_min)

    def summary(self) -> dict:
        return {
            "seed": self.seed,
            "found": self.found,
            "x": [float(v) for v in self.sample.x],
            "cost": self.sample.cost,
            "neighbourhood": self.neighbourhood,
            "rollouts": self.rollouts,
            "tried": self.tried,
        }


@dataclass
class RefineResult:
    """One recording's search: ``x`` (11,) mm/deg the chosen correction (best-ranked when none held), ``refined`` /
    ``ablation`` its run with the shake and contact ablation, ``rollouts`` worlds of both seeds, ``neighbourhood`` rate
    0-1 / ``seed_agreement`` / ``second`` (None: none held / no second seed), ``wall_s`` s, ``history`` as
    :class:`SeedResult`."""

    found: bool
    x: np.ndarray
    refined: RolloutResult
    ablation: RolloutResult
    rollouts: int
    wall_s: float
    settings: RefineSettings
    history: list = field(default_factory=list)
    neighbourhood: float | None = None
    seed_agreement: bool | None = None
    second: dict | None = None
    tried: list = field(default_factory=list)

    def fields(self, ablation_clean_mm: float) -> dict:
        o, r, f = self.x[:3], self.x[3:6], self.x[6:]
        ab = self.ablation.metrics
        clean = bool(
            ab["stable"] and ab["max_hand_object_contacts"] == 0 and ab["max_object_disp_mm"] < ablation_clean_mm
        )
        m = self.refined.metrics
        return dict(
            refine_outcome=m["outcome"],
            refine_found=self.found,
            refine_wrist_mm=float(np.linalg.norm(o)),
            refine_wrist_deg=float(np.linalg.norm(r)),
            refine_finger_deg=float(np.max(f)),
            refine_ablation_max_disp_mm=float(ab["max_object_disp_mm"]),
            refine_ablation_clean=clean,
            refine_shake_held=m.get("shake_held"),
            refine_neighbourhood_success=self.neighbourhood,
            refine_seed_agreement=self.seed_agreement,
            refine_rollouts=self.rollouts,
            refine_wall_s=self.wall_s,
            refine_correction={
                "wrist_offset_mm": [float(v) for v in o],
                "wrist_rotvec_deg": [float(v) for v in r],
                "finger_closure_deg": [float(v) for v in f],
                "cost": correction_cost(self.x, self.settings),
                "settings": dataclasses.asdict(self.settings),
                "history": self.history,
                "neighbourhood_tried": self.tried,
                "second_seed": self.second,
            },
        )


def correction_cost(x: np.ndarray, s: RefineSettings) -> float:
    """Dimensionless size of ``x``, 3 at every bound (docs/refine.md)."""

    def frac(v, b):
        return 0.0 if b == 0 else v / b

    return float(
        frac(np.linalg.norm(x[:3]), s.wrist_mm) ** 2
        + frac(np.linalg.norm(x[3:6]), s.wrist_deg) ** 2
        + np.mean(np.square(frac(np.asarray(x[6:]), s.finger_deg)))
    )


def project(x: np.ndarray, s: RefineSettings) -> np.ndarray:
    """``x`` moved into the bounds: offset and rotation scaled onto their balls, closures clipped."""
    x = np.array(x, float)
    for sl, b in ((slice(0, 3), s.wrist_mm), (slice(3, 6), s.wrist_deg)):
        n = float(np.linalg.norm(x[sl]))
        if n > b:
            x[sl] *= b / n
    x[6:] = np.clip(x[6:], 0.0, s.finger_deg)
    return x


def to_variant(x: np.ndarray, ablation: bool = False) -> Variant:
    """The :class:`Variant` of a correction ``x`` (mm, deg -> m, rad)."""
    return Variant(
        ablation=ablation,
        wrist_offset=tuple(np.asarray(x[:3]) / 1000.0),
        wrist_rotvec=tuple(np.radians(x[3:6])),
        finger_closure=tuple(np.radians(x[6:])),
        label="refine",
    )


def _evaluate(t: Target, cfg: ReplayConfig, xs: list, s: RefineSettings) -> list[Sample]:
    """One :class:`Sample` per correction of ``xs``, one early-stopping batch."""
    st = Stepping(
        mid_lift_stop=s.mid_lift_rise_frac * cfg.lift.lifted_min_rise,
        measure=_judge,
        engine_options={"c_loop": s.c_loop},
    )
    runs = run_samples(*t, cfg=cfg, samples=[(cfg, to_variant(x)) for x in xs], threads=s.threads, stepping=st)
    return [Sample(np.asarray(x, float), correction_cost(x, s), *r.metrics["refine_sample"]) for x, r in zip(xs, runs)]


def _judge(rec, plan, scene, cfg: ReplayConfig, tr, world) -> dict:
    """A search world's ``{"refine_sample": (lifted, rise m, held)}``; held measured only for a world that lifted."""
    lifted, rise = lift_verdict(rec, plan, scene, cfg=cfg, tr=tr, world=world)
    held = lifted and nbh.holds(measure_world(rec, plan, scene, cfg=cfg, tr=tr, world=world))
    return {"refine_sample": (lifted, rise, held)}


def lift_verdict(rec, plan, scene, *, cfg: ReplayConfig, tr, world) -> tuple[bool, float]:
    """``(lifted, rise m)`` of one world's trace as ``measure_world`` judges them; rise -inf when unstable."""
    done = tr.done
    stable = tr.bad_frame is None or world.reason is None
    ls, end = lift_start(plan.phase[:done]), hold_end(plan.phase)
    judge = min(done, end) - 1
    if ls is None or not stable and (tr.bad_frame is None or tr.bad_frame < end):
        return False, -math.inf
    opos = tr.body_pos[:done, -1].astype(float)
    rise = float(opos[judge, 2] - float(opos[ls, 2]))
    clearance = object_clearance(tr, judge, scene.object_vertices, support_height=rec.support_height)
    lifted = done >= end and rise >= cfg.lift.lifted_min_rise and clearance >= cfg.lift.lifted_min_clearance
    return bool(lifted), rise


def _propose(rng, mean, std, best: Sample | None, n: int, s: RefineSettings) -> list:
    """``n`` corrections: the best one shrunk (:data:`SHRINK`) if there is one, then samples."""
    xs = [project(a * best.x, s) for a in SHRINK] if best is not None else []
    while len(xs) < n:
        xs.append(project(mean + std * rng.standard_normal(mean.shape), s))
    return xs[:n]


def _refit(samples: list[Sample], mean, std, s: RefineSettings, floor) -> tuple:
    """Mean and spread refit to the elite (feasibility-first rank), smoothed, spread floored at ``floor``."""
    k = max(2, int(math.ceil(s.elite_frac * len(samples))))
    elite = np.stack([p.x for p in sorted(samples, key=Sample.key)[:k]])
    a = s.smoothing
    return a * elite.mean(axis=0) + (1 - a) * mean, np.maximum(a * elite.std(axis=0) + (1 - a) * std, floor)


def search(
    t: Target, cfg: ReplayConfig, s: RefineSettings, *, seed: int | None = None, first: Sample | None = None
) -> tuple:
    """The CEM loop: ``(found, best-ranked Sample, rollouts, history, every held Sample)``; ``first``: the uncorrected
    run, already evaluated."""
    rng = np.random.default_rng(s.seed if seed is None else seed)
    bounds = np.array([s.wrist_mm] * 3 + [s.wrist_deg] * 3 + [s.finger_deg] * 5, float)
    mean, std, floor = np.zeros(11), bounds / 2.0, bounds * 0.05
    again = first is not None
    first = first or _evaluate(t, cfg, [np.zeros(11)], s)[0]
    history = [_iteration([first], first if first.held else None)]
    if first.held and not again:
        return True, first, 1, history, [first]
    # again: the uncorrected grasp held but not its neighbourhood; it neither ranks nor stops the search
    rollouts, top, held = (0 if again else 1), (None if again else first), [first] if first.held else []
    best, stale = None, 0
    for _ in range(s.iterations):
        samples = _evaluate(t, cfg, _propose(rng, mean, std, best, s.worlds, s), s)
        rollouts += len(samples)
        held += [p for p in samples if p.held]
        ranked = sorted(samples + ([top] if top is not None else []), key=Sample.key)
        improved = ranked[0].held and (best is None or ranked[0].cost < best.cost * 0.97)
        top = ranked[0]
        best = top if top.held else None
        stale = 0 if improved else stale + 1
        history.append(_iteration(samples, best))
        mean, std = _refit(samples, mean, std, s, bounds / 2.0 if best is None and s.explore_until_lift else floor)
        if best is not None and stale >= s.patience:
            break
    return best is not None, top, rollouts, history, held


def _iteration(samples: list[Sample], best: Sample | None) -> dict:
    """One ``history`` entry: ``{worlds, lifted, held, best_cost}``."""
    lifted, held = sum(p.lifted for p in samples), sum(p.held for p in samples)
    return {"worlds": len(samples), "lifted": lifted, "held": held, "best_cost": best.cost if best else None}


def _candidates(held: list[Sample], s: RefineSettings) -> list[np.ndarray]:
    """Corrections whose neighbourhood is tried, in order: the smallest held, it times :data:`GROW`, the next smallest
    held; each a neighbourhood step from those before."""
    small = sorted(held, key=lambda p: p.cost)
    xs = [small[0].x] + [project(g * small[0].x, s) for g in GROW] + [p.x for p in small[1:]]
    step = np.array([s.neighbourhood_mm] * 3 + [s.neighbourhood_deg] * 8, float)
    out: list[np.ndarray] = []
    for x in xs:
        # a candidate inside another's neighbourhood (every number within one step) tells nothing new
        if all(np.any(np.abs(np.asarray(x) - y) >= step) for y in out):
            out.append(np.asarray(x, float))
    return out[: s.neighbourhood_candidates]


def _select(t: Target, cfg, s: RefineSettings, held: list[Sample]) -> tuple:
    """``(chosen Sample, its neighbourhood rate, rollouts, tried)``: the first candidate that holds with its
    neighbourhood at ``neighbourhood_min``, else the best rate of those that hold."""
    tried, rollouts = [], 0
    for x in _candidates(held, s):
        xs = [x] + nbh.neighbourhood(x, s.neighbourhood_mm, s.neighbourhood_deg, project=lambda v: project(v, s))
        runs = _evaluate(t, cfg, xs, s)
        rollouts += len(xs)
        rate = float(np.mean([q.held for q in runs[1:]]))
        tried.append({"cost": runs[0].cost, "held": runs[0].held, "neighbourhood": rate, "sample": runs[0]})
        if runs[0].held and rate >= s.neighbourhood_min:
            break
    ok = [t for t in tried if t["sample"].held] or tried
    good = [t for t in ok if t["neighbourhood"] >= s.neighbourhood_min]
    pick = good[0] if good else max(ok, key=lambda t: (t["neighbourhood"], -t["cost"]))
    return (
        pick["sample"],
        pick["neighbourhood"],
        rollouts,
        [{k: t[k] for k in ("cost", "held", "neighbourhood")} for t in tried],
    )


def run_seed(t: Target, cfg: ReplayConfig, s: RefineSettings, *, seed: int) -> SeedResult:
    found, top, rollouts, history, held = search(t, cfg, s, seed=seed)
    if not found:
        return SeedResult(seed, False, top, None, rollouts, history, [])
    pick, rate, n, tried = _select(t, cfg, s, held)
    rollouts += n
    if rate < s.neighbourhood_min and len(held) == 1 and not np.any(held[0].x):
        # only the uncorrected grasp held, on the edge of success: search around it after all
        _, top, n2, history2, held = search(t, cfg, s, seed=seed, first=held[0])
        history += history2[1:]
        pick2, rate2, n3, tried2 = _select(t, cfg, s, [p for p in held if np.any(p.x)] or held)
        rollouts += n2 + n3
        tried += tried2
        if rate2 > rate:
            pick, rate = pick2, rate2
    return SeedResult(seed, True, pick, rate, rollouts, history, tried)


def refine_recording(
    rec: Recording, coords: np.ndarray, mjcf, *, cfg: ReplayConfig, settings: RefineSettings | None = None
) -> RefineResult:
    """The smallest correction of one recording that holds with its neighbourhood (two seeds), run with its contact
    ablation; arguments as :func:`replay.protocol.rollout.run_rollouts`. Raises UsageError (an engine other than
    mujoco-c, settings out of range), DataError (bad input)."""
    s = (settings or RefineSettings()).validate()
    cfg.validate()
    if cfg.engine is not EngineChoice.MUJOCO_C:
        raise UsageError("--refine", "the search steps MuJoCo C worlds: use engine mujoco-c")
    t0 = time.perf_counter()
    target = Target(rec, coords, mjcf)
    one = run_seed(target, cfg, s, seed=s.seed)
    rollouts, second, agree = one.rollouts, None, None
    if s.second_seed:
        if one.robust(s) and not np.any(one.sample.x):
            agree = True  # the uncorrected grasp: no random draw, every seed gives it
        else:
            two = run_seed(target, cfg, s, seed=s.seed + 1)
            rollouts, second, agree = rollouts + two.rollouts, two.summary(), one.robust(s) == two.robust(s)
    x = one.sample.x
    refined, ablation = run_samples(
        rec,
        coords,
        mjcf,
        cfg=cfg,
        samples=[(cfg, to_variant(x)), (cfg, to_variant(x, ablation=True))],
        threads=s.threads,
    )
    return RefineResult(
        one.found,
        x,
        refined,
        ablation,
        rollouts,
        time.perf_counter() - t0,
        s,
        one.history,
        one.neighbourhood,
        agree,
        second,
        one.tried,
    )
