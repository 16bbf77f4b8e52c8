"""Spans of control frames: what an engine with ``Capabilities.frame_spans`` writes per frame, and one frame's write.

An engine that can step many frames of a world in one call (:meth:`SpanEngine.run_span`) writes
each frame's readout into the caller's arrays (:class:`FrameRows`) and stops a
world where the per-frame loop would stop it; the caller (``replay.protocol.step_plan.step_protocol``)
ends spans at the frames where it must look or decide between frames. :func:`write_frame` is that
row written from a :class:`~replay.sim.engine.contract.FrameSignals`, for the per-frame loop and
for an engine's frames outside its compiled span.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np

from replay.sim.engine.contract import Engine, FrameSignals


@dataclass
class FrameRows:
    """One world's per-frame outputs, one row per frame (F planned frames, 17 bodies: the 16 hand
    bodies, then the object); :class:`replay.protocol.measures.Trace` is one.

    Attributes:
        body_pos: (F, 17, 3) float32 world positions, m. body_quat: (F, 17, 4) float32, Newton xyzw.
        ccount: (F,) int32 hand-object contacts. wrist_err: (F,) root-body distance to the wrist
            target, m (left as it is in the settle phase). normal_force, friction_force: (F,) N
            (:class:`~replay.sim.engine.contract.FrameSignals`).
    """

    body_pos: np.ndarray
    body_quat: np.ndarray
    ccount: np.ndarray
    wrist_err: np.ndarray
    normal_force: np.ndarray
    friction_force: np.ndarray


@dataclass
class SpanEnd:
    """Where one world's span ended.

    Attributes:
        done: frames simulated so far (the next frame to step). bad_frame: the frame a reason
            stopped it at (its row written), or None. contacts_force: hand-object contacts carrying
            force in its last frame.
    """

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


def write_frame(out: FrameRows, k: int, sig: FrameSignals, wrist_target: np.ndarray, measure_wrist: bool) -> None:
    """Row ``k`` of ``out`` from frame ``k``'s signals; the wrist error to ``wrist_target`` (3,) m when
    ``measure_wrist`` (outside the settle phase)."""
    out.body_pos[k] = sig.body_pos
    out.body_quat[k] = sig.body_quat
    out.ccount[k] = sig.contacts
    out.normal_force[k] = sig.normal_force
    out.friction_force[k] = sig.friction_force
    if measure_wrist:
        out.wrist_err[k] = float(np.linalg.norm(sig.body_pos[0] - wrist_target))


class SpanEngine(Engine):
    """An :class:`~replay.sim.engine.contract.Engine` that also steps spans of frames (``capabilities.frame_spans``)."""

    @abc.abstractmethod
    def begin_spans(
        self,
        finger_quat: np.ndarray,
        rows: np.ndarray,
        phase: np.ndarray,
        settle: int,
        floor: float,
        force_min: float,
        max_linear: float,
        max_angular: float,
    ) -> None:
        """Take the whole plan before :meth:`run_span`: finger targets (N, F, 15, 4) xyzw, wrist target
        rows (N, F, 16), phase codes (F,) (``settle``: the settle phase's), the height ``floor`` m
        below which the object counts as fallen (the world stops before its next frame; -inf: never),
        and :meth:`~replay.sim.engine.contract.Engine.read_frame`'s thresholds."""

    @abc.abstractmethod
    def run_span(self, k0: int, k1: int, outs: list[FrameRows]) -> list[SpanEnd | None]:
        """Frames ``k0 .. k1 - 1`` of every live world, each frame's row into ``outs[i]``, each world
        stopped where the per-frame loop would stop it; one :class:`SpanEnd` per world (None: it was
        not live)."""
