"""The refine search's settings (:mod:`replay.protocol.refine`), light to import."""

from __future__ import annotations

from dataclasses import dataclass

from replay.errors import UsageError


@dataclass(frozen=True)
class RefineSettings:
    """The search's knobs (written into the results): ``worlds`` corrections per iteration (one batch), ``elite_frac``
    refit fraction, bounds ``wrist_mm`` / ``wrist_deg`` / ``finger_deg``, ``mid_lift_rise_frac`` of
    ``lifted_min_rise`` (early stop), ``patience`` iterations without a smaller success, ``neighbourhood_mm`` /
    ``_deg`` perturbation sizes, ``neighbourhood_min`` 0-1, ``second_seed`` (``seed + 1``); ``explore_until_lift``:
    the spread keeps its initial width until a world holds."""

    seed: int = 0
    worlds: int = 24
    iterations: int = 6
    elite_frac: float = 0.25
    smoothing: float = 0.7
    wrist_mm: float = 10.0
    wrist_deg: float = 10.0
    finger_deg: float = 15.0
    mid_lift_rise_frac: float = 0.25
    patience: int = 2
    explore_until_lift: bool = True
    threads: int = 1
    c_loop: bool = True
    neighbourhood_mm: float = 1.0
    neighbourhood_deg: float = 1.0
    neighbourhood_min: float = 0.8
    neighbourhood_candidates: int = 4
    second_seed: bool = True

    def validate(self) -> RefineSettings:
        """``self``. Raises UsageError on a value out of range."""
        if self.worlds < 2 or self.iterations < 1 or not 0 < self.elite_frac <= 1 or not 0 < self.smoothing <= 1:
            raise UsageError("--refine", f"settings out of range: {self}")
        if min(self.wrist_mm, self.wrist_deg, self.finger_deg) < 0 or self.threads < 1:
            raise UsageError("--refine", f"bounds and threads must be >= 0 / >= 1: {self}")
        if (
            min(self.neighbourhood_mm, self.neighbourhood_deg) < 0
            or not 0 <= self.neighbourhood_min <= 1
            or self.neighbourhood_candidates < 1
        ):
            raise UsageError("--refine", f"neighbourhood settings out of range: {self}")
        return self
