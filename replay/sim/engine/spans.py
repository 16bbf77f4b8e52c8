"""Spans of control frames: an engine with ``Capabilities.frame_spans`` steps many frames of a world per call, stopping
a world where the per-frame loop would (docs/engine.md, "Spans")."""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np

from replay.sim.engine.contract import Engine, FrameSignals


@dataclass
class FrameRows:
    """One world's per-frame outputs (F frames, 17 bodies: 16 hand bodies, then the object).

    Attributes:
        body_pos: (F, 17, 3) float32 world, m. body_quat: (F, 17, 4) float32, xyzw.
        ccount: (F,) int32 hand-object contacts. wrist_err: (F,) root-body distance to the wrist target, m (not in the
            settle phase). normal_force, friction_force: (F,) N."""

    body_pos: np.ndarray
    body_quat: np.ndarray
    ccount: np.ndarray
    wrist_err: np.ndarray
    normal_force: np.ndarray
    friction_force: np.ndarray


@dataclass
class SpanEnd:
    """Where one world's span ended: ``done`` frames, ``bad_frame`` the frame a reason stopped it at (row written) or
    None, ``contacts_force`` in its last frame."""

    done: int
    bad_frame: int | None
    contacts_force: int


def frame_rows(frames: int) -> FrameRows:
    """A world's :class:`FrameRows` for ``frames`` frames, poses NaN until written."""
    return FrameRows(
        np.full((frames, 17, 3), np.nan, np.float32),
        np.full((frames, 17, 4), np.nan, np.float32),
        np.zeros(frames, np.int32),
        np.full(frames, np.nan),
        np.zeros(frames),
        np.zeros(frames),
    )


def write_frame(out: FrameRows, k: int, sig: FrameSignals, *, wrist_target: np.ndarray, measure_wrist: bool) -> None:
    """Row ``k`` of ``out`` from frame ``k``'s signals; the wrist error to ``wrist_target`` (3,) m when
    ``measure_wrist``."""
    out.body_pos[k] = sig.body_pos
    out.body_quat[k] = sig.body_quat
    out.ccount[k] = sig.contacts
    out.normal_force[k] = sig.normal_force
    out.friction_force[k] = sig.friction_force
    if measure_wrist:
        out.wrist_err[k] = float(np.linalg.norm(sig.body_pos[0] - wrist_target))


class SpanEngine(Engine):
    @abc.abstractmethod
    def begin_spans(
        self,
        finger_quat: np.ndarray,
        rows: np.ndarray,
        *,
        phase: np.ndarray,
        settle: int,
        floor: float,
        force_min: float,
        max_linear: float,
        max_angular: float,
    ) -> None:
        """Take the plan: finger targets (N, F, 15, 4) xyzw, wrist rows (N, F, 16), phase codes (F,), ``floor`` m (the
        object below it stops the world; -inf: never) and the read thresholds."""

    @abc.abstractmethod
    def run_span(self, k0: int, k1: int, outs: list[FrameRows]) -> list[SpanEnd | None]:
        """Frames ``k0 .. k1 - 1`` of every live world into ``outs[i]``; a :class:`SpanEnd` per world (None: dead)."""
