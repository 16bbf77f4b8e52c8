"""How far a study is, in recordings, and about how long it has left: a job costs ``a + b * sampled worlds``, fitted
by least squares to the finished jobs' wall times (prior ``1 + SAMPLE_COST * worlds``)."""

from __future__ import annotations

import numpy as np

#: the prior cost of one sampled world in jobs; source: the per-job wall times of issue 56's small sampled studies
SAMPLE_COST = 0.1


def sample_worlds(job) -> int:
    """The sampled worlds of a :class:`replay.study.job.Job`: its samples per condition, each corruption's too."""
    return int(job.samples) * len(job.conditions) * (1 + len(job.corruptions)) if job.samples else 0


class Progress:
    """Recordings done and the time left of a study's jobs ``(recording, sampled worlds)``."""

    def __init__(self, jobs: list[tuple[str, int]]):
        self.left: dict[str, int] = {}
        for rec, _ in jobs:
            self.left[rec] = self.left.get(rec, 0) + 1
        self.todo = [w for _, w in jobs]
        self.finished: list[int] = []  # the sampled worlds of each job this run finished
        self.seen: list[tuple[int, float]] = []  # (worlds, wall s) of the finished jobs whose time is known

    @property
    def recordings(self) -> int:
        return len(self.left)

    @property
    def recordings_done(self) -> int:
        """Recordings whose every job this run ended."""
        return sum(n <= 0 for n in self.left.values())

    def done(self, recording: str, worlds: int, wall_s: float | None = None) -> bool:
        """A job of ``recording`` ended (``wall_s``: its own time where known); True where it was its last."""
        if worlds in self.todo:
            self.todo.remove(worlds)
        self.finished.append(worlds)
        if wall_s is not None and wall_s > 0:
            self.seen.append((worlds, float(wall_s)))
        self.left[recording] = self.left.get(recording, 1) - 1
        return self.left[recording] == 0

    def _cost(self):
        """``(a, b)``: a job's cost ``a + b * worlds`` (fitted where the times allow, else the prior)."""
        ws = np.array([w for w, _ in self.seen], float)
        ts = np.array([t for _, t in self.seen], float)
        if len(set(ws)) >= 2:
            a, b = np.linalg.lstsq(np.c_[np.ones_like(ws), ws], ts, rcond=None)[0]
            if a > 0 and b > 0:
                return float(a), float(b)
        return 1.0, SAMPLE_COST

    def left_s(self, elapsed_s: float) -> float | None:
        """Seconds left: ``elapsed_s`` x cost of the jobs to run / cost of those finished; None until a recording
        is done."""
        if not self.finished or not self.recordings_done:
            return None
        a, b = self._cost()
        done = sum(a + b * w for w in self.finished)
        return elapsed_s * sum(a + b * w for w in self.todo) / done
