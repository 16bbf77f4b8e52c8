"""The refine neighbourhood's perturbation design and verdict (replay.protocol.refine_neighbourhood)
and the study counts of refine jobs (the refine protocol's counts): no physics."""

from __future__ import annotations

import numpy as np
import pytest

from replay.protocol.protocols.base import protocol_named
from replay.protocol.refine_neighbourhood import NEIGHBOURS, hadamard, holds, perturbations
from replay.results.records import REFINE_FIELDS, RolloutRecord

refine_summary = protocol_named("refine").counts


def test_design_is_orthogonal_balanced_and_sized():
    """16 perturbations of the 11 correction numbers: every entry +-1 mm (wrist offset) or +-1 deg
    (rotation, closures); each number 8 up and 8 down; every pair of numbers orthogonal (their
    signs agree in exactly 8 of 16); no two perturbations alike."""
    d = perturbations(1.0, 2.0)
    assert d.shape == (NEIGHBOURS, 11) == (16, 11)
    assert np.all(np.abs(d[:, :3]) == 1.0) and np.all(np.abs(d[:, 3:]) == 2.0)
    sign = np.sign(d)
    assert np.all(sign.sum(axis=0) == 0)
    np.testing.assert_array_equal(sign.T @ sign, 16 * np.eye(11))
    assert len({tuple(r) for r in sign}) == 16
    with pytest.raises(ValueError):
        hadamard(12)


def test_holds_needs_lift_shake_and_release():
    assert holds({"outcome": "lifted", "shake_held": True})
    assert not holds({"outcome": "lifted", "shake_held": False})
    assert not holds({"outcome": "stuck", "shake_held": True})  # did not fall when the hand opened
    assert not holds({"outcome": "not_lifted", "shake_held": None})


def test_summary_counts_neighbourhood_and_seeds():
    """Three refine rows: one holds with a sound neighbourhood, one lifts but drops in the shake,
    one never lifts; the counts follow, and the study rows carry the two new fields."""
    base = dict(
        refine_wrist_mm=2.0,
        refine_wrist_deg=1.0,
        refine_finger_deg=3.0,
        refine_ablation_clean=True,
        refine_ablation_max_disp_mm=0.1,
        refine_rollouts=10,
        refine_wall_s=1.0,
    )
    docs = [
        dict(
            base,
            refine_outcome="lifted",
            refine_shake_held=True,
            refine_neighbourhood_success=0.875,
            refine_seed_agreement=True,
        ),
        dict(
            base,
            refine_outcome="lifted",
            refine_shake_held=False,
            refine_neighbourhood_success=0.25,
            refine_seed_agreement=False,
        ),
        dict(
            base,
            refine_outcome="not_lifted",
            refine_shake_held=None,
            refine_neighbourhood_success=None,
            refine_seed_agreement=True,
        ),
    ]
    c = refine_summary([RolloutRecord.from_metrics(d) for d in docs], {}, 0.0)
    assert (c["refined"], c["lifted"], c["held"], c["neighbourhood_ok"], c["seed_agreement"]) == (3, 2, 1, 1, 2)
    assert c["neighbourhood_min"] == 0.25 and c["rollouts"] == 30
    assert {"refine_neighbourhood_success", "refine_seed_agreement"} <= set(REFINE_FIELDS)


def test_report_section_shows_neighbourhood_and_seeds():
    from types import SimpleNamespace

    from replay.output.refine_section import refine_section_html

    row = dict(
        sequence="mug_lift",
        refine_outcome="lifted",
        refine_wrist_mm=2.0,
        refine_neighbourhood_success=0.875,
        refine_seed_agreement=False,
        refine_shake_held=True,
    )
    study = SimpleNamespace(
        refine_rollouts=[row],
        rollouts=[{"sequence": "mug_lift", "outcome": "not_lifted"}],
        counts={"refine": {"lifted": 1, "refined": 1, "held": 1, "neighbourhood_ok": 1, "seed_agreement": 0}},
    )
    html = refine_section_html(study)
    assert "<td>0.88</td><td>False</td>" in html and "neighbourhood &gt;= 80 % 1; seeds agree 0" in html
