"""The study's append-only records (format: :mod:`replay.results.study_log`), when ``study.json`` is remade, and what
``--resume`` reads back (docs/results.md)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from replay.protocol.protocols.base import ResultKey
from replay.results.json_record import JsonRecord
from replay.results.study_log import append_record, latest_by_key, read_records, records_path, repair_tail

#: the summary is remade after at least this many new records ...
SUMMARY_EVERY_MIN = 25
#: ... or this share of the study's jobs, whichever is more (a fixed count would grow with the study's square)
SUMMARY_SHARE = 0.1
#: ... or when this long has passed since the last one and a record is new, s (chosen here)
SUMMARY_INTERVAL_S = 300.0


def summary_due(new_records: int, since_s: float, total_jobs: int) -> bool:
    """Whether to remake the summary now: ``new_records`` since the last one, written ``since_s`` s ago."""
    if new_records <= 0:
        return False
    every = max(SUMMARY_EVERY_MIN, math.ceil(SUMMARY_SHARE * total_jobs))
    return new_records >= every or since_s >= SUMMARY_INTERVAL_S


@dataclass(frozen=True)
class JobLine(JsonRecord):
    """A job's record as read back (``status`` ``ok``, ``error``, ``refused``; ``wall_s``: the study's then, s)."""

    status: str | None = None
    config_hash: str | None = None
    wall_s: float | None = None
    reason: object = None


class StudyRecords:
    """The records file of the study at ``out`` (``<stem>.records.jsonl``), read once (a torn last line cut off)
    and appended to as jobs end; ``fresh``: an earlier study's records there are removed.

    Raises:
        OSError: the records file cannot be read, cut or removed.
        ResultsFormatError: a line before the last is damaged.
    """

    def __init__(self, out: Path, fresh: bool, *, chash: str, rdir: Path):
        self.path, self.chash, self.rdir = records_path(out), chash, Path(rdir)
        self.out_dir = Path(out).parent.resolve()
        if fresh:
            self.path.unlink(missing_ok=True)
        else:
            repair_tail(self.path)
        self.latest = {k: JobLine.from_dict(r) for k, r in latest_by_key(read_records(self.path)).items()}

    def failed_last(self, key: ResultKey) -> bool:
        """Whether the job's latest record is a failure."""
        rec = self.latest.get(key.text)
        return rec is not None and rec.status != "ok"

    def failures(self) -> dict[str, tuple[str, bool]]:
        """``{key: (reason, refused)}`` of the jobs whose latest record (of this config) is a failure."""
        return {
            k: (str(r.reason), r.status == "refused")
            for k, r in self.latest.items()
            if r.status != "ok" and r.config_hash == self.chash
        }

    def wall_s(self) -> float:
        """The study's wall time at its last record of this config, s (0 when none)."""
        return max((float(r.wall_s or 0.0) for r in self.latest.values() if r.config_hash == self.chash), default=0.0)

    def seed(self, results: dict, carried: dict, *, wall_s: float) -> int:
        """Append in one write a record for each kept result and carried failure whose latest record is not already
        that, so the records list the whole study; returns the lines appended."""
        lines = [
            (k, self._line(k, "ok", doc, wall_s))
            for k, doc in results.items()
            if self.latest.get(k.text, JobLine()).status != "ok"
        ]
        lines += [
            (k, self._line(k, "refused" if refused else "error", why, wall_s))
            for k, (why, refused) in carried.items()
            if not self.failed_last(k)
        ]
        if lines:
            append_record(self.path, [ln for _, ln in lines])
            self.latest.update({k.text: JobLine.from_dict(ln) for k, ln in lines})
        return len(lines)

    def append(self, key: ResultKey, status: str, value, *, wall_s: float) -> None:
        """One finished job's record (``value``: its rollout record for ``ok``, else its one-line reason). Raises
        OSError: the append failed."""
        line = self._line(key, status, value, wall_s)
        append_record(self.path, [line])
        self.latest[key.text] = JobLine.from_dict(line)

    def _line(self, key: ResultKey, status: str, value, wall_s: float) -> dict:
        line = {"key": key.text, "status": status, "config_hash": self.chash, "wall_s": round(float(wall_s), 3)}
        if status == "ok":  # value: the rollout record
            line.update(
                sequence=key.sequence,
                protocol=key.protocol,
                job_s=value.timing.wall_s_total,
                json=os.path.relpath(self.rdir / f"{key.stem}.json", self.out_dir),
            )
        else:
            line["reason"] = str(value)
        return line
