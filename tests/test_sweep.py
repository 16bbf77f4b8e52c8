"""Robustness maps (replay.study.sweep, scripts/run_sweep.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from short_window import SHORT

from replay.config import ReplayConfig
from replay.errors import UsageError
from replay.results.records import RolloutRecord
from replay.study.sweep import BUILT_MU, parse_grid, plan_sweep, summarize_sweep

ROOT = Path(__file__).resolve().parent.parent


def test_grid_parsing_and_errors():
    g = parse_grid("effort=0.1:1.5:8,mu=0.2:1.5:8")
    assert np.allclose(g["effort"], np.linspace(0.1, 1.5, 8)) and len(g["mu"]) == 8
    for bad in ("effort=0.1:1.5:8", "effort=0.1:1.5,mu=0.2:1:2", "speed=1:2:2,mu=1:2:2", "effort=0:1:2,mu=1:2:2",
                "effort=2:1:2,mu=1:2:2"):
        with pytest.raises(UsageError):
            parse_grid(bad)


def test_plan_has_every_cell_both_lines_the_perturbations_and_the_ablation():
    sp = plan_sweep(parse_grid("effort=0.1:1.5:3,mu=0.3:1.2:2"), 0.4, perturb=2, perturb_mm=10, perturb_deg=10)
    kinds = [r[0] for r in sp.roles]
    assert kinds.count("grid") == 6 and kinds.count("effort_at_mu1") == 3 and kinds.count("mu_at_study_effort") == 2
    assert kinds.count("perturb") == 2 and kinds[-1] == "ablation" and sp.variants[-1].ablation
    for v, r in zip(sp.variants, sp.roles):
        if r[0] == "perturb":  # sizes as stated, directions random
            assert np.linalg.norm(v.wrist_offset) == pytest.approx(0.010) and v.wrist_offset[2] == 0
            assert np.linalg.norm(v.wrist_rotvec) == pytest.approx(np.radians(10))
        if r[0] == "effort_at_mu1":
            assert v.friction == BUILT_MU
    # summary: smallest lifting value along each line
    fake = [{"lifted": r[0] == "grid" and r[2] == 1, "outcome": "lifted" if (r[0] == "grid" and r[2] == 1) else "not_lifted",
             "shake_held": False, "max_hand_object_contacts": 0, "max_object_rise_mm": 0.0} for r in sp.roles]
    for i, r in enumerate(sp.roles):
        if r[0] == "effort_at_mu1" and r[1] >= 1 or r[0] == "mu_at_study_effort" and r[1] == 1:
            fake[i]["lifted"] = True
    s = summarize_sweep(sp, [RolloutRecord.from_metrics(m) for m in fake])
    assert s["min_effort_lifting_at_mu1_nm"] == pytest.approx(0.8) and s["min_mu_lifting_at_study_effort"] == 1.2
    assert s["success_fraction"] == 0.5 and s["perturbed_success_fraction"] == 0.0


@pytest.mark.needs_data
def test_operating_point_world_is_the_study_rollout(grab_dir, capsule_rhand):
    """A world set to the study's effort and the built friction is the study's own rollout, bit for bit
    (determinism on one machine: the same code path on the same inputs in one batch): the sweep's mu line at the
    study effort is such a world (no effort of its own under the per-joint human strength; the study's --effort
    where one is set)."""
    from short_window import short_window

    from replay.sim.engine.variants import Variant
    from replay.protocol.rollout import run_rollouts

    from replay.study.sweep import plan_sweep

    rec, coords = short_window(grab_dir, capsule_rhand)
    for effort in (None, 0.4):
        cfg = ReplayConfig(**SHORT, physics_overrides={} if effort is None else {"finger_effort_limit": effort})
        sp = plan_sweep({"effort": np.array([0.1]), "mu": np.array([BUILT_MU])}, effort, 0, perturb_mm=0.0, perturb_deg=0.0)
        (op,) = [v for v, r in zip(sp.variants, sp.roles) if r[0] == "mu_at_study_effort"]
        assert op.effort_limit == effort
        a, b = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=[Variant(), op], frame_limit=60)
        assert np.array_equal(a.poses["body_pos"], b.poses["body_pos"])


@pytest.mark.slow  # the sweep CLI in a subprocess (10 worlds) and its --resume: 72 s on 2 shared cores (make test-slow)
@pytest.mark.needs_data
def test_run_sweep_writes_maps_and_summary(mirror, tmp_path):
    cfg = tmp_path / "short.json"
    ReplayConfig(**SHORT).save(cfg)
    out = tmp_path / "sweep"
    cmd = [sys.executable, str(ROOT / "scripts" / "run_sweep.py"), "--dataset", "grab", "--objects", "cubesmall",
           "--grid", "effort=0.05:0.4:2,mu=0.05:1.0:2", "--perturb", "1", "--out", str(out), "--config", str(cfg),
           "--data", str(mirror), "--threads", "2"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's replay
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    # Warp's banner and "Module ... load" lines are hidden unless --verbose (README)
    assert "Warp " not in res.stdout + res.stderr and "Module " not in res.stdout + res.stderr, res.stdout + res.stderr
    doc = json.loads((out / "cubesmall_lift.json").read_text())
    assert doc["worlds"] == 4 + 2 + 2 + 1 + 1
    # the study's operating point (0.4 N·m, mu 1) lifts this window (as the study does); on ice
    # (mu 0.05) nothing lifts; with contact ablated nothing lifts
    assert doc["lifted"][1][1] is True and doc["lifted"][0][0] is False and doc["lifted"][1][0] is False
    assert doc["min_mu_lifting_at_study_effort"] == 1.0 and doc["ablation"]["lifted"] is False
    assert doc["ablation"]["max_hand_object_contacts"] == 0
    assert (out / "cubesmall_lift.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "sweep.json").read_text())
    assert summary["recordings"] == 1 and summary["ablation_lifted"] == 0
    # a rerun with --resume computes nothing
    res2 = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert res2.returncode == 0 and "done before (resume)" in res2.stdout
    bad = subprocess.run(cmd[:2] + ["--dataset", "grab", "--grid", "mu=1:2:2", "--out", str(out)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "missing axis" in bad.stderr and "Traceback" not in bad.stderr


def test_heatmap_axes_within_the_sampled_range_and_legend_markers_as_plotted():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from replay.study.sweep import heatmap_figure

    E, M = np.linspace(0.1, 1.5, 4), np.linspace(0.3, 1.2, 4)
    doc = {"axes": {"effort_nm": E.tolist(), "mu": M.tolist()},
           "outcome": [["lifted" if e > 0.5 else "not_lifted" for _ in M] for e in E],
           "shake_held": [[False] * 4 for _ in E], "operating_point": {"mu": 1.0, "effort_nm": 0.4},
           "effort_line_at_mu1": [e > 0.5 for e in E], "mu_line_at_study_effort": [m > 0.9 for m in M]}
    fig = heatmap_figure(doc, "t")
    ax = fig.axes[0]
    assert ax.get_ylim() == pytest.approx((0.1, 1.5)) and ax.get_xlim() == pytest.approx((0.3, 1.2))
    plotted = {ln.get_label(): ln for ln in ax.lines}
    for h in ax.get_legend().legend_handles[4:]:  # after the four outcome colours
        ln = plotted[h.get_label()]
        assert (h.get_marker(), h.get_markersize(), h.get_markerfacecolor(), h.get_markeredgecolor()) == \
            (ln.get_marker(), ln.get_markersize(), ln.get_markerfacecolor(), ln.get_markeredgecolor())
    plt.close(fig)
