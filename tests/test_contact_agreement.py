"""Contact agreement with the recording (replay.protocol.contact_agreement) on the short cubesmall
window: the recorded bone set against the recorded landmarks, the simulated set in a contact run
and its ablation, and the precision / recall arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from short_window import SHORT, short_window

from replay.config import ReplayConfig
from replay.protocol import contact_agreement as ca
from replay.protocol.pad_compression import ObjectSDF
from replay.protocol.protocols.counting import agreement_medians
from replay.protocol.rollout import run_rollouts
from replay.results.records import RolloutRecord
from replay.sim.engine.variants import Variant
from replay.sim.world_builder import load_collision_parts

#: manopth fingertip landmark and manosim distal bone of each finger (manosim README body order)
TIPS = {"thumb": (4, 15), "index": (8, 3), "middle": (12, 6), "ring": (16, 12), "pinky": (20, 9)}


@pytest.fixture(scope="module")
def window(grab_dir, capsule_rhand):
    return short_window(grab_dir, capsule_rhand)


def test_precision_and_recall_arithmetic():
    d = np.full(16, 0.05)
    d[[3, 15, 2]] = [-0.004, 0.001, 0.0049]  # index_3 inside, thumb_3 1 mm off, index_2 4.9 mm off: all touch
    f = ca.agreement_fields(d, [3, 15, 6])
    assert f["contact_agreement_recorded_bones"] == ["index_2", "index_3", "thumb_3"]
    assert f["contact_agreement_precision"] == pytest.approx(2 / 3) and f["contact_agreement_recall"] == pytest.approx(
        2 / 3
    )
    none = ca.agreement_fields(d, [])
    assert none["contact_agreement_precision"] is None and none["contact_agreement_recall"] == 0.0
    assert ca.agreement_fields(d, None)["contact_agreement_recall"] is None  # engine without per-contact forces
    # the summary counts only the recordings with recorded and simulated contact, and says how many of all
    no_rec = ca.agreement_fields(np.full(16, 0.05), [3])  # simulated contact, the person touched nowhere
    assert no_rec["contact_agreement_recall"] is None and no_rec["contact_agreement_precision"] == 0.0
    g = ca.agreement_fields(d, [3])  # precision 1, recall 1/3
    recs = [RolloutRecord.from_metrics(x) for x in (f, none, no_rec, g)] + [RolloutRecord()]
    med = agreement_medians(recs)
    assert med == {
        "median_contact_agreement_precision": pytest.approx((2 / 3 + 1) / 2),
        "median_contact_agreement_recall": pytest.approx((2 / 3 + 1 / 3) / 2),
        "contact_agreement_n": 2,
        "contact_agreement_of": 5,
        "contact_agreement_no_simulated": 1,
        "contact_agreement_no_recorded": 2,
    }
    assert agreement_medians(recs[1:2])["median_contact_agreement_recall"] is None  # a recall of 0 from no contact


@pytest.mark.needs_data
def test_recorded_bones_follow_the_recorded_fingertips(window, capsule_rhand):
    """Re-derived from the raw landmarks: a finger whose recorded fingertip landmark is more than 20 mm
    from the object's hulls cannot have its distal bone within 5 mm (the capsule radius and the
    landmark-to-capsule offset are well under 15 mm); one whose fingertip is inside the hulls or
    within 2 mm of them has its distal bone (capsule, radius ~8 mm around the tip) touching."""
    rec, coords = window
    g = int(rec.grasp_frame)
    obj = rec.target_object
    sdf = ObjectSDF(load_collision_parts(obj.asset), obj.pos[g], obj.quat[g])
    tip_mm = {f: float(sdf(rec.landmarks[g, lm])[0]) * 1000.0 for f, (lm, _) in TIPS.items()}
    d = ca.recorded_bone_distances(rec, coords, capsule_rhand)
    touched = set(ca.agreement_fields(d, [])["contact_agreement_recorded_bones"])
    names = ca.BONE_NAMES
    assert any(v > 20.0 for v in tip_mm.values()) and any(v < 2.0 for v in tip_mm.values()), tip_mm
    for f, (_, bone) in TIPS.items():
        if tip_mm[f] > 20.0:
            assert names[bone] not in touched, (f, tip_mm[f], d[bone])
        if tip_mm[f] < 2.0:
            assert names[bone] in touched, (f, tip_mm[f], d[bone])


@pytest.mark.needs_data
def test_rollout_reports_agreement_and_the_ablation_has_no_simulated_contact(window, capsule_rhand):
    """The cube lifted by a pinch carries force on at least two bones, the thumb's distal one among
    them (opposition: a pinch needs the thumb against a finger); in the ablation no hand-object
    contact exists, so no bone carries force: recall 0, precision undefined."""
    rec, coords = window
    res = run_rollouts(
        rec, coords, capsule_rhand, cfg=ReplayConfig(**SHORT).replace(lift={"shake_s": 0.0}), variants=[Variant(), Variant(ablation=True)]
    )
    m, a = res[0].metrics, res[1].metrics
    assert m["lifted"]
    assert len(m["contact_agreement_simulated_bones"]) >= 2 and "thumb_3" in m["contact_agreement_simulated_bones"]
    both = set(m["contact_agreement_simulated_bones"]) & set(m["contact_agreement_recorded_bones"])
    assert m["contact_agreement_precision"] == pytest.approx(len(both) / len(m["contact_agreement_simulated_bones"]))
    assert m["contact_agreement_recall"] == pytest.approx(len(both) / len(m["contact_agreement_recorded_bones"]))
    assert a["contact_agreement_simulated_bones"] == [] and a["contact_agreement_precision"] is None
    assert a["contact_agreement_recall"] == 0.0
    assert a["contact_agreement_recorded_bones"] == m["contact_agreement_recorded_bones"]  # the person's, both runs


@pytest.mark.needs_data
def test_recorded_protocol_reads_the_simulated_set_at_the_grasp_frame(window, capsule_rhand):
    """A recorded plan has no hold: the simulated set is read at the frame replaying the recorded grasp
    time (agreement_frame), and the recorded set is the same person's as in the lift protocol."""
    rec, coords = window
    cfg = ReplayConfig(**SHORT)
    m = run_rollouts(rec, coords, capsule_rhand, cfg=cfg, variants=[Variant()], protocol="recorded")[0].metrics
    lift_recorded = ca.agreement_fields(ca.recorded_bone_distances(rec, coords, capsule_rhand), [])
    assert m["contact_agreement_recorded_bones"] == lift_recorded["contact_agreement_recorded_bones"]
    assert m["contact_agreement_simulated_bones"] is not None and m["contact_agreement_recall"] is not None
    from replay.protocol import recorded_protocol as tracking

    plan = tracking.plan_recorded(rec, coords, cfg)
    k = ca.agreement_frame(plan, float(rec.time[rec.grasp_frame]))
    assert k is not None and abs(plan.rec_time[k] - rec.time[rec.grasp_frame]) <= cfg.frame_dt
