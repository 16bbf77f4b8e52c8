"""Stepping a batch of worlds through a plan (:func:`step_protocol`, the walk of every direct rollout): frame by frame,
or, on an engine with ``capabilities.frame_spans``, in spans between the protocol's decisions
(:class:`replay.sim.engine.spans.SpanEngine`); both give the same traces (``tests/test_frame_spans.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from replay.config import ReplayConfig
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.protocol import contact_agreement, finger_closure, release
from replay.protocol.measures import Trace
from replay.protocol.plan import PHASE_APPROACH, PHASE_LIFT, PHASE_SETTLE, Plan, hold_end, lift_start
from replay.sim.engine import wrist
from replay.sim.engine.spans import SpanEnd, write_frame
from replay.sim.engine.variants import Variant


def wrist_target_rows(plan: Plan, variant: Variant | None = None) -> np.ndarray:
    """(F, 16) wrist target rows (:mod:`replay.sim.engine.wrist`) of ``plan``: position m, orientation MuJoCo wxyz,
    velocity m/s, angular velocity rad/s, acceleration m/s^2, world frame; moved by the variant's wrist perturbation
    about the wrist at the grasp frame."""
    pos, quat, vel, om, acc = plan.coords[:, :3], plan.coords[:, 3:7], plan.vel, plan.omega, plan.acc
    if variant is not None and variant.perturbs_wrist:
        grasp = int(np.flatnonzero(plan.phase == PHASE_APPROACH)[-1])
        pos, quat, vel, om, acc = variant.transform_targets(
            pos, quat, vel=vel, omega=om, acc=acc, center=plan.coords[grasp, :3]
        )
    rows = np.zeros((len(plan.coords), wrist.T_SIZE))
    rows[:, wrist.T_POS : wrist.T_POS + 3] = pos
    rows[:, wrist.T_QUAT : wrist.T_QUAT + 4] = np.asarray(quat)[:, [3, 0, 1, 2]]
    rows[:, wrist.T_VEL : wrist.T_VEL + 3] = vel
    rows[:, wrist.T_OMEGA : wrist.T_OMEGA + 3] = om
    rows[:, wrist.T_ACC : wrist.T_ACC + 3] = acc
    return rows


def step_protocol(
    plan: Plan,
    batch,
    cfg: ReplayConfig,
    *,
    frame_limit: int | None = None,
    early_stop: tuple[int, float] | None = None,
    agreement_at: int | None = None,
    spans: bool = True,
) -> list[Trace]:
    """One :class:`Trace` per world of ``batch`` stepped through ``plan``. A world stops at the hold end and release if
    its object rose less than ``lifted_min_rise``, at ``early_stop = (frame, rise m)`` likewise, on a signal's reason,
    or ``plan.fell_off_m`` below the support. Force bones are read at ``agreement_at`` (default: the hold's first
    frame)."""
    walk = _Walk(
        plan,
        batch,
        cfg,
        early_stop,
        frame_limit,
        contact_agreement.agreement_frame(plan) if agreement_at is None else agreement_at,
    )
    walk.spans() if spans and batch.capabilities.frame_spans else walk.frames()
    return walk.traces


@dataclass
class _Walk:
    plan: Plan
    batch: object
    cfg: ReplayConfig
    early_stop: tuple[int, float] | None
    frame_limit: int | None
    at: int | None
    traces: list = field(init=False)

    def __post_init__(self) -> None:
        plan, batch = self.plan, self.batch
        n = len(plan.coords)
        self.F = F = n if self.frame_limit is None else min(self.frame_limit, n)
        self.traces = [
            Trace(
                np.full((F, 17, 3), np.nan, np.float32),
                np.full((F, 17, 4), np.nan, np.float32),
                np.zeros(F, np.int32),
                np.full(F, np.nan),
                np.zeros(F),
                np.zeros(F),
            )
            for _ in batch.worlds
        ]
        self.tips = batch.fingertip_geoms(MANOSIM_HAND.fingertip_bodies)
        self.rows = np.stack([wrist_target_rows(plan, w.variant) for w in batch.worlds])  # (N, F, 16)
        self.fingers = finger_closure.world_finger_targets(plan, batch, self.cfg)  # (N, F, 15, 4)
        self.hold_end = hold_end(plan.phase)
        self.release_start = release.pre_release_end(plan.phase)
        self.lift_ref = lift_start(plan.phase)  # the frame rises are measured from
        # the frames a world is read after: the lift start (contacts, fingertip distance), the agreement frame
        self.lift_start = {
            int(k) for k in np.flatnonzero((plan.phase[:-1] == PHASE_APPROACH) & (plan.phase[1:] == PHASE_LIFT))
        }
        # the frames worlds may be stopped before: shake and release only what is up; the early stop
        self.stops = {self.hold_end, self.release_start} if self.lift_ref is not None else set()
        if self.early_stop is not None and self.lift_ref is not None:
            self.stops.add(int(self.early_stop[0]))
        self.floor = -np.inf if plan.fell_off_m is None else float(batch.scene.support_height) - plan.fell_off_m

    def decide(self, k: int) -> None:
        if self.lift_ref is None:
            return
        if k in (self.hold_end, self.release_start):
            _stop_not_risen(self.batch, self.traces, k, self.lift_ref, self.cfg.lift.lifted_min_rise)
        if self.early_stop is not None and k == self.early_stop[0]:
            _stop_not_risen(self.batch, self.traces, k, self.lift_ref, self.early_stop[1])

    def spans(self) -> None:
        """Frames in spans ending where :meth:`decide` or a read falls (:class:`replay.sim.engine.spans.SpanEngine`)."""
        batch, cfg, F = self.batch, self.cfg, self.F
        batch.begin_spans(
            self.fingers[:, :F],
            self.rows[:, :F],
            phase=self.plan.phase[:F],
            settle=PHASE_SETTLE,
            floor=self.floor,
            force_min=cfg.contact_force_min,
            max_linear=cfg.max_linear_speed,
            max_angular=cfg.max_angular_speed,
        )
        after = self.lift_start | ({int(self.at)} if self.at is not None else set())
        k0 = 0
        for k1 in sorted({b for b in self.stops | {k + 1 for k in after} if 0 < b < F} | {F}):
            self.decide(k0)
            if not any(w.alive for w in batch.worlds):
                break
            for i, end in enumerate(batch.run_span(k0, k1, self.traces)):
                if end is not None:
                    self._span_end(i, end, k1 - 1)
            k0 = k1

    def _span_end(self, i: int, end: SpanEnd, last: int) -> None:
        tr = self.traces[i]
        tr.done = end.done
        if end.bad_frame is not None:
            tr.bad_frame = end.bad_frame
        if end.done != last + 1:
            return
        self._look(i, last, int(tr.ccount[last]), end.contacts_force, end.bad_frame != last)

    def _look(self, i: int, k: int, contacts: int, contacts_force: int, ok: bool) -> None:
        """Read world ``i`` after frame ``k``: contacts, fingertip distance at lift start, force bones at agreement."""
        tr, batch = self.traces[i], self.batch
        if k in self.lift_start:
            tr.contacts_at_lift, tr.contacts_force_at_lift = contacts, contacts_force
            if ok:
                tr.fingertip_distance = batch.min_distance(i, self.tips, batch.layout.object_geoms)
        if k == self.at and ok:
            tr.force_bones = contact_agreement.force_bones(batch, i, self.cfg.contact_force_min)

    def frames(self) -> None:
        """One frame at a time (``step_frame`` / ``read_frame``)."""
        batch, rows = self.batch, self.rows
        for k in range(self.F):
            self.decide(k)
            if self.plan.fell_off_m is not None and k:
                # an object fallen off the support is lost for good: stop it (the recorded protocol has
                # no floor below a table top; it would fall until its speed trips the runaway check)
                for i, tr in enumerate(self.traces):
                    if batch.worlds[i].alive and float(tr.body_pos[k - 1, -1, 2]) < self.floor:
                        batch.stop(i)
            live = [i for i, w in enumerate(batch.worlds) if w.alive]
            if not live:
                break
            batch.step_frame(self.fingers[:, k], rows[:, max(k - 1, 0)], rows[:, k])
            for i in live:
                self._read(i, k)

    def _read(self, i: int, k: int) -> None:
        batch, plan, cfg, tr = self.batch, self.plan, self.cfg, self.traces[i]
        sig = batch.read_frame(
            i, force_min=cfg.contact_force_min, max_linear=cfg.max_linear_speed, max_angular=cfg.max_angular_speed
        )
        write_frame(tr, k, sig, wrist_target=self.rows[i, k, :3], measure_wrist=plan.phase[k] != PHASE_SETTLE)
        self._look(i, k, sig.contacts, sig.contacts_force, not sig.reason)
        tr.done = k + 1
        if sig.reason:
            tr.bad_frame = k


def _stop_not_risen(batch, traces: list[Trace], k: int, ref: int, min_rise: float) -> None:
    """Stop every live world whose object origin rose less than ``min_rise`` m from frame ``ref`` to ``k - 1``."""
    for i, tr in enumerate(traces):
        if batch.worlds[i].alive:
            z0 = float(tr.body_pos[ref, -1, 2])
            if not float(tr.body_pos[k - 1, -1, 2]) - z0 >= min_rise:
                batch.stop(i)
