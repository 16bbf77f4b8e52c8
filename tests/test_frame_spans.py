"""Spans of frames (replay.sim.engine.spans, replay.sim.engine.mujoco_c.c_loop) against the per-frame loop,
on the short cubesmall plan (settle, approach, lift, hold, shake, release): the same trajectories, every
trace row, the same stops (a world that did not rise, an early stop, a contact overflow, a runaway, an
object off the support, the arena guard), and a wrong mjData view is caught, not read."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from same_state import POS_M, assert_close, assert_same_data, assert_same_trace
from short_window import SHORT, short_window
from replay.config import ReplayConfig
from replay.errors import EngineError
from replay.protocol import recorded_protocol
from replay.protocol.plan import PHASE_LIFT
from replay.protocol.rollout import build_replay_scene
from replay.protocol.step_plan import step_protocol
from replay.sim.engine.mujoco_c import c_loop, data_fields
from replay.sim.engine.mujoco_c.mjc import MjcBatch
from replay.sim.engine.variants import Variant

#: the default world, a wrist offset, low friction, the ablation (the cube stays down: stopped at the hold's end)
VARIANTS = [Variant(), Variant(wrist_offset=(0.004, 0.0, 0.0)), Variant(friction=0.2), Variant(ablation=True)]
TRACE = ("body_pos", "body_quat", "ccount", "wrist_err", "normal_force", "friction_force")
ONCE = ("done", "bad_frame", "contacts_at_lift", "contacts_force_at_lift", "force_bones")


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


@pytest.fixture(scope="module")
def built(window, capsule_rhand):
    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    return cfg, plan, scene


def _both(cfg, plan, scene, variants=VARIANTS, threads=1, capacity=None, **kw):
    """(per-frame batch, traces), (span batch, traces, compiled spans run) on the same scene."""
    out = []
    for spans in (False, True):
        b = MjcBatch(scene, variants, threads=threads, capacity=capacity)
        calls = []
        real = c_loop.run_frames
        c_loop.run_frames = lambda *a: calls.append(a[:2]) or real(*a)
        try:
            tr = step_protocol(plan, b, cfg, spans=spans, **kw)
        finally:
            c_loop.run_frames = real
            b.close()
        out.append((b, tr, calls))
    return out


def _same(ref, got):
    """The span run is the per-frame run: float traces and final states to the tolerances of
    tests/same_state.py (a readout may round differently by CPU: issue #40), counts, stops and
    statuses exact."""
    (b0, t0, calls0), (b1, t1, _) = ref, got
    assert not calls0  # the reference stepped frame by frame
    for i, (x, y) in enumerate(zip(t0, t1)):
        assert_same_trace(x, y, f"world {i}", TRACE)
        assert_close(x.fingertip_distance, y.fingertip_distance, POS_M, f"world {i} fingertip_distance")
        for f in ONCE:
            assert getattr(x, f) == getattr(y, f), (i, f)
        w0, w1 = b0.worlds[i], b1.worlds[i]
        assert (w0.reason, w0.alive, w0.peak_contacts, w0.act_max) == (w1.reason, w1.alive, w1.peak_contacts,
                                                                        w1.act_max), i
        assert_same_data(w0.d, w1.d, f"world {i}")


@pytest.mark.parametrize("threads", [1, 2])
def test_spans_are_the_per_frame_loop(built, threads):
    """The whole short plan: every trace row and world status alike (tests/same_state.py); the spans ran compiled, a
    handful per world (split where the protocol looks: lift start, agreement frame, hold end, release)."""
    cfg, plan, scene = built
    ref, got = _both(cfg, plan, scene, threads=threads)
    _same(ref, got)
    b, tr, calls = got
    assert b.span_error is None and data_fields.LAYOUT_ERROR is None
    F = len(plan.coords)
    assert tr[0].done == F and tr[0].fingertip_distance is not None and tr[0].force_bones
    assert tr[0].ccount.max() > 0 and np.nanmax(tr[0].normal_force) > 0
    assert tr[3].done < F  # the ablation: not risen, stopped before the shake
    assert len(calls) <= 6 * len(VARIANTS) and all(k1 - k0 >= 1 for k0, k1 in calls)
    assert max(k1 - k0 for k0, k1 in calls) >= F // 4


def test_spans_stop_early_where_frames_do(built):
    """A search's early stop (frame, rise) stops the same worlds at the same frame."""
    cfg, plan, scene = built
    lift = int(np.flatnonzero(plan.phase == PHASE_LIFT)[0])
    ref, got = _both(cfg, plan, scene, early_stop=(lift + 10, 0.01))
    _same(ref, got)
    assert sum(t.done == lift + 10 for t in got[1]) >= 1


@pytest.mark.parametrize("what", ["overflow", "runaway"])
def test_spans_stop_on_a_reason_at_the_same_frame(built, what):
    """A contact overflow (capacity 2) or a runaway (speed limit 0.05 m/s) ends a world at the same frame
    with the same message, its row written; ``bad_frame`` is that frame."""
    cfg, plan, scene = built
    if what == "overflow":
        ref, got = _both(cfg, plan, scene, capacity=2)
    else:
        ref, got = _both(dataclasses.replace(cfg, max_linear_speed=0.05), plan, scene)
    _same(ref, got)
    b, tr, _ = got
    stopped = [i for i, w in enumerate(b.worlds) if w.reason]
    assert stopped
    for i in stopped:
        assert tr[i].bad_frame == tr[i].done - 1
        assert b.worlds[i].reason.startswith("contact overflow" if what == "overflow" else "runaway")


def test_spans_stop_an_object_off_the_support(window, capsule_rhand):
    """The recorded protocol's fallen-object stop (here: a floor 1 m above the support, so the first
    frame's object is below it): the world stops before frame 1, unstepped, in both loops."""
    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg, protocol="recorded")
    assert plan.fell_off_m == recorded_protocol.FELL_OFF_M
    plan.fell_off_m = -1.0
    ref, got = _both(cfg, plan, scene, variants=[Variant(), Variant(friction=0.5)])
    _same(ref, got)
    assert [t.done for t in got[1]] == [1, 1] and not any(w.alive for w in got[0].worlds)


def test_the_arena_guard_hands_frames_to_python(built, monkeypatch):
    """With the arena guard below any use (``ARENA_GUARD`` -1) every compiled span stops before its first
    frame and the world's frames run in the Python loop: the same outputs."""
    cfg, plan, scene = built
    monkeypatch.setattr(c_loop, "ARENA_GUARD", -1.0)
    ref, got = _both(cfg, plan, scene, variants=VARIANTS[:2])
    _same(ref, got)
    assert all(k1 > k0 for k0, k1 in got[2])


def test_a_wrong_view_is_caught(built):
    """A view pointing at the wrong ``int`` (``ncon``'s index moved by one) makes the span raise
    EngineError naming the layout, instead of passing on what it read."""
    cfg, plan, scene = built
    b = MjcBatch(scene, [Variant()])
    w = b.worlds[0]
    idx = w.fields.idx.copy()
    idx[data_fields.I_NCON] += 1
    w.fields = w.fields._replace(idx=idx)
    with pytest.raises(EngineError, match="mjData layout"):
        step_protocol(plan, b, cfg)


def test_the_layout_checks_can_fail():
    """The header check rejects a declaration order other than MuJoCo 3.17's, and :func:`mismatch`
    reports a view that disagrees with the bindings."""
    import mujoco

    decls = data_fields._header_declarations()
    assert data_fields._in_order(decls, data_fields._HEADER)
    swapped = [d.replace("maxuse_arena", "maxuse_x") for d in decls]
    assert not data_fields._in_order(swapped, data_fields._HEADER)
    m = mujoco.MjModel.from_xml_string(data_fields._SELF_TEST)
    d = mujoco.MjData(m)
    f = data_fields.fields_of(d)
    for _ in range(100):
        mujoco.mj_step(m, d)
    assert data_fields.mismatch(d, f) is None and d.ncon > 0
    idx = f.idx.copy()
    idx[data_fields.I_MAXUSE_CON] -= 1
    assert "maxuse_con" in data_fields.mismatch(d, f._replace(idx=idx))


def test_spans_with_the_quaternion_drive(window, capsule_rhand):
    """The quaternion finger drive (``finger_drive="quat"``: joint torques from each frame's target
    quaternions, computed once for the plan) gives the per-frame loop's traces too."""
    rec, coords = window
    cfg = ReplayConfig(**SHORT, finger_drive="quat")
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    ref, got = _both(cfg, plan, scene, variants=[Variant(), Variant(effort_limit=0.05)], threads=2)
    _same(ref, got)
    assert got[0].worlds[0].drive is not None and got[2]
