"""What every engine keeps per world: its variant, read-back and what it has seen so far."""

from __future__ import annotations

from dataclasses import dataclass, field

from replay.sim.engine.variants import Variant


@dataclass(kw_only=True)
class WorldStatus:
    """One world of a batch.

    Attributes:
        readback: values read back after the variant's edits. capacity: contact count above which it stops.
        reason: why it stopped (None: running or ended normally). act_max: largest |finger actuator force|, N·m."""

    variant: Variant
    readback: dict = field(default_factory=dict)
    capacity: int
    alive: bool = True
    reason: str | None = None
    peak_contacts: int = 0
    act_max: float = 0.0
