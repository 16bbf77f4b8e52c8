"""The MuJoCo C engine's compiled spans (replay.sim.engine.mujoco_c.c_loop) against its
Python loop, on the short cubesmall window: the same trajectory (to tests/same_state.py), the same stop on a MuJoCo warning
(read from ``mjData.warning``), and a MuJoCo error inside a frame as that world's reason."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from same_state import POS_M, assert_close, assert_same_data, assert_same_trace
from short_window import SHORT, short_window
from replay.config import ReplayConfig
from replay.protocol.rollout import build_replay_scene
from replay.protocol.step_plan import step_protocol
from replay.sim.engine.variants import Variant
from replay.sim.engine.mujoco_c import c_loop
from replay.sim.engine.factory import engine_for_scene
from replay.sim.engine.mujoco_c.mjc import WARNINGS, MjcBatch

#: control frames stepped per run (settle and the start of the approach: contacts with the support)
FRAMES = 40
VARIANTS = [Variant(), Variant(wrist_offset=(0.003, 0.0, 0.0)), Variant(friction=0.7), Variant(ablation=True)]


@pytest.fixture(scope="module")
def built(grab_dir, capsule_rhand):
    rec, coords = short_window(grab_dir, capsule_rhand)
    cfg = ReplayConfig(**SHORT)
    plan, scene, _ = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)
    return cfg, plan, scene


def _run(built, c_loop_on: bool, threads: int, setup=None):
    cfg, plan, scene = built
    b = MjcBatch(scene, VARIANTS, threads=threads, c_loop=c_loop_on)
    if setup is not None:
        setup(b)
    tr = step_protocol(plan, b, cfg, frame_limit=FRAMES)
    b.close()
    return b, tr


def test_compiled_loop_is_the_python_loop(built):
    """Every direct rollout's default (the factory's engine, compiled loop) steps the Python loop's
    trajectory: poses and final qpos/qvel to tests/same_state.py's tolerances (the two paths' readouts
    may round differently by CPU), contact counts and peaks exact, on one and two threads."""
    cfg, plan, scene = built
    default = engine_for_scene(scene, [Variant()])
    assert isinstance(default, MjcBatch) and default.c_loop
    runs = [_run(built, False, 1), _run(built, True, 1), _run(built, True, 2)]
    ref_b, ref_tr = runs[0]
    assert all(w.peak_contacts > 0 and w.reason is None for w in ref_b.worlds)
    assert all(c_loop.arena_ok(w.d) for w in ref_b.worlds)  # the compiled loop was allowed every frame
    for b, tr in runs[1:]:
        for t0, t1 in zip(ref_tr, tr):
            assert t1.done == t0.done == FRAMES
            assert_same_trace(t0, t1, "compiled vs Python loop", ("body_pos", "ccount"))
        for w0, w1 in zip(ref_b.worlds, b.worlds):
            assert_same_data(w0.d, w1.d, "compiled vs Python loop")
            assert (w0.peak_contacts, w0.act_max) == (w1.peak_contacts, w1.act_max)
    # the peak is MuJoCo's own count: at least the contacts of any frame's last step
    assert ref_b.worlds[0].peak_contacts >= int(ref_tr[0].ccount.max())


def test_a_mujoco_warning_stops_the_world_at_the_same_substep(built):
    """A counter of ``mjData.warning`` above the world's start value (here: the start value lowered by
    one for mjWARN_CONTACTFULL in world 1) stops that world after the substep, in both loops alike."""
    def lower(b):
        b.worlds[1].warn_base[WARNINGS.index("CONTACTFULL")] -= 1

    out = [_run(built, on, 1, lower) for on in (False, True)]
    for b, tr in out:
        assert tr[1].bad_frame == 0 and tr[1].done == 1
        assert b.worlds[1].reason.startswith("MuJoCo mjWARN_CONTACTFULL: contacts/constraints dropped")
        assert b.worlds[0].reason is None and tr[0].done == FRAMES
    assert_close(out[0][0].worlds[1].d.qpos, out[1][0].worlds[1].d.qpos, POS_M, "qpos after the stop")
    assert out[0][0].worlds[1].d.time == pytest.approx(built[0].dt)  # one physics step, then stopped


def test_a_mujoco_error_in_a_frame_is_the_worlds_reason(built, monkeypatch):
    """Past the arena guard a world's frames run in the Python loop, where a MuJoCo error
    (``mujoco.FatalError``, as ``mju_error`` raises it through the bindings) becomes the world's
    ``unstable`` reason with MuJoCo's message; the other worlds go on."""
    real_step = mujoco.mj_step2
    bad = {}

    def failing_step(m, d):
        if d._address == bad.get("d"):
            raise mujoco.FatalError("mj_stackAlloc: insufficient memory")
        real_step(m, d)

    def arm(b):
        bad["d"] = b.worlds[2].d._address
        monkeypatch.setattr(c_loop, "ARENA_GUARD", -1.0)  # every frame through the Python loop
        monkeypatch.setattr(mujoco, "mj_step2", failing_step)

    b, tr = _run(built, True, 2, arm)
    assert b.worlds[2].reason == "solver exception: FatalError: mj_stackAlloc: insufficient memory"
    assert tr[2].bad_frame == 0
    assert [t.done for i, t in enumerate(tr) if i != 2] == [FRAMES] * 3



def test_a_code_error_in_a_frame_is_raised_not_unstable(built, monkeypatch):
    """An exception that is not MuJoCo's own (here a TypeError from the stepping path, as a bug
    would raise) is not physics: it leaves the engine (the study lists the recording as an error),
    no world gets a reason."""
    real_step = mujoco.mj_step2
    bad = {}

    def buggy_step(m, d):
        if d._address == bad.get("d"):
            raise TypeError("unsupported operand type(s) for +: 'float' and 'NoneType'")
        real_step(m, d)

    def arm(b):
        bad["d"] = b.worlds[2].d._address
        monkeypatch.setattr(c_loop, "ARENA_GUARD", -1.0)  # every frame through the Python loop
        monkeypatch.setattr(mujoco, "mj_step2", buggy_step)

    with pytest.raises(TypeError, match="NoneType"):
        _run(built, True, 2, arm)


@pytest.mark.parametrize("c_loop_on", [False, True])
def test_non_finite_position_and_runaway_velocity_are_unstable(built, c_loop_on, tmp_path, monkeypatch):
    """Physical failures stop their world with a reason (the rollout's ``unstable``), in both loops:
    a NaN in the object's position (MuJoCo's mjWARN_BADQPOS, after which it resets the data: without
    the check the world would go on from its start), and an object flung at 1000 m/s (above the
    config's runaway limit: stopped at the first frame's read). The untouched worlds step every frame."""
    cfg = built[0]
    assert 1e3 > cfg.max_linear_speed
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warning to MUJOCO_LOG.TXT in the working folder

    def spoil(b):
        b.worlds[1].d.qpos[-7] = np.nan  # the object's free joint: x, m
        b.worlds[2].d.qvel[-6] = 1e3  # its linear velocity x, m/s

    b, tr = _run(built, c_loop_on, 1, spoil)
    assert b.worlds[1].reason.startswith("MuJoCo mjWARN_BADQPOS: non-finite or huge position")
    assert b.worlds[2].reason.startswith("runaway linear velocity 1e+03 m/s on body")
    assert tr[1].bad_frame == 0 and tr[2].bad_frame == 0
    assert b.worlds[0].reason is None and b.worlds[3].reason is None
    assert tr[0].done == tr[3].done == FRAMES
