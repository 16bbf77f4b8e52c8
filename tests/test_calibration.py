"""``--physics calibrated`` (issue #46 item 4): the figure it is chosen by, the choice among the declared
candidates only, the results file it writes and the named physics that reads it.

The candidates' studies are stand-ins here (the sampled studies are another branch's; the command's
``run_candidate`` is replaced by one that writes a study with the schema's fields, its lifted counts
depending on the candidate as a real one's would): every figure is re-derived from those counts.
"""

from __future__ import annotations

import json

import pytest
from p_lift_fixture import entry

from replay.cli import run
from replay.commands import calibrate as cmd
from replay.config import ReplayConfig
from replay.errors import DataError
from replay.sim import calibration_file, physics
from replay.study.calibration import (
    ATTRIBUTIONS,
    CENTRES,
    CONDITIONS,
    OWN_WORLD,
    balanced_accuracy,
    candidate_figures,
    centred,
    choose,
)
from replay.study.uncertainty import Variable

N = 2  # --samples 2, as the tiny run
SEQS = ("mug_lift", "stapler_lift")


def _row(seq, real, bad):
    return {
        "sequence": seq,
        "p_lift": {c: entry(k, N) for c, k in real.items()},
        "p_lift_corrupted": {"wrist_offset_2cm": {c: entry(k, N) for c, k in bad.items()}},
    }


def test_balanced_accuracy_counts_real_and_corrupted_decisions():
    rows = [_row("a", {"x": 2}, {"x": 0}), _row("b", {"x": 0}, {"x": 1}), _row("c", {"x": 1}, {"x": 2})]
    # real decided real (p >= 0.5): a (1.0), c (0.5) -> 2/3; corrupted decided not real (p < 0.5): a only -> 1/3
    f = balanced_accuracy(rows, "x")
    assert f["tpr"] == pytest.approx(2 / 3) and f["tnr"] == pytest.approx(1 / 3)
    assert f["balanced_accuracy"] == pytest.approx(0.5) and (f["n_real"], f["n_corrupted"]) == (3, 3)
    assert balanced_accuracy(rows, "absent") is None


def test_choose_takes_the_best_and_the_first_declared_on_a_tie():
    figs = [
        {"name": "a", "balanced_accuracy": 0.6},
        {"name": "b", "balanced_accuracy": 0.8},
        {"name": "c", "balanced_accuracy": 0.8},
        {"name": "d", "balanced_accuracy": None},
    ]
    assert choose(figs)["name"] == "b"
    with pytest.raises(ValueError):
        choose([{"name": "d", "balanced_accuracy": None}])


def test_centred_moves_a_uniform_keeping_its_width_and_fixes_a_choice():
    vs = (
        Variable("friction", "uniform", "u", "s", 0.3, 1.0),
        Variable("softness", "choice", "c", "s", levels=("a", "b")),
        Variable("wrist_offset", "normal", "n", "s", dims=3),
    )
    f, s, w = centred(vs, {"friction": 1.0, "softness": "b"})
    assert (f.low, f.high) == pytest.approx((0.65, 1.35)) and "calibrated" in f.distribution
    assert s.levels == ("b",) and w is vs[2]
    for bad in ({"nope": 1}, {"softness": "z"}, {"wrist_offset": 0.0}):
        with pytest.raises(ValueError):
            centred(vs, bad)


def _fake_runner(calls):
    """A stand-in for run_study.py: lifted counts that depend on the candidate (the manosim_soft set at
    friction 1.0 lifts every real recording and no corrupted one under as_replayed), so one wins."""

    def runner(argv, env):
        choice = json.loads(open(env[calibration_file.ENV]).read())["choice"]
        cand = choice["centres"]
        calls.append((argv, cand, choice["overrides"]))
        out = cmd.Path(argv[argv.index("--out") + 1])
        out.parent.mkdir(parents=True, exist_ok=True)
        good = cand == {"softness": "manosim_soft", "friction": 1.0}
        rows = [
            _row(
                s,
                {"as_replayed": 2, "wrist_uncompensated": 1},
                {"as_replayed": 0 if good else 2, "wrist_uncompensated": 1},
            )
            for s in SEQS
        ]
        sampling = {
            "conditions": [
                {"name": "as_replayed", "overrides": {}},
                {"name": "wrist_uncompensated", "overrides": {"wrist_gravity_compensation": False}},
            ],
            "corruptions": ["wrist_offset_2cm"],
        }
        out.write_text(json.dumps({"rollouts": rows, "sampling": sampling}))
        return 0

    return runner


def _argv(work, out, *extra: str) -> list[str]:
    """calibrate.py's arguments for the fake studies of SEQS at N samples."""
    objects = ",".join(s.removesuffix("_lift") for s in SEQS)
    return [
        "--dataset",
        "grab",
        "--objects",
        objects,
        "--samples",
        str(N),
        "--work",
        str(work),
        "--out",
        str(out),
        *extra,
    ]


def test_calibrate_chooses_once_among_the_declared_candidates(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cmd, "run_candidate", _fake_runner(calls))
    out = tmp_path / "calibration.json"
    argv = _argv(tmp_path / "work", out)
    assert run(lambda: cmd.main(argv)) == 0
    doc = json.loads(out.read_text())
    assert [c for _, c, _ in calls] == list(CENTRES)  # one study per declared centre candidate, nothing else
    assert all(o == OWN_WORLD for _, _, o in calls)  # every candidate on the recording's own hand
    assert all(
        a[a.index("--physics") + 1] == "calibrated" and a[a.index("--samples") + 1] == str(N) and "--corruptions" in a
        for a, _, _ in calls
    )
    assert len(doc["candidates"]) == len(CENTRES) * len(CONDITIONS)
    ch = doc["choice"]
    assert ch["centres"] == {"softness": "manosim_soft", "friction": 1.0} and ch["condition"] == "as_replayed"
    assert ch["balanced_accuracy"] == 1.0 and doc["recordings"] == sorted(SEQS) and doc["samples"] == N
    # the others: every real recording lifted, every corrupted one too -> TPR 1, TNR 0 -> 0.5
    assert sorted({c["balanced_accuracy"] for c in doc["candidates"]}) == [0.5, 1.0]
    assert "calibrate.py" in doc["made_by"] and doc["commit"]

    # the named physics reads it: the replay table, the chosen values in, its name says it was fitted
    monkeypatch.setenv(calibration_file.ENV, str(out))
    cfg = physics.apply_physics(ReplayConfig(), "calibrated")
    assert physics.table("calibrated").keys() == physics.table("replay").keys()
    assert physics.calibrated_centres(cfg) == ch["centres"]
    assert physics.calibrated_centres(ReplayConfig(physics="replay")) == {}


def test_attribution_reverts_each_item_on_the_choice_and_keeps_the_fitted_hand_only_where_it_judges_better(
    tmp_path, monkeypatch
):
    calls = []
    runner = _fake_runner(calls)

    def hand_better(argv, env):  # one real recording fails, but not on zerohand: the zerohand row judges better
        rc = runner(argv, env)
        if calls[-1][2].get("hand_shape") != "zerohand":
            out = cmd.Path(argv[argv.index("--out") + 1])
            doc = json.loads(out.read_text())
            doc["rollouts"][0]["p_lift"] = {c: entry(0, N) for c in doc["rollouts"][0]["p_lift"]}
            out.write_text(json.dumps(doc))
        return rc

    monkeypatch.setattr(cmd, "run_candidate", hand_better)
    out = tmp_path / "calibration.json"
    argv = [
        "--dataset",
        "grab",
        "--samples",
        str(N),
        "--work",
        str(tmp_path / "work"),
        "--out",
        str(out),
        "--attribute",
    ]
    assert run(lambda: cmd.main(argv)) == 0
    doc = json.loads(out.read_text())
    att = {r["name"]: r for r in doc["attribution"]}
    assert list(att) == ["chosen"] + [a.name for a in ATTRIBUTIONS]
    for a in ATTRIBUTIONS:  # each row: the choice's overrides with the item's reverted, run at the chosen centres
        assert att[a.name]["overrides"] == {**att["chosen"]["overrides"], **a.overrides}
    assert [c for _, c, _ in calls[len(CENTRES) :]] == [doc["choice"]["centres"]] * len(ATTRIBUTIONS)
    assert att["hand"]["balanced_accuracy"] > att["chosen"]["balanced_accuracy"]
    assert "hand_shape" not in doc["choice"]["overrides"]  # the fitted hand judged worse: the dataset's shape
    assert att["chosen"]["auc"] == {} and att["hand"]["median_p_real"] == 1.0 and att["chosen"]["median_p_real"] == 0.5


def test_candidate_figures_add_the_median_and_each_corruptions_auc():
    rows = [_row("a", {"x": 2}, {"x": 0}), _row("b", {"x": 1}, {"x": 1}), _row("c", {"x": 0}, {"x": 0})]
    disc = [
        {"condition": "x", "corruption": "wrist_offset_2cm", "auc": 0.7},
        {"condition": "y", "corruption": "z", "auc": 0.1},
    ]
    f = candidate_figures(rows, disc, "x")
    assert f["median_p_real"] == 0.5 and f["auc"] == {"wrist_offset_2cm": 0.7}
    assert f["balanced_accuracy"] == balanced_accuracy(rows, "x")["balanced_accuracy"]


def test_calibrated_overrides_are_fitted_choices_with_their_source(tmp_path, monkeypatch):
    p = tmp_path / "calibration.json"
    p.write_text(
        json.dumps(
            {
                "base": "replay",
                "commit": "abc1234",
                "recordings": list(SEQS),
                "choice": {
                    "name": "x / wrist_uncompensated",
                    "balanced_accuracy": 0.75,
                    "overrides": {"wrist_gravity_compensation": False},
                    "centres": {},
                },
            }
        )
    )
    monkeypatch.setenv(calibration_file.ENV, str(p))
    c = physics.table("calibrated")["wrist_gravity_compensation"]
    assert c.value is False and "fitted once" in c.source and "0.75" in c.source and "2 recordings" in c.source
    cfg = physics.apply_physics(ReplayConfig(), "calibrated")
    assert physics.choice_value(cfg, "wrist_gravity_compensation") is False
    assert physics.choice_value(cfg, "cone") == physics.table("replay")["cone"].value
    from replay.study.job import config_hash

    before = config_hash(cfg)
    doc = json.loads(p.read_text())
    doc["choice"]["overrides"] = {}
    p.write_text(json.dumps(doc))
    import os

    os.utime(p, ns=(p.stat().st_mtime_ns + 10**9,) * 2)  # a new file on a coarse clock too
    assert config_hash(cfg) != before  # a new calibration is not resumed over


@pytest.mark.parametrize(
    "doc,field",
    [
        (None, None),
        ({"base": "replay"}, "choice"),
        ({"base": "nope", "choice": {"overrides": {}, "centres": {}}}, "base"),
        ({"base": "replay", "choice": {"overrides": {"cone": "round"}, "centres": {}}}, "choice.overrides.cone"),
    ],
)
def test_a_missing_or_bad_calibration_is_one_line_naming_the_field(tmp_path, monkeypatch, doc, field):
    p = tmp_path / "calibration.json"
    if doc is not None:
        p.write_text(json.dumps(doc))
    monkeypatch.setenv(calibration_file.ENV, str(p))
    with pytest.raises(DataError) as e:
        physics.table("calibrated")
    assert e.value.field == field and str(p) in str(e.value.path)


def test_a_study_without_corruptions_is_refused(tmp_path, monkeypatch):
    def runner(argv, env):
        out = cmd.Path(argv[argv.index("--out") + 1])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"rollouts": [{"sequence": "mug_lift", "p_lift": {"as_replayed": entry(1, N)}}]}))
        return 0

    monkeypatch.setattr(cmd, "run_candidate", runner)
    rc = run(lambda: cmd.main(["--work", str(tmp_path), "--out", str(tmp_path / "c.json"), "--samples", "2"]))
    assert rc == 1 and not (tmp_path / "c.json").exists()


def test_the_sampler_draws_from_the_calibrated_centres(tmp_path, monkeypatch):
    """Under ``calibrated`` the declared variables are centred as the file says (replay.study.uncertainty's,
    through variables_for): friction's uniform moved to [0.65, 1.35], softness fixed; the other variables'
    draws are those of the declared ones (the same dimensions, the same seeded hypercube)."""
    from replay.study.calibration import variables_for
    from replay.study.sampler import draw_samples
    from replay.study.uncertainty import variables

    p = tmp_path / "calibration.json"
    p.write_text(
        json.dumps(
            {
                "base": "replay",
                "choice": {"name": "c", "overrides": {}, "centres": {"softness": "manosim_soft", "friction": 1.0}},
            }
        )
    )
    monkeypatch.setenv(calibration_file.ENV, str(p))
    cfg = physics.apply_physics(ReplayConfig(), "calibrated")
    vs = variables_for(cfg)
    assert variables_for(ReplayConfig(physics="replay")) == variables(ReplayConfig(physics="replay"))
    sig, ranges = {"wrist_mm": 2.0, "object_mm": 0.5}, {"object_mass_scale": (0.8, 1.2)}
    cal = draw_samples(0, "mug_lift", 16, sigmas=sig, variables=vs, ranges=ranges)
    declared = variables(ReplayConfig(physics="replay"))
    dec = draw_samples(0, "mug_lift", 16, sigmas=sig, variables=declared, ranges=ranges)
    assert all(0.65 <= s["friction"] <= 1.35 for s in cal) and {s["softness"] for s in cal} == {"manosim_soft"}
    assert [s["friction"] - d["friction"] for s, d in zip(cal, dec)] == pytest.approx(
        [0.35] * 16
    )  # shifted by 1 - 0.65
    assert [s["object_mass_scale"] for s in cal] == [d["object_mass_scale"] for d in dec]
    p.write_text(json.dumps({"base": "replay", "choice": {"name": "c", "overrides": {}, "centres": {"softness": "x"}}}))
    with pytest.raises(DataError) as e:
        variables_for(cfg)
    assert e.value.field == "choice.centres"


def test_candidates_limits_the_choice_to_the_measured_ones_and_says_so(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cmd, "run_candidate", _fake_runner(calls))
    out = tmp_path / "calibration.json"
    argv = _argv(tmp_path / "work", out, "--candidates", "2,0")
    assert run(lambda: cmd.main(argv)) == 0
    doc = json.loads(out.read_text())
    assert [c for _, c, _ in calls] == [CENTRES[0], CENTRES[2]]  # in declared order, only those named
    assert len(doc["candidates"]) == 2 * len(CONDITIONS)
    assert "2 of the 5" in doc["candidates_measured"] and "partial" in doc["candidates_measured"]
    for bad in ("9", "x", ","):
        assert run(lambda bad=bad: cmd.main([*argv[:-1], bad])) == 2


def test_score_only_runs_nothing_and_says_which_rows_are_not_measured(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cmd, "run_candidate", _fake_runner(calls))
    work, out = tmp_path / "work", tmp_path / "calibration.json"
    argv = _argv(work, out, "--attribute")
    assert run(lambda: cmd.main(argv)) == 0
    first = json.loads(out.read_text())
    n = len(calls)
    (work / "attribution_all" / "study.json").unlink()  # a row whose study never finished
    assert run(lambda: cmd.main([*argv, "--score-only"])) == 0
    doc = json.loads(out.read_text())
    assert len(calls) == n  # no study run
    assert doc["choice"] == first["choice"] and doc["candidates"] == first["candidates"]
    rows = {r["name"]: r for r in doc["attribution"]}
    assert "not measured" in rows["all"]["not_measured"] and "balanced_accuracy" not in rows["all"]
    assert all(rows[k] == r for k, r in {r["name"]: r for r in first["attribution"]}.items() if k != "all")


def test_the_default_judge_is_the_checked_in_choice_and_that_choice_is_the_best_measured_candidate():
    """The default judge is the calibration file's physics as it replays: the chosen condition's overrides are in the
    choice, and the choice is what the declared rule picks among the file's measured candidates (re-derived)."""
    from replay.results.judge import DEFAULT_JUDGE
    from replay.study.verdict_conditions import AS_REPLAYED, condition_named

    doc = calibration_file.read_calibration(calibration_file.CALIBRATION_FILE)
    ch = doc["choice"]
    assert (DEFAULT_JUDGE.physics, DEFAULT_JUDGE.condition) == ("calibrated", AS_REPLAYED.name)
    assert ReplayConfig().physics == "calibrated" and ch["overrides"].get("hand_shape") == OWN_WORLD["hand_shape"]
    wanted = condition_named(ch["condition"]).overrides_for(ReplayConfig(physics="replay"), "lift")
    assert wanted.items() <= ch["overrides"].items()
    best = choose(doc["candidates"])
    assert best["name"] == ch["name"]
    assert best["balanced_accuracy"] == pytest.approx(ch["balanced_accuracy"], abs=1e-12)
