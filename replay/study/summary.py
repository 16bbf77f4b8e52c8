"""A study's summary: the study record (:class:`replay.results.records.StudyRecord`, fields: docs/results.md) and its
CSVs, from each protocol's own rows and counts."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from replay.config import ReplayConfig
from replay.protocol.protocols.base import Protocol, ResultKey, all_protocols, primary_protocol
from replay.protocol.protocols.counting import summarize
from replay.protocol.verdict import verdict_of
from replay.results.files import rows_csv
from replay.results.records import RolloutRecord, StudyRecord
from replay.results.study_rows import PAIR_PREFIX
from replay.results.verdict_record import Verdict
from replay.sim import physics
from replay.study.batch import package_versions
from replay.study.job import failed_recordings


@dataclass(frozen=True)
class Rollouts:
    """A study's rollouts so far: ``results`` ``{ResultKey: RolloutRecord}``, ``failed`` ``{ResultKey: reason}``;
    ``wall_s`` s; their files in ``rdir``."""

    seqs: list[str]
    results: dict
    failed: dict
    wall_s: float
    rdir: Path
    out_dir: Path

    def json_path(self, key: ResultKey) -> str:
        """The rollout JSON of ``key``, relative to ``out_dir``."""
        return os.path.relpath(self.rdir / f"{key.stem}.json", self.out_dir)


def ran_protocols(protocols: list[str]) -> list[Protocol]:
    """The study's protocols in registry order; the primary protocol where none ran."""
    return [p for p in all_protocols() if p.name in protocols] or [primary_protocol()]


def study_counts(protocols: list[str], by_protocol: dict[str, list], failed: dict, *, wall_s: float) -> dict:
    """A study's ``counts`` (docs/results.md): each protocol's under its name, and its first protocol's at the top
    level; ``failed``: per recording; ``wall_s`` s."""
    ran = ran_protocols(protocols)
    per = {p.name: p.counts(by_protocol.get(p.name) or [], failed, wall_s) for p in ran}
    top = per[ran[0].name]
    if not ran[0].judged_on_lift:  # the fields the study's readers expect of the top level
        top = dict(summarize([], failed, wall_s), **top)
    return dict(top, protocol=ran[0].name, **per)


def protocol_rows(proto: Protocol, recs: list[RolloutRecord], ro: Rollouts) -> list[dict]:
    """The study's rows of ``proto``'s rollout records, with ``verdict`` where judged on a lift and ``p_lift`` /
    ``p_lift_corrupted`` where sampled."""
    rows = []
    for r in recs:
        row = proto.row(r, ro.json_path(ResultKey(r.sequence, proto.name)))
        if proto.judged_on_lift:
            row["verdict"] = verdict_of(r).to_dict()
        if proto.sampled and r.sampled.p_lift:
            row["p_lift"] = r.sampled.p_lift
        if proto.sampled and r.sampled.p_lift_corrupted:
            row["p_lift_corrupted"] = r.sampled.p_lift_corrupted
        rows.append(row)
    return rows


def study_record(
    dataset: str,
    config: ReplayConfig,
    chash: str,
    *,
    ablation: bool,
    manosim_dir: Path,
    protocols: list[str],
    ro: Rollouts,
) -> StudyRecord:
    """The study record of the rollouts done so far; the counts' failures are per recording, ``failed`` per key."""
    ran = ran_protocols(protocols)
    docs = {p.name: [ro.results[k] for s in ro.seqs if (k := ResultKey(s, p.name)) in ro.results] for p in ran}
    counts = study_counts(protocols, docs, failed_recordings(ro.failed), wall_s=ro.wall_s)
    rec = StudyRecord(
        dataset=dataset,
        hand={
            "model": config.hand,
            "shape": physics.choice_value(config, "hand_shape"),
            "manosim_dir": str(manosim_dir),
            "mjcf": "per rollout (`hand_mjcf`: the hand side of its recording)",
        },
        config=config.to_dict(),
        config_hash=chash,
        ablation=ablation,
        versions=package_versions(),
        sequences=list(ro.seqs),
        counts=counts,
        failed={k.text: why for k, why in ro.failed.items()},
        inputs={k: v for p in ran for r in docs[p.name] for k, v in (r.inputs or {}).items()},
        protocols=list(protocols),
    )
    for p in ran:
        rec.set_rows(p.rows_field, protocol_rows(p, docs[p.name], ro))
    return rec


def study_csvs(study: StudyRecord) -> dict[str, str]:
    """``{suffix: CSV text}`` of a study's rows (``<study stem><suffix>.csv``, one per ``csv_suffix``, the first
    protocol in registry order): :data:`VERDICT_COLUMNS` where judged on a lift, the protocol's columns, then each
    ``lifted_<pair>``. ``study.csv`` is always written (its header alone where empty), another only with rows."""
    out: dict[str, str] = {}
    ran = ran_protocols(study.protocols or [])
    for p in [*ran, primary_protocol()]:
        rows = study.rows_of(p.rows_field) if p in ran else []
        if p.csv_suffix is None or p.csv_suffix in out or (p.csv_suffix and not rows):
            continue
        pairs = dict.fromkeys(k for r in rows for k in r if k.startswith(PAIR_PREFIX))
        lead = VERDICT_COLUMNS if p.judged_on_lift else ()
        cols = (*lead, *p.row_fields, *(() if "json" in p.row_fields else ("json",)), *pairs)
        out[p.csv_suffix] = rows_csv([_csv_row(r) for r in rows] if lead else rows, cols)
    return out


#: study.csv's first columns: a recording's verdict (:class:`replay.results.verdict_record.Verdict`'s JSON keys)
VERDICT_COLUMNS = ("verdict", "reason", "p_lift", "p_lo", "p_hi")


def _csv_row(row: dict) -> dict:
    """A row as study.csv writes it: :data:`VERDICT_COLUMNS` (empty without a verdict) over the JSON objects."""
    v = Verdict.from_dict(row.get("verdict"))
    flat = (
        dict.fromkeys(VERDICT_COLUMNS) if v is None else {k: x for k, x in v.to_dict().items() if k in VERDICT_COLUMNS}
    )
    return {**row, **flat}
