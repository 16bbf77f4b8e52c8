"""Agreement tables (replay.study.agreement, scripts/agreement.py) on two real short studies."""

from __future__ import annotations

import json
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
        run_study("grab", p, ReplayConfig(**SHORT, effort_limit=effort), objects=OBJECTS, workers=0, progress=False,
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
                          "--labels", "strong", "limp", "--out", str(out)], capture_output=True, text=True, timeout=120)
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
    from replay.errors import UsageError
    from replay.study.agreement import agreement

    with pytest.raises(UsageError, match="at least two"):
        agreement([two_studies[1][0]])
