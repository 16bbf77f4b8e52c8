"""The default judge: the named physics and the condition a recording's verdict is read under. :data:`DEFAULT_JUDGE` is
the one place that says it (``ReplayConfig.physics``'s default, the sampled verdict's first condition,
:func:`replay.protocol.verdict.verdict_of`); others: ``run_study.py --physics NAME``, ``--conditions``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Judge:
    """A named physics (:data:`replay.results.physics_table.NAMES`) and a condition
    (:data:`replay.study.verdict_conditions.CONDITIONS`), with why they judge."""

    physics: str
    condition: str
    source: str

    def to_dict(self) -> dict:
        return {"physics": self.physics, "condition": self.condition, "source": self.source}


#: the default judge. Source: GRAB's 30 lifts, the declared rule of replay.study.calibration (balanced accuracy of
#: p_lift >= 0.5, real vs corrupted): wrist_uncompensated beats as_replayed under the replay physics
#: (docs/results/calibration-54.md)
DEFAULT_JUDGE = Judge(
    physics="replay",
    condition="wrist_uncompensated",
    source="the better judge of the two wrist gravity conditions on GRAB's 30 lifts by the declared rule "
    "(docs/results/calibration-54.md)",
)
