"""Attribution study: one factor at a time from today's protocol toward a HUG-style replay; factors, batches and the
result's fields: docs/attribution.md."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from functools import partial as bind

from replay.config import ReplayConfig
from replay.protocol.diagnosis import CLASSES
from replay.protocol.sampling import run_samples
from replay.results.json_record import JsonRecord, keyed, read_as
from replay.results.records import RolloutRecord
from replay.results.verdict_record import Diagnosis
from replay.sim import physics
from replay.sim.engine.variants import Variant
from replay.sim.hand_assets import resolve_hand_variant
from replay.sim.made_mass import made_mass
from replay.study.batch import run_batch
from replay.study.bridge import merge_config
from replay.study.prepare import prepare_recording

#: physics choices a world of the batch takes (:data:`replay.sim.engine.variants.ROWS`)
WORLD_ROWS = ("hand_object_friction", "finger_effort_limit", "object_density_scale")


def _copy(d) -> dict:
    return dict(d or {})


@dataclass(frozen=True)
class Factor(JsonRecord):
    """A factor: its name, value and source, its physics ``choices`` and ``config`` overrides."""

    name: object = None
    value: object = None
    source: object = None
    choices: dict = read_as(_copy, factory=dict)
    config: dict = read_as(_copy, factory=dict)


@dataclass(frozen=True)
class FactorRun(JsonRecord):
    """What a factor's summary counts of one recording's row (or ``{"error": text}``)."""

    lifted: bool | None = None
    outcome: str | None = None
    cls: str | None = keyed("class")
    shake_held: bool | None = None
    error: str | None = None


def factor_world(factor: Factor) -> dict:
    """A factor's :data:`WORLD_ROWS` choices of a plain value (a uniform effort limit, not a per-protocol one)."""
    ch = factor.choices
    return {k: v for k, v in ch.items() if k in WORLD_ROWS and not (isinstance(v, (dict, str)) or v is None)}


def factor_config(factor: Factor) -> dict:
    """A factor's config overrides: its ``config`` and, as ``physics_overrides``, its choices no world takes."""
    world = factor_world(factor)
    rest = {k: v for k, v in factor.choices.items() if k not in world}
    cfg = dict(factor.config)
    if rest:
        cfg["physics_overrides"] = {**cfg.get("physics_overrides", {}), **rest}
    return cfg


def config_key(factor: Factor) -> str:
    """The batch a factor belongs to: its config overrides as sorted JSON."""
    return json.dumps(factor_config(factor), sort_keys=True)


def factor_variant(factor: Factor, mass_kg: float) -> Variant:
    """The :class:`Variant` of a factor for an object of ``mass_kg`` kg (its :data:`WORLD_ROWS` choices). Raises
    DataError: an unknown physics choice or a value it does not take."""
    for k, v in factor.choices.items():
        physics.check_value(k, v)
    return Variant.of_rows(factor_world(factor), {"object_mass": mass_kg}, label=str(factor.name))


@dataclass(frozen=True)
class _Finger(JsonRecord):
    closure_deg: float | None = None


@dataclass(frozen=True)
class _Pad(JsonRecord):
    """A rollout's ``pad_compression`` (:mod:`replay.protocol.pad_compression`): deg."""

    fingers_closed: object = None
    max_joint_change_deg: float | None = None
    fingers: dict = read_as(_Finger.by_key)


def _row(r: RolloutRecord) -> dict:
    """One recording's figures under one factor."""
    d = Diagnosis.of(r.diagnosis)
    out = {
        "lifted": bool(r.lifted),
        "outcome": r.outcome,
        "class": d.cls,
        "batch_worlds": r.timing.batch_worlds,
        "shake_held": r.lift.shake_held,
        "rise_mm": round(float(r.lift.rise) * 1000.0, 1),
        "peak_rise_mm": d.figure.get("peak_rise_mm"),
        "object_mass": r.scene.object_mass,
    }
    if r.lift.pad_compression:
        p = _Pad.from_dict(r.lift.pad_compression)
        out.update(
            pad_fingers=p.fingers_closed,
            pad_max_joint_deg=round(p.max_joint_change_deg, 2),
            pad_closure_deg={k: round(v.closure_deg, 2) for k, v in p.fingers.items()},
        )
    return out


def run_recording(dataset: str, sequence: str, data_dir, *, manosim_dir, factors: list[Factor], base: dict) -> dict:
    """Every factor on one recording: ``{factor index: row}``, ``{"error": text}`` where a scene could not be built
    or stepped; ``base``: the ReplayConfig dict every factor starts from."""
    hands: dict[tuple, list] = {}
    out, mass = {}, None
    for i, f in enumerate(factors):
        try:
            cfg = ReplayConfig.from_dict(merge_config(base, json.loads(config_key(f))))
            cfg = resolve_hand_variant(cfg, dataset).validate()
        except Exception as e:  # a factor's bad config is its own row's error
            out[i] = {"error": f"{type(e).__name__}: {e}"}
            continue
        hands.setdefault((cfg.hand, physics.choice_value(cfg, "hand_shape"), cfg.approach_window_s), []).append(
            (i, cfg)
        )
    for members in hands.values():
        try:
            rec, coords, mjcf = prepare_recording(
                dataset, sequence, data_dir, manosim_dir=manosim_dir, cfg=members[0][1]
            )[:3]
            mass = made_mass(rec.target_object.asset, members[0][1]).centre_kg if mass is None else mass
        except Exception as e:  # the hand's inputs: every factor of it fails alike
            out.update({i: {"error": f"{type(e).__name__}: {e}"} for i, _ in members})
            continue
        parts = [members]
        try:
            out.update(_run_factors(rec, coords, mjcf, factors, members, mass))
            continue
        except Exception:  # one factor's failure is a result of that factor, not its hand's
            parts = list(_by_config(factors, members).values())
        for part in parts:
            try:
                out.update(_run_factors(rec, coords, mjcf, factors, part, mass))
            except Exception as e:
                out.update({i: {"error": f"{type(e).__name__}: {e}"} for i, _ in part})
    return out


def _by_config(factors: list[Factor], members: list) -> dict[str, list]:
    groups: dict[str, list] = {}
    for i, cfg in members:
        groups.setdefault(config_key(factors[i]), []).append((i, cfg))
    return groups


def _run_factors(rec, coords, mjcf, factors: list[Factor], members: list, mass: float) -> dict:
    """``{factor index: row}`` of ``members`` (``(index, config)``) through the one sampling path."""
    res = run_samples(
        rec, coords, str(mjcf), cfg=members[0][1], samples=[(c, factor_variant(factors[i], mass)) for i, c in members]
    )
    return {i: _row(RolloutRecord.from_metrics(r.metrics)) for (i, _), r in zip(members, res)}


def summarize_factor(factor: Factor, rows: dict[str, dict]) -> dict:
    """A factor's row of the result from its per-recording rows."""
    runs = {s: FactorRun.from_dict(r) for s, r in rows.items()}
    ok = {s: r for s, r in runs.items() if r.error is None}
    diag = {c: n for c in CLASSES if (n := sum(r.cls == c for r in ok.values()))}
    return {
        "name": factor.name,
        "value": factor.value,
        "source": factor.source,
        "choices": factor.choices,
        "config": factor.config,
        "lifted": sum(r.lifted for r in ok.values()),
        "of": len(rows),
        "diagnosis": diag,
        "shake_held": sum(bool(r.shake_held) for r in ok.values()),
        "unstable": sum(r.outcome == "unstable" for r in ok.values()),
        "errors": len(rows) - len(ok),
        "lifted_names": sorted(s.removesuffix("_lift") for s, r in ok.items() if r.lifted),
        "recordings": rows,
    }


def run_attribution(
    dataset: str,
    sequences: list[str],
    data_dir,
    *,
    manosim_dir,
    factors: list[dict],
    base: ReplayConfig | None = None,
    workers: int = 0,
    log=print,
    partial=None,
) -> dict:
    """Every factor on every recording; ``partial(result so far)`` after each recording.

    Returns:
        ``{"dataset", "base_config", "factors": [summarize_factor rows], "wall_s", "failed", "versions"}``.
    """
    t0 = time.perf_counter()
    factors = [Factor.from_dict(f) for f in factors]
    base_d = (base or ReplayConfig()).to_dict()
    base_d.pop("dt", None)
    per: dict[str, dict] = {}

    def done(s: str, res: dict) -> dict:
        per[s] = res
        log(f"{s}: {sum(bool(FactorRun.from_dict(r).lifted) for r in res.values())}/{len(factors)} factors lift")
        rows = [summarize_factor(f, {q: per[q][i] for q in per}) for i, f in enumerate(factors)]
        out = {"dataset": dataset, "base_config": base_d, "factors": rows, "wall_s": time.perf_counter() - t0}
        if partial is not None:
            partial(out)
        return out

    results: list[dict] = []
    batch = run_batch(
        sequences,
        bind(_run_key, dataset, data_dir, manosim_dir, factors, base_d),
        workers=workers,
        write=lambda s, res: results.append(done(s, res)),
        label="attribution",
    )
    if batch.interrupted:
        raise KeyboardInterrupt
    out = (
        results[-1]
        if results
        else {
            "dataset": dataset,
            "base_config": base_d,
            "factors": [summarize_factor(f, {}) for f in factors],
            "wall_s": batch.wall_s,
        }
    )
    return out | {"failed": batch.failed, "versions": batch.versions}


def _run_key(dataset, data_dir, manosim_dir, factors, base, sequence) -> dict:
    """:func:`run_recording` with the recording last."""
    return run_recording(dataset, sequence, data_dir, manosim_dir=manosim_dir, factors=factors, base=base)
