"""The named physics and condition a recording's verdict is read under; :data:`DEFAULT_JUDGE` is the one place that
says it (others: ``run_study.py --physics NAME``, ``--conditions``)."""

from __future__ import annotations

from dataclasses import dataclass

from replay.results.json_record import JsonRecord


@dataclass(frozen=True)
class Judge(JsonRecord):
    """A named physics (:data:`replay.results.physics_table.NAMES`) and a condition
    (:data:`replay.study.verdict_conditions.CONDITIONS`), with why they judge."""

    physics: str
    condition: str
    source: str

    def to_dict(self) -> dict:
        return {"physics": self.physics, "condition": self.condition, "source": self.source}


#: the default judge: the physics fitted once on GRAB's 30 lifts (``calibrated``: replay/results/calibration.json, what
#: scripts/calibrate.py chose by the declared rule of replay.study.calibration), as it replays: the chosen condition's
#: overrides are part of that choice (tests/test_calibration.py checks it)
DEFAULT_JUDGE = Judge(
    physics="calibrated",
    condition="as_replayed",
    source="the best of the declared candidates (sampled centres x wrist gravity conditions, on the subject's fitted "
    "hand) on GRAB's 30 lifts by the declared rule (replay/results/calibration.json, docs/results/calibration-54.md)",
)
