"""Agreement tables (replay.study.agreement, scripts/agreement.py) on two real short studies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_study import SHORT

from replay.config import ReplayConfig
from replay.study.runner import run_study

pytestmark = pytest.mark.needs_data

OBJECTS = ["cubesmall", "mug"]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def two_studies(tmp_path_factory, mirror):
    d = tmp_path_factory.mktemp("agreement")
    paths = []
    for name, effort in (("strong", 0.4), ("limp", 0.002)):  # 2 mN·m: fingers that cannot squeeze
        p = d / name / "study.json"
        run_study("grab", p, ReplayConfig(**SHORT, physics_overrides={"finger_effort_limit": effort}), objects=OBJECTS, workers=0, progress=False,
                  data_dir=mirror, ablation=False)
        paths.append(p)
    return d, paths


def _outcomes(study_json):
    """Outcome per recording, read from the per-rollout JSON files (not the study's rows)."""
    rdir = study_json.parent / "study_rollouts"
    return {p.stem: json.loads(p.read_text())["outcome"] for p in rdir.glob("*_lift.json")}


def test_agreement_counts_equal_the_rollouts(two_studies):
    d, paths = two_studies
    out = d / "agreement.json"
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "agreement.py"), "--studies", *map(str, paths),
                          "--labels", "strong", "limp", "--out", str(out)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    table = json.loads(out.read_text())
    a, b = (_outcomes(p) for p in paths)
    assert table["common"] == len(a) == 2
    lift_a = {q for q, o in a.items() if o == "lifted"}
    lift_b = {q for q, o in b.items() if o == "lifted"}
    pair = table["pairs"][0]
    assert (pair["both"], pair["only_a"], pair["only_b"]) == (len(lift_a & lift_b), len(lift_a - lift_b),
                                                             len(lift_b - lift_a))
    assert pair["both"] + pair["only_a"] + pair["only_b"] + pair["neither"] == 2
    assert sorted(pair["flipped"]) == sorted(lift_a ^ lift_b)
    assert lift_a, "the strong grip lifts at least one of cubesmall and mug on the short window"
    assert not lift_b, "fingers limited to 2 mN·m lift nothing"
    assert "| strong | limp |" in res.stdout


def test_agreement_needs_two_studies(two_studies):
    """One set alone is refused in one line."""
    from replay.errors import UsageError
    from replay.study.agreement import agreement

    with pytest.raises(UsageError, match="at least two rollout sets"):
        agreement([two_studies[1][0]])


@pytest.fixture(scope="module")
def oracle_study(two_studies, mirror):
    """A hug-oracle study of cubesmall alone (the short oracle of tests/test_oracle.py): its rows are
    ``oracle_rollouts``, its ``rollouts`` empty."""
    from test_oracle import SHORT_ORACLE

    p = two_studies[0] / "oracle" / "study.json"
    run_study("grab", p, ReplayConfig(**SHORT_ORACLE), objects=["cubesmall"], workers=0, progress=False,
              data_dir=mirror, protocols=["hug-oracle"])
    return p


def test_agreement_across_two_protocols_says_what_it_paired(two_studies, oracle_study):
    """A lift study against a hug-oracle study (issue #40: it printed "0 recordings"): the oracle's rows are
    its set, cubesmall paired with both outcomes as their rollout files hold them, mug left out because the
    oracle study did not select it."""
    d, (strong, _) = two_studies
    out = d / "protocols.json"
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "agreement.py"), "--studies", str(strong),
                          str(oracle_study), "--out", str(out)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    table = json.loads(out.read_text())
    assert [s["protocol"] for s in table["studies"]] == ["lift", "hug-oracle"]
    assert table["paired"] == ["cubesmall_lift"] and table["common"] == 1
    oracle_doc = json.loads((oracle_study.parent / "study_rollouts" / "cubesmall_lift.hug-oracle.json").read_text())
    assert table["recordings"][0]["outcomes"] == [_outcomes(strong)["cubesmall_lift"], oracle_doc["outcome"]]
    (left,) = table["left_out"]
    assert left["sequence"] == "mug_lift" and left["reasons"] == [f"{table['studies'][1]['label']}: not one of its "
                                                                  "recordings"]
    assert "paired 1 recording(s) present in every set: cubesmall_lift" in res.stdout
    assert "left out mug_lift: " in res.stdout and "1 recordings in every set" in res.stdout


def _study(path, protocols, rows, oracle_rows, failed, sequences):
    from replay.results.files import write_study
    from replay.results.records import StudyRecord

    write_study(path, StudyRecord(dataset="grab", protocols=protocols, rollouts=rows, oracle_rollouts=oracle_rows,
                                  failed=failed, sequences=sequences, config={"effort_limit": 0.4}))
    return path


def test_one_study_two_protocols_and_the_reasons_left_out(tmp_path):
    """One study holding both protocols, compared with itself (``--protocols lift hug-oracle``): pairs
    where both ran; a recording the oracle could not replay is left out with its failure, one the lift
    never ran with "no lift rollout"; a protocol the study did not run is refused in one line."""
    from replay.errors import UsageError
    from replay.study.agreement import agreement

    p = _study(tmp_path / "s.json", ["lift", "hug-oracle"],
               [{"sequence": "a", "outcome": "lifted", "rise": 0.1}, {"sequence": "b", "outcome": "not_lifted"}],
               [{"sequence": "a", "outcome": "lifted"}, {"sequence": "c", "outcome": "lifted"}],
               {"b [hug-oracle]": "DataError: x", "c": "refused: y"}, ["a", "b", "c"])
    t = agreement([p, p], protocols=["lift", "hug-oracle"])
    assert t["paired"] == ["a"] and t["pairs"][0]["both"] == 1 and t["recordings"][0]["rises_mm"] == [100.0, None]
    reasons = {x["sequence"]: x["reasons"] for x in t["left_out"]}
    lab = [s["label"] for s in t["studies"]]
    assert reasons == {"b": [f"{lab[1]}: could not be replayed (DataError: x)"],
                       "c": [f"{lab[0]}: could not be replayed (refused: y)"]}
    assert lab[1].endswith("hug-oracle)") and lab[0] != lab[1]
    with pytest.raises(UsageError, match=r"s\.json has no recorded rollouts \(its protocols: lift, hug-oracle\)"):
        agreement([p, p], protocols=["lift", "recorded"])
    with pytest.raises(UsageError, match="1 protocols for 2 studies"):
        agreement([p, p], protocols=["lift"])
