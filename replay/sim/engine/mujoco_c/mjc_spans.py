"""The spans of :class:`~replay.sim.engine.mujoco_c.mjc.MjcBatch`: one ``nogil`` call per world, or the Python loop
where the compiled loop cannot run (no library, a rejected layout, the arena guard, a ``recorder``)."""

from __future__ import annotations

import numpy as np

from replay.errors import EngineError
from replay.sim.engine.mujoco_c import data_fields
from replay.sim.engine.spans import FrameRows, SpanEnd, write_frame

try:  # without the compiled loop every frame runs the Python loop
    from replay.sim.engine.mujoco_c import c_loop

    C_LOOP_ERROR = None
except ImportError as e:  # libmujoco not the bindings' (c_loop's module doc)
    c_loop, C_LOOP_ERROR = None, str(e)


class SpanSteps:
    """:meth:`begin_spans` / :meth:`run_span` for :class:`~replay.sim.engine.mujoco_c.mjc.MjcBatch`."""

    def _init_spans(self) -> None:
        """Each world's views for the compiled spans, else :attr:`span_error`."""
        #: why the spans step frame by frame in Python (None: compiled)
        self.span_error = C_LOOP_ERROR or data_fields.LAYOUT_ERROR or (None if self.c_loop else "c_loop=False")
        if self.span_error is None:
            try:
                for w in self.worlds:
                    w.fields = data_fields.fields_of(w.d)
            except ValueError as e:
                self.span_error = str(e)
                for w in self.worlds:
                    w.fields = None
        self._span = None

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
        """:meth:`replay.sim.engine.spans.SpanEngine.begin_spans`: every frame's ``ctrl`` and drive targets."""
        N, F = len(self.worlds), rows.shape[1]
        lay = self.layout
        shared = finger_quat.strides[0] == 0  # one plan's targets for every world (a broadcast view)
        ctrl, targets = [None] * N, [None] * N
        for i in range(N):
            if shared and i:
                ctrl[i], targets[i] = ctrl[0], targets[0]
                continue
            c = np.zeros((F, lay.nu))
            for k in range(F):
                lay.finger_ctrl(finger_quat[i, k], c[k])
            ctrl[i] = c
            if any(w.drive is not None for w in self.worlds):
                t = np.empty((F, int(lay.finger_joint.max()) + 1, 4))
                for k in range(F):
                    t[k] = self._drive_targets(c[k])
                targets[i] = t
        self._span = dict(
            ctrl=ctrl,
            targets=targets,
            rows=np.ascontiguousarray(rows, dtype=np.float64),
            phase=np.ascontiguousarray(phase, dtype=np.int64),
            settle=int(settle),
            floor=float(floor),
            lim=(float(force_min), float(max_linear), float(max_angular)),
            z4=np.zeros((F, 0, 4)),
        )

    def run_span(self, k0: int, k1: int, outs: list[FrameRows]) -> list[SpanEnd | None]:
        """Frames ``k0 .. k1 - 1`` of every live world, round-robin over the threads. Raises EngineError: after a
        compiled span, MuJoCo's counters disagree with the views it read."""
        ends: list[SpanEnd | None] = [None] * len(self.worlds)

        def run(i):
            ends[i] = self._span_world(i, k0, k1, outs[i])

        self._deal([i for i, w in enumerate(self.worlds) if w.alive], run)
        return ends

    def _span_world(self, i: int, k0: int, k1: int, out: FrameRows) -> SpanEnd:
        w, sp = self.worlds[i], self._span
        if w.fields is None or self.recorder is not None:
            return self._python_span(i, k0, k1, out)
        d, f = w.d, w.fields
        if w.c_args is None:
            w.c_args = self._c_args(w)
        fa = w.c_args
        force_min, max_linear, max_angular = sp["lim"]
        lim = np.array([max_linear, max_angular, force_min, c_loop.ARENA_GUARD])
        targets = sp["targets"][i] if w.drive is not None else sp["z4"]
        w.stats[0] = w.act_max
        code = c_loop.run_frames(
            k0,
            k1,
            sp["ctrl"][i],
            sp["rows"][i],
            targets,
            sp["phase"],
            sp["settle"],
            sp["floor"],
            lim,
            w.capacity,
            d.ctrl,
            f.ints,
            f.longs,
            f.cint,
            f.cflt,
            f.idx,
            self._hand_mask,
            self._obj_mask,
            w.res,
            out.body_pos,
            out.body_quat,
            out.ccount,
            out.wrist_err,
            out.normal_force,
            out.friction_force,
            w.sums,
            w.info,
            fa[0],
            fa[1],
            w.wr,
            w.stale,
            w.fresh,
            w.fast,
            fa,
        )
        w.act_max = float(w.stats[0])
        w.peak_contacts = int(d.maxuse_con)
        why = data_fields.mismatch(d, f)  # ncon, maxuse_* and the contacts' base against the bindings'
        if why:
            raise EngineError(
                f"compiled span: MuJoCo's counters disagree with the views read ({why}); "
                "this MuJoCo's mjData layout is not the one replay.sim.engine.mujoco_c.data_fields checks"
            )
        k = int(w.info[1])
        if code == c_loop.SPAN_DONE:
            return SpanEnd(k1, None, int(w.sums[1]))
        if code == c_loop.FELL:
            w.alive = False
            return SpanEnd(k, None, int(w.sums[1]))
        if code == c_loop.ARENA:
            return self._python_span(i, k, k1, out)
        why = int(w.info[2])
        if why == c_loop.WHY_WARNING:
            w.reason = self._warning_reason(int(w.info[3]), d)
        elif why == c_loop.WHY_OVERFLOW:
            w.reason = f"contact overflow: {w.peak_contacts} contacts exceed the capacity {w.capacity}"
        elif why == c_loop.WHY_NON_FINITE:
            w.reason = "non-finite state"
        else:
            w.reason = self._runaway(w.fast, max_linear, max_angular)
        w.alive = False
        return SpanEnd(k + 1, k, int(w.sums[1]))

    def _python_span(self, i: int, k0: int, k1: int, out: FrameRows) -> SpanEnd:
        """World ``i``'s frames one at a time, through the per-frame loop's calls."""
        w, sp = self.worlds[i], self._span
        rows, ctrl, phase = sp["rows"][i], sp["ctrl"][i], sp["phase"]
        force_min, max_linear, max_angular = sp["lim"]
        nf = 0
        for k in range(k0, k1):
            if k and float(out.body_pos[k - 1, -1, 2]) < sp["floor"]:
                w.alive = False
                return SpanEnd(k, None, nf)
            target = sp["targets"][i][k] if w.drive is not None else None
            self._step_world(i, ctrl[k], rows[max(k - 1, 0)], rows[k], target)
            sig = self.read_frame(i, force_min=force_min, max_linear=max_linear, max_angular=max_angular)
            write_frame(out, k, sig, wrist_target=rows[k, :3], measure_wrist=int(phase[k]) != sp["settle"])
            nf = sig.contacts_force
            if sig.reason:
                return SpanEnd(k + 1, k, nf)
        return SpanEnd(k1, None, nf)
