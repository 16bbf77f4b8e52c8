"""The bridge: every row of :mod:`replay.study.bridge_rows` on every recording, counted (docs/oracle.md).

A recording's rows share its prepared inputs; each distinct (protocol, config) is one contact rollout. Per
recording ``<out stem>_recordings/<sequence>.json`` (a rerun keeps those whose rows and base config match); the
result: ``{"dataset", "base_config", "rows_hash", "rows": [row fields, "lifted", "of", "errors", "unstable",
"diagnosis", "lifted_names"], "recordings": {sequence: {row id: figures}}, "wall_s"}``."""

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
from replay.study.bridge_rows import BridgeRow, counted, merge_config
from replay.study.console import quiet_libraries


@dataclass(frozen=True)
class Figures(JsonRecord):
    """What the bridge counts of one row on one recording (:func:`_figures`, or ``{"error": text}``)."""

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
    """16 hex of SHA-256 over the rows and the base config (what a recording's file must match to be kept)."""
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
    """Every row on one recording: ``{row id: figures}`` (``{"error": text}`` where a rollout
    could not be built or stepped: a result of that row, not the bridge's end)."""
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
                got = run_rollouts(rec, coords, str(mjcf), cfg, [Variant()], protocol=row.protocol)[0]
                done[k] = RolloutRecord.from_metrics(got.metrics)
            out[row.id] = _figures(row, done[k], cfg)
        except Exception as e:  # noqa: BLE001  (kept as the row's result)
            out[row.id] = {"error": f"{type(e).__name__}: {e}"}
    return out


def summarize_rows(rows: list[dict], per: dict[str, dict]) -> list[dict]:
    """Each row with its counts over the recordings done (module doc)."""
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
    workers: int = 1,
    log=print,
) -> dict:
    """Run (or resume) the bridge and write ``out`` after every recording (module doc).

    Returns:
        The result dict written to ``out``.
    """
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
    """:func:`run_recording` with Warp's banner and Newton's log kept off the console, as the study's workers."""
    quiet_libraries()
    return run_recording(dataset, sequence, data_dir, manosim_dir=manosim_dir, rows=rows, base=base)
