"""The nine-phase parallel-jaw grasp-and-lift check of one object along one grasp line, stopping at its first failure:
NVIDIA SimReady's public ``grasp_and_lift`` test (FET005 Grasp, test version 1.3.0; docs/gripper_check.md). A
non-finite state or a runaway body ends the line as ``unstable``."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from replay.protocol.gripper_lines import GraspLine, line_span
from replay.results.config_parts import setting as _f
from replay.sim.gripper import build_gripper_scene, line_frame

PHASES = (
    "stability",
    "positioning",
    "grasping",
    "lifting",
    "hold_before_shake",
    "shake",
    "hold_after_shake",
    "opening",
    "dropping",
)
#: failure class of a line that fails at each phase (FET005 "Failure Cases")
FAILURE_CLASS = {
    "positioning": "positioning_timeout",
    "grasping": "pads_touched",
    "lifting": "not_risen",
    "hold_before_shake": "dropped_in_hold",
    "shake": "left_jaws_in_shake",
    "hold_after_shake": "dropped_in_hold",
    "dropping": "did_not_fall",
}
_SPEC = "FET005 grasp_and_lift 1.3.0"


@dataclass(frozen=True)
class PhaseConfig:
    """Durations and thresholds of the nine phases (every value with unit and source)."""

    settle_timeout_s: float = _f(3.0, "s", f"{_SPEC}: Stability waits up to 3.0 s")
    rest_tol: float = _f(0.002, "m", f"{_SPEC}: centroid still within 2 mm ...")
    rest_window_s: float = _f(1.0, "s", f"{_SPEC}: ... for 1.0 s")
    approach_offset: float = _f(
        0.05, "m", "chosen: the gantry starts 5 cm from the line centre, across the line (upward)"
    )
    approach_s: float = _f(1.0, "s", "chosen: smoothstep move to the line centre")
    position_tol: float = _f(0.005, "m", f"{_SPEC}: GripperPositioning converges within 5 mm ...")
    position_timeout_s: float = _f(2.0, "s", f"{_SPEC}: ... or 2.0 s")
    close_speed: float = _f(0.04, "m/s", f"{_SPEC}: jaws close at no more than 0.04 m/s")
    close_converge_s: float = _f(1.0, "s", "chosen: longest wait for the jaws to stop after the close ramp")
    close_still_speed: float = _f(0.001, "m/s", "chosen: jaws converged below 1 mm/s")
    close_settle_s: float = _f(0.3, "s", f"{_SPEC}: close_settle_seconds 0.3 s")
    pads_touch_gap: float = _f(0.001, "m", "chosen: pads meet when their gap is below 1 mm (nothing between them)")
    lift_s: float = _f(1.0, "s", f"{_SPEC}: Lifting over 1.0 s, smoothstep")
    lift_edge_factor: float = _f(2.0, "1", f"{_SPEC}: lift twice the longest edge ...")
    lift_min: float = _f(0.3, "m", f"{_SPEC}: ... clamped to 0.3 ...")
    lift_max: float = _f(0.5, "m", f"{_SPEC}: ... to 0.5 m")
    lift_min_rise: float = _f(0.02, "m", f"{_SPEC}: passes when the centroid rose >= 0.02 m")
    hold_s: float = _f(1.0, "s", f"{_SPEC}: HoldBeforeShake / HoldAfterShake 1.0 s")
    hold_max_drop: float = _f(0.10, "m", f"{_SPEC}: fails when the centroid drops > 0.10 m")
    floor_clearance: float = _f(0.02, "m", f"{_SPEC}: ... or sinks within 0.02 m of the ground")
    shake_hz: float = _f(2.0, "Hz", f"{_SPEC}: orbit at 2.0 Hz")
    shake_radius: float = _f(0.01, "m", f"{_SPEC}: 0.01 m radius")
    shake_s: float = _f(1.5, "s", f"{_SPEC}: for 1.5 s")
    shake_envelope_s: float = _f(0.25, "s", f"{_SPEC}: 0.25 s smooth envelope in and out")
    shake_max_separation: float = _f(0.05, "m", f"{_SPEC}: grasp point 0.05 m from the live jaw midpoint")
    open_s: float = _f(0.5, "s", f"{_SPEC}: Opening over 0.5 s")
    drop_timeout_s: float = _f(3.0, "s", f"{_SPEC}: Dropping waits up to 3.0 s")
    drop_min_fall: float = _f(0.05, "m", f"{_SPEC}: falls by max(0.05 m, bounding-box height)")
    max_speed: float = _f(20.0, "m/s", "replay.config.ReplayConfig.max_linear_speed: a faster body is a runaway")
    trace_fps: float = _f(30.0, "Hz", "trace rate (clips): the replay's control rate")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def smoothstep(s: float) -> float:
    """3 s^2 - 2 s^3 on s clipped to [0, 1] (FET005's lift profile: zero velocity at both ends)."""
    s = min(max(s, 0.0), 1.0)
    return s * s * (3.0 - 2.0 * s)


class _Unstable(Exception):
    pass


def plan_line(line: GraspLine, planes: list, pad_half_width: float, *, preload: float, open_margin: float) -> dict:
    """Jaw centre (3,) m, axis, open and target jaw coordinates (m from the centre) for ``line``; a line missing the
    collider opens by ``open_margin`` and targets 0 (``pads_touched``)."""
    frame = line_frame(line.direction)
    hit = line_span(planes, line, frame, half_width=pad_half_width)
    if hit["span"] is None:
        centre, half = line.point.copy(), 0.0
    else:
        t0, t1 = hit["span"]
        centre, half = line.point + 0.5 * (t0 + t1) * line.direction, 0.5 * (t1 - t0)
    return dict(
        centre=centre,
        u=line.direction.copy(),
        frame=frame,
        half_span=half,
        centre_hit=hit["centre_hit"],
        jaw_open=half + open_margin,
        jaw_target=max(half - preload, 0.0) if hit["span"] else 0.0,
    )


class LineRun:
    """One line's phases on a :class:`replay.sim.gripper.GripperScene`; ``trace`` keeps the poses at ``trace_fps``
    (object (7,), jaws (2, 7): m, xyzw) with the phase index."""

    def __init__(
        self,
        asset,
        origin: np.ndarray,
        plan: dict,
        *,
        config,
        fixture,
        pc: PhaseConfig,
        height: float,
        longest_edge: float,
    ):
        """A fresh scene: object at ``origin`` (7,) m/xyzw, gantry ``approach_offset`` above the line, jaws open."""
        self.plan, self.pc = plan, pc
        self.gantry = plan["centre"] + pc.approach_offset * plan["frame"][:, 2]
        self.jaw = float(plan["jaw_open"])
        self.sc = scene = build_gripper_scene(
            asset,
            origin[:3],
            origin[3:7],
            gantry0=self.gantry,
            u=plan["u"],
            jaw0=self.jaw,
            config=config,
            fixture=fixture,
        )
        self.height, self.longest = float(height), float(longest_edge)
        self.every = max(1, int(round(1.0 / (pc.trace_fps * scene.dt))))
        self.steps = 0
        self.trace: dict = {"time": [], "phase": [], "object": [], "jaws": []}
        origin = scene.object_origin()
        self.grasp_local = Rotation.from_quat(origin[3:7]).inv().apply(plan["centre"] - origin[:3])
        self.phase = 0

    def advance(self, duration: float, gantry_at=None, jaw_at=None, *, stop=None):
        """``(t, reading)`` after up to ``duration`` s toward ``gantry_at(t)`` / ``jaw_at(t)`` (t s; None: hold) or
        until ``stop(t, reading)``. Raises _Unstable (non-finite object COM, runaway ``qvel``)."""
        sc = self.sc
        n = max(1, int(math.ceil(duration / sc.dt - 1e-9)))
        chunk = {}
        last = [0.0, sc.read()]

        def targets(k0, k1):
            rows = np.empty((k1 - k0, 4))
            g, j = self.gantry, self.jaw
            for i, k in enumerate(range(k0 + 1, k1 + 1)):
                t = k * sc.dt
                g = gantry_at(t) if gantry_at is not None else g
                j = float(jaw_at(t)) if jaw_at is not None else j
                rows[i, :3], rows[i, 3] = g, j
            chunk["k0"], chunk["rows"] = k0, rows
            return rows

        def visit(k, r):
            t = (k + 1) * sc.dt
            row = chunk["rows"][k - chunk["k0"]]
            self.gantry, self.jaw = row[:3].copy(), float(row[3])
            self.steps += 1
            if self.steps % self.every == 0:
                self._record(r)
            if r.runaway:
                raise _Unstable(f"non-finite or runaway state at t={sc.time:.3f} s")
            last[0], last[1] = t, r
            return stop is not None and bool(stop(t, r))

        sc.run(n, visit, targets)
        return last[0], last[1]

    def _record(self, r) -> None:
        tr = self.trace
        tr["time"].append(self.sc.time)
        tr["phase"].append(self.phase)
        tr["object"].append(r.origin)
        tr["jaws"].append(r.pads)

    def grasp_point(self, origin: np.ndarray | None = None) -> np.ndarray:
        """(3,) world m: the line's centre, fixed in the object, with the object at ``origin`` (7,) (default: now)."""
        o = self.sc.object_origin() if origin is None else origin
        return Rotation.from_quat(o[3:7]).apply(self.grasp_local) + o[:3]


# the nine phases, each (run) -> (passed, metrics); units in the metric names' suffixes (_m, _s, _mm)


def _stability(run: LineRun) -> tuple[bool, dict]:
    pc, ref = run.pc, {"com": run.sc.read()[0], "t": 0.0, "rest": None}

    def still(t, r):
        if np.linalg.norm(r[0] - ref["com"]) > pc.rest_tol:
            ref["com"], ref["t"] = r[0], t
        elif t - ref["t"] >= pc.rest_window_s:
            ref["rest"] = t
            return True
        return False

    t, r = run.advance(pc.settle_timeout_s, stop=still)
    return True, dict(at_rest=ref["rest"] is not None, settle_s=t, centroid_z_m=float(r[0][2]))


def _positioning(run: LineRun) -> tuple[bool, dict]:
    pc, start, goal = run.pc, run.gantry.copy(), run.plan["centre"]

    def at(t):
        return start + (goal - start) * smoothstep(t / pc.approach_s)

    t, r = run.advance(
        pc.position_timeout_s,
        gantry_at=at,
        stop=lambda t, r: t >= pc.approach_s and np.linalg.norm(r[2] - goal) < pc.position_tol,
    )
    err = float(np.linalg.norm(r[2] - goal))
    return err < pc.position_tol, dict(error_mm=err * 1000.0, time_s=t)


def _grasping(run: LineRun) -> tuple[bool, dict]:
    pc, p = run.pc, run.plan
    c0 = run.sc.read()[0]
    j0, j1 = float(p["jaw_open"]), float(p["jaw_target"])
    ramp = (j0 - j1) / pc.close_speed
    run.advance(ramp, jaw_at=lambda t: max(j1, j0 - pc.close_speed * t))
    last = {"q": run.sc.read()[3]}

    def still(t, r):
        v = float(np.max(np.abs(r[3] - last["q"]))) / run.sc.dt
        last["q"] = r[3]
        return v < pc.close_still_speed

    tc, _ = run.advance(pc.close_converge_s, jaw_at=lambda t: j1, stop=still)
    _, r = run.advance(pc.close_settle_s)
    gap = float(np.sum(r[3]))
    return gap >= pc.pads_touch_gap, dict(
        pad_gap_mm=gap * 1000.0,
        jaw_target_mm=j1 * 1000.0,
        close_s=ramp + tc + pc.close_settle_s,
        object_shift_mm=float(np.linalg.norm(r[0] - c0)) * 1000.0,
        centre_hit=bool(p["centre_hit"]),
    )


def _lifting(run: LineRun) -> tuple[bool, dict]:
    pc = run.pc
    h = min(max(pc.lift_edge_factor * run.longest, pc.lift_min), pc.lift_max)
    base = run.plan["centre"].copy()  # the horizontal target frozen at the positioning goal
    z0 = run.sc.read()[0][2]
    t, r = run.advance(pc.lift_s, gantry_at=lambda t: base + np.array([0.0, 0.0, h * smoothstep(t / pc.lift_s)]))
    rise = float(r[0][2] - z0)
    return rise >= pc.lift_min_rise, dict(lift_height_m=h, rise_m=rise)


def _hold(run: LineRun) -> tuple[bool, dict]:
    pc = run.pc
    z0 = run.sc.read()[0][2]
    low = {"z": z0}

    def fell(t, r):
        low["z"] = min(low["z"], float(r[0][2]))
        return z0 - r[0][2] > pc.hold_max_drop or r[0][2] < pc.floor_clearance

    t, r = run.advance(pc.hold_s, stop=fell)
    drop = float(z0 - low["z"])
    ok = drop <= pc.hold_max_drop and low["z"] >= pc.floor_clearance
    return ok, dict(drop_m=drop, centroid_z_m=float(r[0][2]), time_s=t)


def _shake(run: LineRun) -> tuple[bool, dict]:
    pc = run.pc
    base = run.gantry.copy()
    w = 2.0 * math.pi * pc.shake_hz
    worst = {"sep": 0.0, "zmin": np.inf}
    sep0 = float(np.linalg.norm(run.grasp_point() - run.sc.pad_poses()[:, :3].mean(axis=0)))

    def at(t):
        env = smoothstep(min(t, pc.shake_s - t) / pc.shake_envelope_s)
        return base + pc.shake_radius * env * np.array([math.cos(w * t), math.sin(w * t), 0.0])

    def left(t, r):
        sep = float(np.linalg.norm(run.grasp_point(r.origin) - r.pads[:, :3].mean(axis=0)))
        worst["sep"] = max(worst["sep"], sep)
        worst["zmin"] = min(worst["zmin"], float(r[0][2]))
        return sep > pc.shake_max_separation or r[0][2] < pc.floor_clearance

    run.advance(pc.shake_s, gantry_at=at, stop=left)
    run.gantry = base.copy()
    ok = worst["sep"] <= pc.shake_max_separation and worst["zmin"] >= pc.floor_clearance
    return ok, dict(
        max_separation_mm=worst["sep"] * 1000.0,
        separation_at_start_mm=sep0 * 1000.0,
        min_centroid_z_m=float(worst["zmin"]),
    )


def _opening(run: LineRun) -> tuple[bool, dict]:
    pc = run.pc
    c0 = run.sc.read()[0]
    j0, j1 = run.jaw, float(run.plan["jaw_open"])
    _, r = run.advance(pc.open_s, jaw_at=lambda t: j0 + (j1 - j0) * min(t / pc.open_s, 1.0))
    run.sc.disable_pads()
    run.drop_ref = c0
    return True, dict(moved_mm=float(np.linalg.norm(r[0] - c0)) * 1000.0)


def _dropping(run: LineRun) -> tuple[bool, dict]:
    pc = run.pc
    need = max(pc.drop_min_fall, run.height)
    z0 = float(run.drop_ref[2])
    t, r = run.advance(pc.drop_timeout_s, stop=lambda t, r: z0 - r[0][2] >= need)
    fall = float(z0 - r[0][2])
    return fall >= need, dict(fall_m=fall, needed_m=need, time_s=t)


_RUNNERS = (_stability, _positioning, _grasping, _lifting, _hold, _shake, _hold, _opening, _dropping)


def run_phases(run: LineRun) -> dict:
    """The nine phases in order on ``run``, stopping at the first failure: ``{"phases": [{name, ran, passed, metrics}]
    (9), "passed", "failed_phase", "failure_class", "unstable_reason", "sim_s"}``."""
    out, failed, cls, why = [], None, None, None
    for i, (name, fn) in enumerate(zip(PHASES, _RUNNERS)):
        if failed is not None:
            out.append(dict(name=name, ran=False, passed=None, metrics={}))
            continue
        run.phase = i
        try:
            ok, metrics = fn(run)
        except _Unstable as e:
            ok, metrics, cls, why = False, {}, "unstable", str(e)
        out.append(dict(name=name, ran=True, passed=bool(ok), metrics=metrics))
        if not ok:
            failed, cls = name, cls or FAILURE_CLASS[name]
    return dict(
        phases=out,
        passed=failed is None,
        failed_phase=failed,
        failure_class=cls,
        unstable_reason=why,
        sim_s=float(run.sc.time),
    )


def object_verdict(lines: list[dict]) -> dict:
    """Pass when one line passes all nine phases, else the class of the (first) line that got furthest."""
    passing = [ln["line"]["name"] for ln in lines if ln["passed"]]
    if passing:
        return dict(passed=True, verdict="pass", passing_lines=passing, furthest_line=passing[0], failed_phase=None)
    if not lines:
        return dict(passed=False, verdict="no_line", passing_lines=[], furthest_line=None, failed_phase=None)
    best = max(lines, key=lambda ln: PHASES.index(ln["failed_phase"]))
    return dict(
        passed=False,
        verdict=best["failure_class"],
        passing_lines=[],
        furthest_line=best["line"]["name"],
        failed_phase=best["failed_phase"],
    )
