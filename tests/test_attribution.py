"""The attribution study (replay.study.attribution) on the real cubesmall recording, short protocol:
model-parameter factors are worlds of one batch, config factors get their own scene, and the
result has the documented shape."""

from __future__ import annotations

import json

import pytest
from short_window import SHORT

from replay.config import ReplayConfig
from replay.study.presets import PRESETS, apply_preset
from replay.errors import DataError
from replay.study.attribution import run_attribution
from replay.study.attribution_factors import FACTORS

pytestmark = pytest.mark.needs_data

FACTORS_SMALL = [
    dict(name="defaults", value="-", source="today"),
    dict(name="finger effort", value=1.0, source="test", choices={"finger_effort_limit": 1.0}),
    dict(name="object density", value=0.4, source="test", choices={"object_density_scale": 0.4}),
    dict(name="ice", value=0.05, source="test", choices={"hand_object_friction": 0.05}),
    dict(name="pad compression", value="6 mm", source="test", choices={"pad_compression": 6.0}),
]


@pytest.fixture(scope="module")
def result(mirror):
    base = ReplayConfig(**SHORT).replace(lift={"shake_s": 0.0})
    return run_attribution("grab", ["cubesmall_lift"], str(mirror), manosim_dir=mirror / "manosim", factors=FACTORS_SMALL, base=base,
                           log=lambda s: None)


def test_rows_have_the_documented_shape(result):
    rows = result["factors"]
    assert [r["name"] for r in rows] == [f["name"] for f in FACTORS_SMALL]
    for r in rows:
        assert {"name", "value", "source", "lifted", "of", "diagnosis"} <= set(r) and r["of"] == 1 and r["errors"] == 0
    json.dumps(result, default=str)  # JSON-ready
    by = {r["name"]: r for r in rows}
    assert by["defaults"]["lifted"] == 1 and by["defaults"]["diagnosis"] == {}
    assert by["ice"]["lifted"] == 0 and by["ice"]["diagnosis"] == {"never_gripped": 1}


def test_parameter_factors_share_one_batch_and_config_factors_do_not(result):
    rec = {r["name"]: r["recordings"]["cubesmall_lift"] for r in result["factors"]}
    assert {rec[n]["batch_worlds"] for n in ("defaults", "finger effort", "object density", "ice")} == {4}
    assert rec["pad compression"]["batch_worlds"] == 1 and rec["pad compression"]["pad_fingers"] == ["index"]
    # the density factor's mass is 0.4 x the simulated one (the print's, replay.sim.made_mass)
    assert rec["object density"]["object_mass"] == pytest.approx(0.4 * rec["defaults"]["object_mass"], rel=1e-5)


def test_builtin_factors_and_the_preset():
    names = {f["name"] for f in FACTORS}
    assert len(names - {"defaults"}) >= 10 and all(f["source"] for f in FACTORS)
    cfg = apply_preset(ReplayConfig(), "human-replay")
    p = PRESETS["human-replay"]
    assert cfg.preset == f"human-replay@{p['version']}" and set(p["settings"]) == set(p["sources"])
    assert all(getattr(cfg, k) == v for k, v in p["settings"].items())
    assert ReplayConfig().preset is None  # today's protocol stays the default
    with pytest.raises(DataError, match="preset"):
        apply_preset(ReplayConfig(), "nope")
