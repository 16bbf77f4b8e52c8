"""The bridge from the hug-oracle protocol to the lift protocol, every row on every recording (docs/oracle.md,
"The bridge": its paths, counts and files). A row: ``{"id", "path", "element", "value", "protocol", "config":
{ReplayConfig overrides}, "count"}``."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from replay.config import ReplayConfig
from replay.fileio import atomic_write_text
from replay.results.json_record import JsonRecord, keyed
from replay.results.protocol_results import OracleResult
from replay.results.records import RolloutRecord
from replay.results.verdict_record import Diagnosis
from replay.sim import physics
from replay.sim.hand_assets import resolve_hand_variant
from replay.sim.physics import apply_physics
from replay.study.batch import run_batch
from replay.study.console import quiet_libraries

ORACLE = "hug-oracle"


@dataclass(frozen=True)
class BridgeRow(JsonRecord):
    """A row of the bridge (module doc)."""

    id: str | None = None
    path: str | None = None
    element: str | None = None
    value: str | None = None
    protocol: str | None = None
    config: dict | None = None
    count: str | None = None


def _drive(nm: float) -> dict:
    """The hug-oracle's finger effort limit ``nm`` N·m."""
    return {"physics_overrides": {"finger_effort_limit": {ORACLE: nm}}}


#: (element, the field, the lift protocol's value, label oracle -> lift); in the cumulative order
ELEMENTS = (
    ("start", {"oracle": {"start": "recorded"}}, "synthetic 3 cm -> recorded approach"),
    ("extra flexion", {"oracle": {"extra_flexion_deg": 0.0}}, "5 -> 0 deg"),
    ("drive", _drive(0.4), "no force range -> 0.4 N·m"),
    ("contact", {"oracle": {"contact": "compiled"}}, "manosim as authored -> ours (mixed pairs)"),
    ("step", {"oracle": {"dt": None}}, "2 ms -> 1/240 s"),
    ("success", {"oracle": {"success": "lift"}}, "off the table (0.5 m) -> rise + clearance + hold (18 cm)"),
)
#: extra rows on the oracle: values beside the two ends
EXTRA = (
    ("extra flexion", {"oracle": {"extra_flexion_deg": 10.0}}, "10 deg"),
    ("extra flexion", {"oracle": {"extra_flexion_deg": 15.0}}, "15 deg"),
    ("drive", _drive(1.0), "1 N·m"),
)

#: ``bridge_rows("authored")``'s elements before the protocol's: each physics choice of the ``replay`` physics
#: (``physics_overrides``); no contact element (as authored, the contact is MuJoCo's mixing, as the lift's is)
PHYSICS_ELEMENTS = (
    ("wrist gravity compensation", {"wrist_gravity_compensation": True}, "off -> +M g"),
    ("wrist law", {"wrist_law": "wrench"}, "the MJCF's actuators -> our wrench (geodesic, feed-forward)"),
    (
        "solver options",
        {"integrator": "implicitfast", "cone": "elliptic", "impratio": 10.0},
        "Euler, pyramidal, impratio 1 -> implicitfast, elliptic, 10",
    ),
    ("object margin", {"object_margin": "zero"}, "0.5 mm (asset) -> 0"),
    ("finger damping", {"finger_flutter_damping": "raised"}, "as authored -> raised to the flutter bound"),
    ("closure profile", {"closure_profile": "minjerk"}, "linear -> min-jerk"),
    ("wrist target", {"wrist_target_interpolation": "per_step"}, "held per control frame -> interpolated per step"),
    ("object mass", {"object_mass_model": "as_made"}, "the MJCF's 1250 kg/m^3 -> weighed as made"),
    ("pad compression", {"pad_compression": 3.0}, "the recorded fingers -> 3 mm"),
    (
        "finger strength",
        {"finger_effort_limit": {"lift": "human"}},
        "0.4 N·m at every joint -> each finger's maximal force",
    ),
)
#: extra rows on the authored oracle
PHYSICS_EXTRA = (
    ("contact", {"contact_mixing": "hand"}, "the hand's values (manosim's oracle contact)"),
    ("solver options", {"cone": "elliptic", "impratio": 10.0}, "elliptic and impratio 10 only"),
)


def _physics(over: dict) -> dict:
    return {"physics_overrides": dict(over)}


def merge_config(acc: dict, cfg: dict) -> dict:
    """``acc`` with ``cfg`` over it, dict values merged key by key, recursively."""
    return (
        {
            k: (merge_config(acc[k], v) if isinstance(v, dict) and isinstance(acc.get(k), dict) else v)
            for k, v in {**acc, **cfg}.items()
        }
        if cfg
        else dict(acc)
    )


def bridge_rows(physics: str = "replay") -> list[dict]:
    """Every row of the bridge, in table order; ``"authored"``: :data:`PHYSICS_ELEMENTS` first."""
    if physics == "authored":
        elements = [(n, _physics(c), lab) for n, c, lab in PHYSICS_ELEMENTS] + [
            e for e in ELEMENTS if e[0] != "contact"
        ]
        extra = [(n, _physics(c), lab) for n, c, lab in PHYSICS_EXTRA] + list(EXTRA)
    else:
        elements, extra = list(ELEMENTS), list(EXTRA)
    rows = [_row("oracle", "oracle", "-", f"hug-oracle as configured ({physics} physics)", {})]
    rows += [_row(f"oracle/{n}", "oracle", n, label, dict(cfg)) for n, cfg, label in elements]
    rows += [_row(f"oracle/{n}/{label}", "oracle", n, label, dict(cfg)) for n, cfg, label in extra]
    acc: dict = {}
    for name, cfg, label in elements:
        acc = merge_config(acc, cfg)
        rows.append(_row(f"cumulative/{name}", "cumulative", f"+ {name}", label, dict(acc)))
    for count, label in (
        ("hold", "the lift protocol, judged at the end of the hold"),
        ("shake", "+ held through the shake"),
        ("release", "+ falls after the release (lift)"),
    ):
        rows.append(
            _row(
                f"cumulative/lift/{count}",
                "cumulative",
                f"lift protocol ({count})",
                label,
                _lift_end(acc),
                protocol="lift",
                count=count,
            )
        )
    for name, cfg, label in elements:  # every element switched, one set back to the oracle's
        value = label.split(" -> ")[0] + " (oracle's)"
        rows.append(_row(f"lift/{name}", "lift", name, value, _drop(acc, cfg)))
    return rows


def _row(
    row_id: str, path: str, element: str, value: str, config: dict, *, protocol: str = ORACLE, count: str = "lifted"
) -> dict:
    return dict(id=row_id, path=path, element=element, value=value, protocol=protocol, config=config, count=count)


def _lift_end(acc: dict) -> dict:
    """The lift protocol's rows' config: ``acc``'s physics overrides without the hug-oracle's own entries."""
    over = _drop(acc.get("physics_overrides", {}), {"finger_effort_limit": {ORACLE: None}})
    return _physics(over) if over else {}


def _drop(over: dict, keys: dict) -> dict:
    """``over`` without the keys of ``keys`` (of a dict in both: its keys, recursively; emptied: dropped)."""
    out = {}
    for k, v in over.items():
        if k in keys and isinstance(v, dict) and isinstance(keys[k], dict):
            v = _drop(v, keys[k])
            if v:
                out[k] = v
        elif k not in keys:
            out[k] = v
    return out


def counted(row: BridgeRow, r: RolloutRecord, cfg) -> bool:
    """Whether rollout ``r`` counts as lifted under ``row.count`` (docs/oracle.md); ``cfg``: the config it ran with."""
    if row.count == "lifted":
        return bool(r.lifted)
    hold = bool(
        r.stable
        and r.completed
        and r.lift.rise >= cfg.lift.lifted_min_rise
        and r.lift.clearance >= cfg.lift.lifted_min_clearance
    )
    if row.count == "hold":
        return hold
    if row.count == "shake":
        return hold and bool(r.lift.shake_held)
    return bool(r.lifted) and bool(r.lift.shake_held)


@dataclass(frozen=True)
class Figures(JsonRecord):
    """What the bridge counts of one row on one recording (or ``{"error": text}``)."""

    lifted: bool | None = None
    outcome: str | None = None
    cls: str | None = keyed("class")
    error: str | None = None


@dataclass(frozen=True)
class _RecordingFile(JsonRecord):
    """A recording's file (``<out stem>_recordings/<sequence>.json``): its rows' hash and figures by row id."""

    rows_hash: str | None = None
    rows: dict | None = None


def _key(row: BridgeRow) -> str:
    return json.dumps([row.protocol, row.config], sort_keys=True)


def rows_hash(rows: list[dict], base: dict) -> str:
    """16 hex of SHA-256 over the rows and the base config."""
    return hashlib.sha256(json.dumps([rows, base], sort_keys=True, default=str).encode()).hexdigest()[:16]


def _figures(row: BridgeRow, r: RolloutRecord, cfg: ReplayConfig) -> dict:
    o = r.result if isinstance(r.result, OracleResult) else OracleResult()
    return {
        "lifted": counted(row, r, cfg),
        "outcome": r.outcome,
        "class": Diagnosis.of(r.diagnosis).cls,
        "rise_mm": round(float(r.lift.rise) * 1000.0, 1),
        "off_table": o.off_table,
        "end_rise_mm": None if o.end_rise_mm is None else round(o.end_rise_mm, 1),
        "shake_held": r.lift.shake_held,
        "contacts_force_at_lift": r.grasp.contacts_force_at_lift,
    }


def run_recording(dataset: str, sequence: str, data_dir, *, manosim_dir, rows: list[BridgeRow], base: dict) -> dict:
    """Every row on one recording: ``{row id: figures}``, ``{"error": text}`` where a rollout failed."""
    from replay.protocol.rollout import run_rollouts  # in the worker
    from replay.sim.engine.variants import Variant
    from replay.study.prepare import prepare_recording

    done, prepared, out = {}, {}, {}
    for row in rows:
        cfg = resolve_hand_variant(apply_physics(ReplayConfig.from_dict(merge_config(base, row.config))), dataset)
        k = _key(row)
        try:
            if k not in done:
                hk = (cfg.hand, physics.choice_value(cfg, "hand_shape"), cfg.approach_window_s)
                if hk not in prepared:
                    prepared[hk] = prepare_recording(dataset, sequence, data_dir, manosim_dir=manosim_dir, cfg=cfg)[:3]
                rec, coords, mjcf = prepared[hk]
                got = run_rollouts(rec, coords, str(mjcf), cfg=cfg, variants=[Variant()], protocol=row.protocol)[0]
                done[k] = RolloutRecord.from_metrics(got.metrics)
            out[row.id] = _figures(row, done[k], cfg)
        except Exception as e:  # noqa: BLE001  (kept as the row's result)
            out[row.id] = {"error": f"{type(e).__name__}: {e}"}
    return out


def summarize_rows(rows: list[dict], per: dict[str, dict]) -> list[dict]:
    """Each row with its counts over the recordings done."""
    out = []
    for row in rows:
        rid = BridgeRow.from_dict(row).id
        res = {s: Figures.from_dict(r[rid]) for s, r in per.items() if rid in r}
        ok = {s: r for s, r in res.items() if r.error is None}
        diag: dict = {}
        for r in ok.values():
            if not r.lifted and r.cls:
                diag[r.cls] = diag.get(r.cls, 0) + 1
        out.append(
            dict(
                row,
                lifted=sum(r.lifted for r in ok.values()),
                of=len(res),
                errors=len(res) - len(ok),
                unstable=sum(r.outcome == "unstable" for r in ok.values()),
                diagnosis=diag,
                lifted_names=sorted(s.removesuffix("_lift") for s, r in ok.items() if r.lifted),
            )
        )
    return out


def run_bridge(
    dataset: str,
    sequences: list[str],
    data_dir,
    *,
    manosim_dir,
    rows: list[dict],
    out: Path,
    base: ReplayConfig | None = None,
    workers: int = 0,
    log=print,
) -> dict:
    """Run (or resume) the bridge, writing ``out`` after every recording; returns what it wrote."""
    t0 = time.perf_counter()
    base_d = (base or ReplayConfig()).to_dict()
    base_d.pop("dt", None)
    h = rows_hash(rows, base_d)
    rdir = out.parent / f"{out.stem}_recordings"
    rdir.mkdir(parents=True, exist_ok=True)
    per: dict[str, dict] = {}
    for s in sequences:
        p = rdir / f"{s.replace('/', '__')}.json"
        if p.is_file():
            kept = _RecordingFile.from_dict(json.loads(p.read_text()))
            if kept.rows_hash == h:
                per[s] = kept.rows
    todo = [s for s in sequences if s not in per]
    log(f"bridge {dataset}: {len(sequences)} recording(s) x {len(rows)} rows; {len(per)} kept, {len(todo)} to run")

    def write() -> dict:
        doc = {
            "dataset": dataset,
            "base_config": base_d,
            "rows_hash": h,
            "rows": summarize_rows(rows, {s: per[s] for s in sequences if s in per}),
            "recordings": {s: per[s] for s in sequences if s in per},
            "wall_s": time.perf_counter() - t0,
        }
        atomic_write_text(out, json.dumps(doc, indent=1, default=str))
        return doc

    def finished(s: str, res: dict) -> None:
        per[s] = res
        atomic_write_text(rdir / f"{s.replace('/', '__')}.json", json.dumps({"rows_hash": h, "rows": res}, indent=1))
        n = sum(bool(Figures.from_dict(r).lifted) for r in res.values())
        log(f"{s}: lifted under {n}/{len(rows)} rows ({len(per)}/{len(sequences)} done)")
        write()

    res = run_batch(
        todo,
        partial(_run_quietly, dataset, data_dir, manosim_dir, BridgeRow.many(rows), base_d),
        write=finished,
        workers=workers,
        label="bridge",
    )
    if res.failed:  # a worker that died or hung: that recording's rows are missing, the others counted
        log(
            f"bridge: {len(res.failed)} recording(s) not done: " + "; ".join(f"{k}: {v}" for k, v in res.failed.items())
        )
    if res.interrupted:
        raise KeyboardInterrupt
    return write()


def _run_quietly(dataset: str, data_dir, manosim_dir, rows: list[BridgeRow], base: dict, sequence: str) -> dict:
    """:func:`run_recording` with Warp's banner and Newton's log kept off the console."""
    quiet_libraries()
    return run_recording(dataset, sequence, data_dir, manosim_dir=manosim_dir, rows=rows, base=base)
