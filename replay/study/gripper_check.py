"""The grasp-and-lift check on every object asset of a dataset (docs/gripper_check.md): ``<out>/gripper.json``
and ``gripper.csv``; each object from the first recording that grasps it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from replay.checks import load_recording
from replay.config import ReplayConfig
from replay.data import list_sequences
from replay.data.inputs import input_hashes
from replay.errors import DataError
from replay.fileio import atomic_write_text
from replay.protocol.gripper_lines import LINE_NAMES
from replay.protocol.gripper_object import check_object
from replay.protocol.gripper_phases import PhaseConfig
from replay.results.files import dumps, rows_csv
from replay.results.json_record import JsonRecord, read_as
from replay.results.records import FORMAT_VERSION
from replay.sim.gripper import FixtureConfig
from replay.study.batch import run_batch
from replay.study.console import quiet_libraries

#: the key figure (metric of the failed phase) each failure class is reported with
FIGURE = {
    "pads_touched": ("grasping", "pad_gap_mm", "mm"),
    "not_risen": ("lifting", "rise_m", "m"),
    "dropped_in_hold": (None, "drop_m", "m"),
    "left_jaws_in_shake": ("shake", "max_separation_mm", "mm"),
    "did_not_fall": ("dropping", "fall_m", "m"),
    "positioning_timeout": ("positioning", "error_mm", "mm"),
}
_RESULT_FIELDS = ("object", "recording", "mass_kg", "jaw_force_n", "passed", "verdict", "failed_phase", "furthest_line")
ROW_FIELDS = (
    *_RESULT_FIELDS,
    "passing_lines",
    *(f"{n}_{k}" for n in LINE_NAMES for k in ("result", "figure")),
    "wall_s",
)


@dataclass
class GripperRecord:
    """``gripper.json``: what ran, with what, and every object's per-line, per-phase result."""

    format_version: int = FORMAT_VERSION
    kind: str = "gripper_check"
    dataset: str | None = None
    config: dict = field(default_factory=dict)
    config_hash: str | None = None
    versions: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    objects: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    failed: dict = field(default_factory=dict)
    wall_s: float | None = None
    workers: int = 0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def full_config(config: ReplayConfig, fixture: FixtureConfig, pc: PhaseConfig) -> dict:
    """``{"replay", "fixture", "phases"}``: every setting, SI units."""
    return {"replay": config.to_dict(), "fixture": fixture.to_dict(), "phases": pc.to_dict()}


@dataclass(frozen=True)
class PhaseResult(JsonRecord):
    """One phase of a line: ran, passed, its metrics."""

    name: str | None = None
    ran: bool | None = None
    passed: bool | None = None
    metrics: dict = read_as(lambda d: d or {})


@dataclass(frozen=True)
class _Name(JsonRecord):
    name: str | None = None


@dataclass(frozen=True)
class LineResult(JsonRecord):
    """One grasp line's result."""

    line: _Name = read_as(_Name.from_dict)
    passed: bool | None = None
    failure_class: str | None = None
    unstable_reason: str | None = None
    phases: list[PhaseResult] = read_as(PhaseResult.many)


@dataclass(frozen=True)
class ObjectResult(JsonRecord):
    """An object's result: the lines that pass and every line's result."""

    passing_lines: list | None = None
    lines: list[LineResult] = read_as(LineResult.many)


def _line_figure(line: LineResult) -> str | None:
    if line.passed:
        return None
    phase, key, unit = FIGURE.get(line.failure_class, (None, None, None))
    for p in line.phases:
        if p.ran and not p.passed and (phase is None or p.name == phase) and key in p.metrics:
            return f"{key}={p.metrics[key]:.3g} {unit}"
    return line.unstable_reason


def object_row(res: dict) -> dict:
    """The CSV row of one object's result (:data:`ROW_FIELDS`)."""
    row = {k: res.get(k) for k in (*_RESULT_FIELDS, "wall_s")}
    got = ObjectResult.from_dict(res)
    row["passing_lines"] = " ".join(got.passing_lines or [])
    by = {ln.line.name: ln for ln in got.lines}
    for n in LINE_NAMES:
        ln = by.get(n)
        row[f"{n}_result"] = None if ln is None else ("pass" if ln.passed else ln.failure_class)
        row[f"{n}_figure"] = None if ln is None else _line_figure(ln)
    return row


def _job(dataset, data_dir, config, fixture, pc, seq) -> dict:
    """One object's result. Raises DataError: the recording or its object cannot be read."""
    quiet_libraries()
    t0 = time.perf_counter()
    rec = load_recording(dataset, seq, data_dir)
    obj = rec.target_object.asset
    res = check_object(obj, rec, config, fixture=fixture, pc=pc)
    res["inputs"] = input_hashes([rec.source, *obj.collision_meshes], data_dir)
    res.update(recording=seq, wall_s=time.perf_counter() - t0)
    return res


def object_sequences(dataset: str, data_dir: str | None, objects: list[str] | None) -> dict[str, str]:
    """``{object name: first recording grasping it}`` (GRAB: from the name, ``<object>_<intent>``). Raises DataError: an
    object in ``objects`` no recording grasps."""
    out: dict[str, str] = {}
    for seq in list_sequences(dataset, data_dir):
        name = seq.split("_")[0] if dataset == "grab" else load_recording(dataset, seq, data_dir).target_object.name
        if (objects is None or name in objects) and name not in out:
            out[name] = seq
    if objects is not None:
        missing = sorted(set(objects) - set(out))
        if missing:
            raise DataError(
                None,
                "--objects",
                f"no {dataset} recording grasps {', '.join(missing)}; have {', '.join(sorted(out)) or 'none'}",
            )
    return out


def run_gripper_check(
    dataset: str,
    out_dir: str | Path,
    data_dir: str | None = None,
    *,
    objects: list[str] | None = None,
    config: ReplayConfig | None = None,
    fixture: FixtureConfig | None = None,
    pc: PhaseConfig | None = None,
    workers: int = 0,
) -> GripperRecord:
    """Check every object of ``dataset`` (or ``objects``); write ``<out_dir>/gripper.json`` and ``gripper.csv``. Raises
    DataError: unknown dataset, no recordings, an unknown object name."""
    config, fixture, pc = config or ReplayConfig(), fixture or FixtureConfig(), pc or PhaseConfig()
    seqs = object_sequences(dataset, data_dir, objects)
    batch = run_batch(
        list(seqs.values()),
        partial(_job, dataset, data_dir, config, fixture, pc),
        label="gripper check",
        on_fail=lambda seq, e: None,
        workers=workers,
    )
    if batch.interrupted:
        raise KeyboardInterrupt
    cfg = full_config(config, fixture, pc)
    rec = GripperRecord(
        dataset=dataset,
        config=cfg,
        versions=batch.versions,
        workers=workers,
        config_hash=hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16],
    )
    rec.failed.update(batch.failed)
    for r in batch.results.values():
        rec.inputs.update(r.pop("inputs"))
        rec.objects.append(r)
        rec.rows.append(object_row(r))
    rec.wall_s = batch.wall_s
    write_gripper(Path(out_dir), rec)
    return rec


def write_gripper(out_dir: Path, rec: GripperRecord) -> None:
    """``gripper.json`` and ``gripper.csv`` in ``out_dir``, atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "gripper.json", dumps(_plain(rec.to_dict())))
    atomic_write_text(out_dir / "gripper.csv", rows_csv(rec.rows, ROW_FIELDS))


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items() if k != "trace"}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x
