"""The protocol registry (replay.protocol.protocols): a protocol is one class, registered; a study, its rows, CSV,
counts, keys and files ask the registry. A toy protocol declared in this file alone runs through a real study."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pytest
from test_study import SHORT

from replay.config import ReplayConfig
from replay.protocol.plan import PHASE_APPROACH, PHASE_SETTLE, plan_from_rows, replayed_frames
from replay.protocol.protocols.base import (
    Protocol,
    ResultKey,
    all_protocols,
    primary_protocol,
    protocol_named,
    register,
    unregister,
)
from replay.results.files import read_rollout
from replay.results.rollout_parts import RESULT_TYPES, ProtocolResult


@dataclass
class HoverResult(ProtocolResult):
    """The toy protocol's own result (its rollout JSON's ``hover``)."""

    key: ClassVar[str] = "hover"

    hover_contacts: int | None = field(default=None, metadata={"unit": "contacts", "doc": "at the last frame"})


class Hover(Protocol):
    """A toy protocol: settle, then hold the recorded grasp pose for a few frames; a success when the hand
    touches the object at the end. Its rows go to the study's ``extra`` (``hover_rollouts``) and
    ``study.hover.csv``; no ablation, no sampled verdict."""

    name = "hover"
    rows_field = "hover_rollouts"
    row_fields = ("sequence", "outcome", "hover_contacts")
    csv_suffix = ".hover"
    success = "touching"
    result_type = HoverResult

    def plan(self, rec, coords, mjcf, cfg):
        times, cc, first = replayed_frames(rec, coords, cfg.approach_window_s, stop=int(rec.grasp_frame) + 1)
        rows = [cc[0]] * 3 + [cc[-1]] * 5
        return plan_from_rows(rows, [PHASE_SETTLE] * 3 + [PHASE_APPROACH] * 5, cfg.frame_dt, start_frame=first, grasp_frame=rec.grasp_frame)

    def judge(self, rec, plan, scene, extent, cfg, trace, poses, metrics):
        n = int(trace.ccount[trace.done - 1])
        return {"outcome": self.success if n else "apart", "hover_contacts": n}

    def row(self, rec, json_rel):
        return {"sequence": rec.sequence, "outcome": rec.outcome, "hover_contacts": rec.result.hover_contacts}

    def counts(self, recs, failed, wall_s):
        return {"rollouts": len(recs), "touching": sum(r.outcome == self.success for r in recs)}


@pytest.fixture
def hover():
    register(Hover)
    yield protocol_named(Hover.name)
    unregister(Hover.name)
    assert HoverResult.key not in RESULT_TYPES


def test_the_registry_holds_the_four_protocols_in_their_order():
    assert [p.name for p in all_protocols()][:4] == ["lift", "hug-oracle", "recorded", "refine"]
    assert primary_protocol().name == "lift" and protocol_named("lift").primary
    assert [p.name for p in all_protocols() if p.ablation] == ["lift", "hug-oracle", "refine"]
    assert [p.name for p in all_protocols() if p.sampled] == ["lift", "hug-oracle"]
    assert protocol_named("recorded").rows_field == "recorded_rollouts" and protocol_named("recorded").csv_suffix
    with pytest.raises(KeyError, match="unknown protocol 'lfit'"):
        protocol_named("lfit")
    with pytest.raises(ValueError, match="registered already"):
        register(type("Lift2", (Protocol,), {"name": "lift"}))


@pytest.mark.needs_data
def test_a_protocol_declared_in_a_test_runs_through_a_study(tmp_path, mirror, hover):
    """One recording, 8 frames: its results file, row (in the study's extra), CSV, counts and key, with no edit
    of the package; the protocol name is a choice of run_study like any other."""
    from replay.study.runner import run_study

    out = tmp_path / "study.json"
    run_study(
        "grab",
        out,
        ReplayConfig(**SHORT),
        objects=["cubesmall"],
        workers=0,
        progress=False,
        data_dir=mirror,
        protocols=[Hover.name],
    )
    study = json.loads(out.read_text())
    key = ResultKey("cubesmall_lift", Hover.name)
    assert key.text == "cubesmall_lift [hover]" and key.stem == "cubesmall_lift.hover"
    doc = read_rollout(tmp_path / "study_rollouts" / f"{key.stem}.json")
    assert doc.protocol == Hover.name and doc.timing.frames == doc.timing.frames_planned == 8 and doc.ablation is None
    assert isinstance(doc.result, HoverResult) and doc.extra == {}  # its typed result, under its key
    touching = doc.result.hover_contacts > 0
    assert doc.outcome == ("touching" if touching else "apart")
    assert study["protocols"] == [Hover.name] and study["rollouts"] == [] and study["failed"] == {}
    assert study["hover_rollouts"] == [
        {"sequence": "cubesmall_lift", "outcome": doc.outcome, "hover_contacts": doc.result.hover_contacts}
    ]
    assert study["counts"]["protocol"] == Hover.name and study["counts"][Hover.name] == {
        "rollouts": 1,
        "touching": int(touching),
    }
    rows = list(csv.DictReader((tmp_path / "study.hover.csv").open(newline="")))
    assert [r["sequence"] for r in rows] == ["cubesmall_lift"] and rows[0]["outcome"] == doc.outcome
    # study.csv: the lift's header alone (the verdict's columns first), no lift rows
    assert (tmp_path / "study.csv").read_text().splitlines()[0].startswith("verdict,reason,p_lift,p_lo,p_hi,sequence,")
    assert len((tmp_path / "study.csv").read_text().splitlines()) == 1
    np.testing.assert_equal(np.load(tmp_path / "study_rollouts" / f"{key.stem}.npz")["phase"][:4], [0, 0, 0, 1])


def test_each_protocol_declares_its_config_part():
    """The lift's and the hug-oracle's settings are their parts of the config (issue #55: one home each); a part
    not in the config is refused at registration."""
    from replay.config import PARTS

    parts = {p.name: p.config_part for p in all_protocols()}
    assert parts["lift"] == "lift" and parts["hug-oracle"] == "oracle" and parts["recorded"] is None
    for name, part in parts.items():
        assert part is None or isinstance(getattr(ReplayConfig(), part), PARTS[part]), name
    with pytest.raises(ValueError, match="config part 'nope'"):
        register(type("Nope", (Protocol,), {"name": "nope", "config_part": "nope"}))
