"""The release phase of the hand replay (config.lift.release_s): the fingers open after the hold
and shake; a held object must fall, one that does not is `stuck` and not lifted."""

from __future__ import annotations

import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.protocol import release, rollout
from replay.results.records import Phase
from replay.sim.engine.variants import Variant

pytestmark = pytest.mark.needs_data


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


def test_opened_hand_lets_the_cube_fall(window, capsule_rhand):
    rec, coords = window
    cfg = ReplayConfig(**SHORT).replace(lift={"shake_s": 0.0})
    res = rollout.run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=[Variant()])[0]
    m = res.metrics
    assert m["lifted"] and m["outcome"] == "lifted" and m["release_ran"] and m["stuck_after_release"] is False
    # the cube (4 cm) needs max(5 cm, its height) of fall, at most half its 6 cm rise: 3 cm
    assert m["release_fall_needed_m"] == pytest.approx(0.5 * cfg.lift.lift_height, abs=0.005)
    assert m["release_fall_m"] > m["release_fall_needed_m"]
    ph = res.poses["phase"]
    assert (ph == Phase.RELEASE).sum() == round((cfg.lift.release_s + cfg.lift.release_fall_s) * cfg.control_fps)


def test_a_hand_that_does_not_open_is_stuck(window, capsule_rhand, monkeypatch):
    """The release targets the grasp pose instead of the pre-grasp one: the fingers stay shut,
    the cube stays up, and the rollout is `stuck`, not lifted, with its diagnosis."""
    rec, coords = window
    real = release.extend_plan
    monkeypatch.setattr(release, "extend_plan", lambda plan, pre, *a, **k: real(plan, plan.coords[-1], *a, **k))
    m = rollout.run_rollouts(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT).replace(lift={"shake_s": 0.0}), variants=[Variant()])[0].metrics
    assert m["release_ran"] and m["stuck_after_release"] is True
    assert m["outcome"] == "stuck" and m["lifted"] is False
    assert m["release_fall_m"] < 0.01
    assert m["diagnosis"]["class"] == "stuck_after_release"


def test_release_off_leaves_the_plan_as_it_was(window, capsule_rhand):
    rec, coords = window
    on = rollout.build_replay_scene(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT))[0]
    off = rollout.build_replay_scene(rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT).replace(lift={"release_s": 0.0}))[0]
    n = len(off.coords)
    assert (off.phase != Phase.RELEASE).all() and len(on.coords) > n
    assert (on.coords[:n] == off.coords).all()
