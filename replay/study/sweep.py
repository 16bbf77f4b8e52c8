"""Robustness maps: one recording over a grid of finger effort limit (N·m) x hand-object friction, under wrist
perturbations and with contact ablated, as the worlds of one batch (:class:`~replay.sim.engine.variants.Variant`)."""

from __future__ import annotations

import hashlib
import io
import json
import math
import time
from dataclasses import dataclass

import numpy as np

from replay.config import ReplayConfig
from replay.errors import UsageError
from replay.protocol.sampling import run_samples
from replay.results.json_record import JsonRecord, read_as
from replay.results.physics_table import SHARED
from replay.results.records import RolloutRecord
from replay.results.verdict_record import Diagnosis
from replay.sim.engine.variants import Variant
from replay.study.prepare import prepare_recording

#: grid axes and the physics table row each sets: finger effort limit (N·m) and hand-object sliding friction (1)
AXES = {"effort": "finger_effort_limit", "mu": "hand_object_friction"}
#: the finger-object pair's sliding friction as built (the table's contact_finger_object)
BUILT_MU = float(next(c for c in SHARED if c.name == "contact_finger_object").value["friction"][0])


def parse_grid(text: str) -> dict[str, np.ndarray]:
    """``"effort=0.1:1.5:8,mu=0.2:1.5:8"`` -> ``{"effort": linspace(0.1, 1.5, 8), "mu": ...}``. Raises UsageError:
    unknown axis, malformed range, non-positive values or fewer than 1 point."""
    out = {}
    for part in [p for p in text.split(",") if p.strip()]:
        name, _, rng = part.partition("=")
        name = name.strip()
        if name not in AXES:
            raise UsageError("--grid", f"unknown axis {name!r}; use {', '.join(AXES)} (e.g. effort=0.1:1.5:8)")
        try:
            lo, hi, n = rng.split(":")
            lo, hi, n = float(lo), float(hi), int(n)
        except ValueError:
            raise UsageError("--grid", f"{part!r}: expected {name}=LOW:HIGH:COUNT") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= hi and n >= 1):
            raise UsageError("--grid", f"{part!r}: need 0 < LOW <= HIGH and COUNT >= 1")
        out[name] = np.linspace(lo, hi, n)
    for name in AXES:
        if name not in out:
            raise UsageError("--grid", f"missing axis {name!r} (e.g. --grid effort=0.1:1.5:8,mu=0.2:1.5:8)")
    return out


@dataclass(frozen=True)
class SweepPlan:
    """The worlds of one recording's sweep, in batch order: grid axes ``effort`` (E,) N·m and ``mu`` (M,); per world
    a Variant and a role ``("grid", ie, im)``, ``("effort_at_mu1", ie)``, ``("mu_at_study_effort", im)``,
    ``("perturb", k)`` or ``("ablation",)``."""

    effort: np.ndarray
    mu: np.ndarray
    study_effort: float | None
    variants: tuple
    roles: tuple


def study_effort(cfg) -> float | None:
    """The study's ``--effort``, N·m at every joint; None: the scene's own per-joint limits."""
    eff = (cfg.physics_overrides or {}).get("finger_effort_limit")
    return float(eff) if isinstance(eff, (int, float)) and not isinstance(eff, bool) else None


def _world(effort, mu, label: str) -> Variant:
    """A world at finger effort limit ``effort`` N·m (None: the scene's) and hand-object friction ``mu``."""
    return Variant.of_rows({AXES["effort"]: effort, AXES["mu"]: mu}, label=label)


def plan_sweep(
    grid: dict, study_effort: float | None, perturb: int, *, perturb_mm: float, perturb_deg: float, seed: int = 0
) -> SweepPlan:
    """Worlds for the grid cells, the effort line at mu = 1, the mu line at ``study_effort`` (N·m; None: the
    scene's), ``perturb`` wrist perturbations and the ablation. Perturbation k: a horizontal wrist offset of
    ``perturb_mm`` mm and a rotation of ``perturb_deg`` deg about the wrist, random directions from
    ``numpy.random.default_rng(seed)``."""
    E, M = grid["effort"], grid["mu"]
    study_effort = None if study_effort is None else float(study_effort)
    variants, roles = [], []
    for ie, e in enumerate(E):
        for im, m in enumerate(M):
            variants.append(_world(e, m, label=f"effort={e:.4g},mu={m:.4g}"))
            roles.append(("grid", ie, im))
    for ie, e in enumerate(E):
        variants.append(_world(e, BUILT_MU, label=f"effort={e:.4g},mu=1"))
        roles.append(("effort_at_mu1", ie))
    for im, m in enumerate(M):
        variants.append(_world(study_effort, m, label=f"study effort,mu={m:.4g}"))
        roles.append(("mu_at_study_effort", im))
    rng = np.random.default_rng(seed)
    for k in range(perturb):
        phi = rng.uniform(0, 2 * np.pi)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        off = perturb_mm / 1000.0 * np.array([np.cos(phi), np.sin(phi), 0.0])
        rot = np.radians(perturb_deg) * axis
        variants.append(Variant(wrist_offset=tuple(off), wrist_rotvec=tuple(rot), label=f"perturb {k}"))
        roles.append(("perturb", k))
    variants.append(Variant(ablation=True, label="ablation"))
    roles.append(("ablation",))
    return SweepPlan(E, M, study_effort, tuple(variants), tuple(roles))


def summarize_sweep(sp: SweepPlan, worlds: list[RolloutRecord]) -> dict:
    """The per-recording result (JSON-ready) from the worlds' records, in ``sp`` order."""
    E, M = len(sp.effort), len(sp.mu)
    lifted = np.zeros((E, M), bool)
    held = np.zeros((E, M), bool)
    outcome = [[None] * M for _ in range(E)]
    line_e, line_m, pert, ablation = {}, {}, [], None
    for role, w in zip(sp.roles, worlds):
        if role[0] == "grid":
            _, ie, im = role
            lifted[ie, im] = w.lifted
            held[ie, im] = bool(w.lift.shake_held)
            outcome[ie][im] = w.outcome
        elif role[0] == "effort_at_mu1":
            line_e[role[1]] = w.lifted
        elif role[0] == "mu_at_study_effort":
            line_m[role[1]] = w.lifted
        elif role[0] == "perturb":
            pert.append(w.lifted)
        else:
            ablation = {
                "outcome": w.outcome,
                "lifted": w.lifted,
                "max_hand_object_contacts": w.grasp.max_hand_object_contacts,
                "max_object_rise_mm": w.grasp.max_object_rise_mm,
            }
    min_e = next((float(sp.effort[i]) for i in range(E) if line_e.get(i)), None)
    min_m = next((float(sp.mu[i]) for i in range(M) if line_m.get(i)), None)
    return {
        "axes": {"effort_nm": sp.effort.tolist(), "mu": sp.mu.tolist()},
        "lifted": lifted.tolist(),
        "shake_held": held.tolist(),
        "outcome": outcome,
        "success_fraction": float(lifted.mean()),
        "operating_point": {"effort_nm": sp.study_effort, "mu": BUILT_MU},
        "min_effort_lifting_at_mu1_nm": min_e,
        "effort_line_at_mu1": [bool(line_e[i]) for i in range(E)],
        "min_mu_lifting_at_study_effort": min_m,
        "mu_line_at_study_effort": [bool(line_m[i]) for i in range(M)],
        "perturbations": len(pert),
        "perturbed_success_fraction": float(np.mean(pert)) if pert else None,
        "ablation": ablation,
    }


def sweep_key(cfg: ReplayConfig, grid: dict, perturb: int, *, perturb_mm: float, perturb_deg: float, seed: int) -> str:
    """SHA-256 (16 hex) of everything a sweep's result depends on (resume)."""
    doc = {
        "config": cfg.to_dict(),
        "grid": {k: v.tolist() for k, v in grid.items()},
        "perturb": perturb,
        "perturb_mm": perturb_mm,
        "perturb_deg": perturb_deg,
        "seed": seed,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def heatmap_png(result: dict, title: str) -> bytes:
    """PNG bytes of :func:`heatmap_figure`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = heatmap_figure(result, title)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


#: matplotlib ``Line2D`` style of the worlds on the two lines through the operating point
LINE_MARKERS = {
    True: dict(marker="o", ms=6, mfc="#1f5f3a", mec="white", label="line through it: lifts"),
    False: dict(marker="X", ms=7, mfc="black", mec="white", label="line through it: drops"),
}


@dataclass(frozen=True)
class _Point(JsonRecord):
    """A finger effort N·m and a friction mu (an axis each, or the operating point)."""

    effort_nm: object = None
    mu: object = None


@dataclass(frozen=True)
class SweepMap(JsonRecord):
    """What a recording's sweep result (:func:`summarize_sweep`) holds for its map."""

    axes: _Point = read_as(_Point.from_dict)
    outcome: list | None = None
    shake_held: list | None = None
    operating_point: _Point = read_as(_Point.from_dict)
    effort_line_at_mu1: list | None = None
    mu_line_at_study_effort: list | None = None


def heatmap_figure(result: dict, title: str):
    """Success over finger effort (rows, N·m) x friction mu (columns), the operating point and its lines marked."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    r = SweepMap.from_dict(result)
    E = np.asarray(r.axes.effort_nm, float)
    M = np.asarray(r.axes.mu, float)
    code = {"unstable": 0, "not_lifted": 1, "lifted": 2}
    grid = np.array([[code.get(o, 0) for o in row] for row in r.outcome], float)
    grid[np.asarray(r.shake_held, bool)] = 3
    fig, ax = plt.subplots(figsize=(7.2, 4.2), dpi=110)
    cmap = ListedColormap(["#b3b3b3", "#d95f5f", "#f2c14e", "#3a9e5a"])
    ax.pcolormesh(_cell_edges(M), _cell_edges(E), grid, cmap=cmap, vmin=-0.5, vmax=3.5, shading="flat")
    op = r.operating_point
    lx = np.concatenate([np.full(len(E), op.mu), M])
    ly = np.concatenate([E, np.full(len(M), op.effort_nm)])
    ok = np.concatenate([r.effort_line_at_mu1, r.mu_line_at_study_effort]).astype(bool)
    handles = [
        Patch(color=c, label=t)
        for c, t in zip(cmap.colors, ["unstable", "not lifted", "lifted", "lifted + held in shake"])
    ]
    star = dict(marker="*", ms=16, mec="black", mfc="white", label="study operating point")
    ax.plot([op.mu], [op.effort_nm], ls="none", clip_on=False, zorder=4, **star)
    handles.append(Line2D([], [], ls="none", **star))
    for lifts, style in LINE_MARKERS.items():
        sel = ok == lifts
        ax.plot(lx[sel], ly[sel], ls="none", clip_on=False, zorder=3, **style)
        handles.append(Line2D([], [], ls="none", **style))
    ax.set_xlim(M.min(), M.max()) if len(M) > 1 else ax.set_xlim(M[0] - 0.05, M[0] + 0.05)
    ax.set_ylim(E.min(), E.max()) if len(E) > 1 else ax.set_ylim(max(E[0] - 0.05, 0.0), E[0] + 0.05)
    ax.set_xlabel("hand-object friction coefficient mu")
    ax.set_ylabel("finger effort limit (N·m)")
    ax.set_title(title, fontsize=10)
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), framealpha=0.9)
    fig.tight_layout()
    return fig


def _cell_edges(v: np.ndarray) -> np.ndarray:
    """(n + 1,) cell edges of samples ``v`` (n,): midpoints, the outer ones at the ends (one sample: +-0.05, >= 0)."""
    if len(v) == 1:
        return np.array([max(v[0] - 0.05, 0.0), v[0] + 0.05])
    mid = 0.5 * (v[1:] + v[:-1])
    return np.concatenate([[v[0]], mid, [v[-1]]])


def run_recording_sweep(
    dataset: str, sequence: str, data_dir, *, manosim_dir, cfg: ReplayConfig, sp: SweepPlan, threads: int = 1
) -> dict:
    """Replay one recording over every world of ``sp`` in one batch; the result dict. Raises DataError: bad input
    (nothing is simulated)."""
    t0 = time.perf_counter()
    rec, coords, mjcf, _ = prepare_recording(dataset, sequence, data_dir, manosim_dir=manosim_dir, cfg=cfg)
    res = run_samples(rec, coords, mjcf, cfg=cfg, samples=[(cfg, v) for v in sp.variants], threads=threads)
    worlds = [RolloutRecord.from_metrics(r.metrics) for r in res]
    out = summarize_sweep(sp, worlds)
    out.update(
        sequence=sequence,
        dataset=dataset,
        object=rec.target_object.asset.name,
        object_mass_kg=float(worlds[0].scene.object_mass),
        worlds=len(sp.variants),
        wall_s=time.perf_counter() - t0,
        worlds_detail=[
            {
                "label": v.label,
                "variant": v.to_dict(),
                "outcome": w.outcome,
                "lifted": w.lifted,
                "shake_held": w.lift.shake_held,
                "rise": w.lift.rise,
                "diagnosis": Diagnosis.of(w.diagnosis).cls,
                "variant_readback": w.variant_readback,
            }
            for v, w in zip(sp.variants, worlds)
        ],
    )
    return out


def summarize_over(results: dict[str, dict], failed: dict[str, str], versions: dict, *, wall_s: float) -> dict:
    """The summary over recordings: per recording its headline figures, and their spread."""
    runs = {s: _Summary.from_dict(r) for s, r in results.items()}
    rows = {
        s: {
            k: r.get(k)
            for k in (
                "object",
                "object_mass_kg",
                "success_fraction",
                "min_effort_lifting_at_mu1_nm",
                "min_mu_lifting_at_study_effort",
                "perturbed_success_fraction",
                "wall_s",
                "worlds",
                "png",
            )
        }
        | {"ablation_lifted": runs[s].ablation.lifted}
        for s, r in results.items()
    }
    sf = [r.success_fraction for r in runs.values()]
    return {
        "recordings": len(results),
        "failed": failed,
        "versions": versions,
        "wall_s": wall_s,
        "median_success_fraction": float(np.median(sf)) if sf else None,
        "ablation_lifted": sum(bool(r.ablation.lifted) for r in runs.values()),
        "per_recording": rows,
    }


@dataclass(frozen=True)
class _Ablation(JsonRecord):
    lifted: bool | None = None


@dataclass(frozen=True)
class _Summary(JsonRecord):
    """What the summary over recordings reads of a recording's result."""

    success_fraction: float | None = None
    ablation: _Ablation = read_as(_Ablation.from_dict)
