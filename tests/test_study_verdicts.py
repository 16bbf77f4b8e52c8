"""The verdicts side by side (``run_study.py --verdicts``, replay.study.verdicts): pairs parsed and refused,
each extra pair's config that of a study of its own, and on the mirror's real GRAB data: a study's extra
verdicts equal a separate single-protocol study's rollouts of the same recordings, its counts and study.csv
columns those of its rows, resume keeping them, the report setting them side by side."""

from __future__ import annotations

import csv
import json
import re

import pytest
from test_study import SHORT, TIMING

from replay.commands.run_study import build_parser, config_from_args
from replay.config import ReplayConfig
from replay.errors import UsageError
from replay.output.report import build_report
from replay.results.files import read_rollout
from replay.results.judge import DEFAULT_JUDGE
from replay.results.study_counts import Counts
from replay.sim import physics
from replay.study.end_table import as_record, end_lines, failure_lines, pair_lines
from replay.study.job import config_hash
from replay.study.runner import run_study
from replay.study.verdicts import parse_verdicts, verdict_config

OBJECTS = ["mug", "stapler"]
PAIRS = "lift,hug-oracle,hug-oracle@authored"
#: what differs between two runs of one rollout: time, and the paths of its files
VARYING = TIMING | {"poses", "inputs", "run_warnings"}
#: what a row holds as the study's own protocol and not as a pair beside it: the verdict and its cross-checks
OWN = VARYING | {"json", "verdict", "cross_checks"}

P = DEFAULT_JUDGE.physics  # the study's own physics: its pairs are named after it


def test_pairs_main_first_extras_once_and_bad_names_refused():
    v = parse_verdicts("hug-oracle@authored, lift ,hug-oracle@replay,hug-oracle@authored", ["lift"], "replay")
    assert [(p.name, p.main) for p in v] == [
        ("lift@replay", True),
        ("hug-oracle@authored", False),
        ("hug-oracle@replay", False),
    ]
    assert [p.name for p in parse_verdicts("lift", ["lift", "hug-oracle"], "authored")] == [
        "lift@authored",
        "hug-oracle@authored",
    ]  # a name without @: the study's physics; its protocols are main
    with pytest.raises(UsageError, match="did you mean 'hug-oracle'"):
        parse_verdicts("hug-orcale@authored", ["lift"], "replay")
    with pytest.raises(UsageError, match="unknown physics 'autored'.*did you mean 'authored'"):
        parse_verdicts("lift@autored", ["lift"], "replay")
    with pytest.raises(UsageError, match="judged on a lift"):
        parse_verdicts("recorded", ["lift"], "replay")


@pytest.mark.parametrize(
    "study_flags,other_flags,pair",
    [
        ([], [], "authored"),
        (["--physics", "authored"], [], "replay"),
        (
            ["--effort", "0.3", "--physics-set", "cone=elliptic"],
            ["--effort", "0.3", "--physics-set", "cone=elliptic"],
            "authored",
        ),
    ],
)
def test_a_pair_s_config_is_that_of_a_study_of_its_own(study_flags, other_flags, pair):
    """The extra pair's config hashes as the same command under ``--physics <pair>`` (the study's other
    flags kept): its rollouts are those a separate study would write."""
    base = ["--dataset", "grab"]
    study = config_from_args(build_parser().parse_args(base + study_flags))
    alone = config_from_args(build_parser().parse_args(base + other_flags + ["--physics", pair]))
    assert config_hash(verdict_config(study, pair)) == config_hash(alone)
    assert verdict_config(study, study.physics) is study



@pytest.mark.parametrize("study_physics", ["calibrated", "replay"])
@pytest.mark.parametrize("pair", ["calibrated", "replay", "authored"])
def test_a_pair_s_hand_is_the_one_its_own_study_resolves(study_physics, pair):
    """A study's hand shape resolved by its physics (the calibrated table's fitted hand, the dataset's zerohand
    otherwise) is resolved again under the pair's physics: the pair hashes as the study of its own; a user's shape
    is a departure and stays."""
    from replay.sim.hand_assets import resolve_hand_variant

    study = resolve_hand_variant(ReplayConfig(physics=study_physics), "grab")
    alone = resolve_hand_variant(physics.apply_physics(ReplayConfig(physics=study_physics), pair), "grab")
    assert config_hash(verdict_config(study, pair, "grab")) == config_hash(alone)
    mine = resolve_hand_variant(ReplayConfig(physics=study_physics, physics_overrides={"hand_shape": "myhand"}), "grab")
    assert physics.choice_value(verdict_config(mine, pair, "grab"), "hand_shape") == "myhand"

def _rollout(d, stem):
    rec = read_rollout(d / "study_rollouts" / f"{stem}.json")  # every field by name, the times left out

    def same(r):
        return {k: v for k, v in r.flat().items() if k not in VARYING | {"ablation"}}

    return same(rec), same(rec.ablation) if rec.ablation is not None else {}


@pytest.fixture(scope="module")
def studies(tmp_path_factory, mirror):
    """One study with the three pairs (``--samples 0``) and the single-protocol study of the hug-oracle as
    authored (``--protocol hug-oracle --physics authored``) of the same recordings."""
    d = tmp_path_factory.mktemp("verdicts")
    cfg = ReplayConfig(**SHORT)
    side = run_study(
        "grab",
        d / "side" / "study.json",
        cfg,
        objects=OBJECTS,
        workers=0,
        progress=False,
        data_dir=mirror,
        verdicts=PAIRS,
    )
    alone = {
        "authored": run_study(
            "grab",
            d / "authored" / "study.json",
            physics.apply_physics(cfg, "authored"),
            objects=OBJECTS,
            workers=0,
            progress=False,
            data_dir=mirror,
            protocols=["hug-oracle"],
        )
    }
    return d, cfg, side, alone


def test_extra_verdicts_equal_a_study_of_their_own(studies):
    d, _, side, alone = studies
    assert [v["name"] for v in side["verdicts"]] == [f"lift@{P}", f"hug-oracle@{P}", "hug-oracle@authored"]
    assert len({v["config_hash"] for v in side["verdicts"]}) == 2  # the pairs under replay share the study's config
    for phys in ("authored",):
        name = f"hug-oracle@{phys}"
        assert [v["config_hash"] for v in side["verdicts"] if v["name"] == name] == [alone[phys]["config_hash"]]
        for s in (f"{o}_lift" for o in OBJECTS):
            got, want = _rollout(d / "side", f"{s}.{name}"), _rollout(d / phys, f"{s}.hug-oracle")
            assert got == want, s  # every metric, its physics record, its ablation: the same rollout
        # the rows are those of the study of its own, but for the path of their rollout and the verdict: a pair's
        # run is a cross-check of the study's verdict, where alone it is the study's own verdict
        strip = lambda rows: [{k: v for k, v in r.items() if k not in OWN} for r in rows]  # noqa: E731
        assert strip(side["verdict_rollouts"][name]) == strip(alone[phys]["oracle_rollouts"])


def test_each_pair_counted_from_its_rows_and_a_csv_column_each(studies):
    d, _, side, alone = studies
    c = side["counts"]
    assert len(side["failed"]) == 0
    for name, rows in side["verdict_rollouts"].items():
        lifts = [r for r in rows if r["intent"] == "lift"]
        assert c[name]["by_intent"]["lift"]["rollouts"] == len(lifts) == len(OBJECTS)
        assert c[name]["lifted"] == sum(bool(r["lifted"]) for r in rows)
        assert c[name]["ablation_clean"] == sum(bool(r["ablation_clean"]) for r in rows)
    assert c["lift"]["lifted"] == sum(bool(r["lifted"]) for r in side["rollouts"])
    table = list(csv.DictReader((d / "side" / "study.csv").open()))
    assert [k for k in table[0] if k.startswith("lifted_")] == [
        f"lifted_hug-oracle@{P}",
        "lifted_hug-oracle@authored",
    ]
    for row in table:
        want = next(r["lifted"] for r in alone["authored"]["oracle_rollouts"] if r["sequence"] == row["sequence"])
        assert row["lifted_hug-oracle@authored"] == str(want)
        want = json.loads((d / "side" / "study_rollouts" / f"{row['sequence']}.hug-oracle@{P}.json").read_text())
        assert row[f"lifted_hug-oracle@{P}"] == str(want["lifted"])
    lines = pair_lines(as_record(side), Counts.from_dict(c))
    assert len(lines) == 2 and lines[1].startswith(
        f"cross-check hug-oracle@authored (one run each): lifted {c['hug-oracle@authored']['lifted']}/{len(OBJECTS)} "
        "lifts"
    )


def test_resume_keeps_every_pair(studies, mirror):
    d, cfg, side, _ = studies
    again = run_study(
        "grab",
        d / "side" / "study.json",
        cfg,
        objects=OBJECTS,
        workers=0,
        progress=False,
        data_dir=mirror,
        verdicts=PAIRS,
        resume=True,
    )
    assert again["counts"]["resumed"] == 3 * len(OBJECTS)  # nothing ran again
    assert again["verdict_rollouts"] == side["verdict_rollouts"]


def test_report_sets_the_pairs_beside_the_verdict_as_cross_checks(studies):
    """Each other pair is a cross-check of the recording's verdict (single runs here: the verdict is the lift's
    contact run), counted in the one table of cross-checks and said on each recording's page; never a verdict."""
    d, _, side, _ = studies
    build_report(d / "side" / "study.json", d / "side" / "report.html")
    page = (d / "side" / "report.html").read_text()
    table = re.search(r"<table id=cross-checks>(.*?)</table>", page, re.S).group(1)
    lift = {r["sequence"]: bool(r["lifted"]) for r in side["rollouts"]}
    for name, rows in side["verdict_rollouts"].items():
        alike = sum(bool(r["lifted"]) == lift[r["sequence"]] for r in rows)
        assert f"<td>{name}</td><td>{alike}</td><td>{len(rows) - alike}</td><td>0</td><td>{len(rows)}</td>" in table
    assert "pairs-absent" not in page and "pair-counts" not in page  # the three default pairs are all here
    for s in (f"{o}_lift" for o in OBJECTS):
        rec = (d / "side" / "report_files" / f"{s}.html").read_text()
        checks = re.search(r"<table id=recording-checks>(.*?)</table>", rec, re.S).group(1)
        for name, rows in side["verdict_rollouts"].items():
            r = next(r for r in rows if r["sequence"] == s)
            said = "agrees" if bool(r["lifted"]) == lift[s] else "disagrees"
            assert re.search(rf"<td>{re.escape(name)}</td><td>one run: [^<]*</td><td[^>]*>{said}</td>", checks)


def test_a_study_without_pairs_names_the_command_that_adds_them(studies, tmp_path):
    """A study of one protocol (the report reads it as its one main pair) says which pairs it lacks and how
    to add them."""
    d, _, side, _ = studies
    doc = json.loads((d / "side" / "study.json").read_text())
    for k in ("verdicts", "verdict_rollouts"):
        doc.pop(k)
    path = d / "side" / "study.nopairs.json"
    path.write_text(json.dumps(doc))
    build_report(path, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert "<table id=cross-checks>" in page
    assert (
        f"Not in this study: hug-oracle@{P}, hug-oracle@authored" in page
        and f"--verdicts lift@{P},hug-oracle@{P},hug-oracle@authored --resume" in page
    )


def test_extra_verdict_beside_a_sampled_study(studies, mirror, tmp_path):
    """``--samples 4``: the main verdict sampled per condition, the extra pair one rollout, the same as the
    study of its own (11-13 s on 2 cores at load 9: not slow)."""
    d, cfg, _, alone = studies
    side = run_study(
        "grab",
        tmp_path / "study.json",
        cfg,
        objects=OBJECTS,
        workers=0,
        progress=False,
        data_dir=mirror,
        verdicts="hug-oracle@authored",
        samples=4,
    )
    assert all(e["n"] == 4 for r in side["rollouts"] for e in r["p_lift"].values())
    for s in (f"{o}_lift" for o in OBJECTS):
        got, want = _rollout(tmp_path, f"{s}.hug-oracle@authored"), _rollout(d / "authored", f"{s}.hug-oracle")
        assert got == want and "p_lift" not in got  # a single rollout: the pair is not sampled
    c = side["counts"]["hug-oracle@authored"]
    assert c["lifted"] == sum(bool(r["lifted"]) for r in alone["authored"]["oracle_rollouts"])
    assert [v["name"] for v in side["verdicts"]] == [f"lift@{P}", "hug-oracle@authored"]


def test_ablation_only_keeps_the_pairs(studies, mirror, tmp_path):
    """``--ablation-only`` reruns the lift ablation and keeps the extra pairs as the study had them."""
    import shutil

    d, cfg, side, _ = studies
    shutil.copytree(d / "side", tmp_path / "s")
    again = run_study(
        "grab",
        tmp_path / "s" / "study.json",
        cfg,
        objects=OBJECTS[:1],
        workers=0,
        progress=False,
        data_dir=mirror,
        ablation_only=True,
    )
    assert again["verdicts"] == side["verdicts"] and again["verdict_rollouts"] == side["verdict_rollouts"]
    kept = lambda c: {k: v for k, v in c.items() if k != "wall_s"}  # noqa: E731  (the resumed run's time)
    assert kept(again["counts"]["hug-oracle@authored"]) == kept(side["counts"]["hug-oracle@authored"])


@pytest.mark.slow  # 30 lifts x 3 pairs, single rollouts: 150 s on 2 workers at load 7.6 (65 s CPU)
def test_the_three_pairs_on_grab_s_lifts_are_the_studies_of_their_own(tmp_path, mirror):
    """One study of GRAB's 30 lifts with the three pairs judges each recording as the three studies of their
    own did (docs/results/grab-lifts.json: the lift protocol; grab-oracle.json: the hug-oracle;
    grab-oracle-authored.json: the hug-oracle as authored), recording by recording."""
    from pathlib import Path

    res = Path(__file__).resolve().parents[1] / "docs" / "results"
    files = {
        f"lift@{P}": ("grab-lifts", "rollouts"),
        f"hug-oracle@{P}": ("grab-oracle", "oracle_rollouts"),
        "hug-oracle@authored": ("grab-oracle-authored", "oracle_rollouts"),
    }
    want = {
        n: {
            r["sequence"]: r["lifted"]
            for r in json.loads((res / f"{f}.json").read_text())[k]
            if r["sequence"].endswith("_lift")
        }
        for n, (f, k) in files.items()
    }
    lifts = sorted(want[f"lift@{P}"])
    assert len(lifts) == 30
    side = run_study(
        "grab",
        tmp_path / "study.json",
        ReplayConfig(),
        objects=lifts,
        workers=2,
        progress=False,
        data_dir=mirror,
        verdicts=PAIRS,
    )
    got = {f"lift@{P}": side["rollouts"], **side["verdict_rollouts"]}
    for name, rows in got.items():
        assert {r["sequence"]: r["lifted"] for r in rows} == want[name], name
        c = side["counts"][name if name != f"lift@{P}" else "lift"]["by_intent"]["lift"]
        assert c["lifted"] == sum(want[name].values()) and c["rollouts"] == 30


def test_console_line_keeps_the_lifts_and_the_other_intents_apart():
    by_intent = {"lift": {"rollouts": 2, "lifted": 1}, "pass": {"rollouts": 3, "lifted": 2}}
    study = {
        "verdicts": [p.to_dict() for p in parse_verdicts("hug-oracle@authored", ["lift"], "replay")],
        "counts": {
            "lift": {"by_intent": by_intent, "ablation_clean": 5, "ablation_run": 5},
            "hug-oracle@authored": {
                "by_intent": {"unknown": {"rollouts": 1, "lifted": 1}},
                "ablation_clean": 0,
                "ablation_run": 1,
            },
        },
    }
    rec = as_record(study)
    assert pair_lines(rec, Counts.from_dict(rec.counts)) == [
        "cross-check hug-oracle@authored (one run each): 1 recording with no intent named: lifted 1; contact "
        "ablation clean 0/1",
    ]  # the study's own pair is the verdict, not a line of its own
    rec = as_record({"counts": study["counts"]})
    assert pair_lines(rec, Counts.from_dict(rec.counts)) == []  # no --verdicts: no line


def test_a_refused_recording_counts_once_however_many_pairs_judge_it(mirror, tmp_path, capsys):
    """GRAB's offhand take (the other hand carries the object: refused as bad input) in a study of the three
    pairs is refused under each, listed under each key, and counted once: one refused recording, one
    ``other_hand`` cause; ``--ablation-only`` of the other recording keeps all three refusals (newcomer check:
    ``make study`` said 6 refused, and 2 after ``--ablation-only``)."""
    import shutil

    data = tmp_path / "data" / "grab"
    (data / "recordings").mkdir(parents=True)
    shutil.copyfile(mirror / "grab" / "recordings" / "cubesmall_lift.pkl", data / "recordings" / "cubesmall_lift.pkl")
    shutil.copyfile(
        mirror / "grab_intents" / "recordings" / "cubesmall_offhand_1.pkl",
        data / "recordings" / "cubesmall_offhand_1.pkl",
    )
    for name in ("cubesmall", "table"):
        shutil.copytree(mirror / "grab" / "objects" / name, data / "objects" / name)
    shutil.copyfile(mirror / "grab" / "objects" / "common.xml", data / "objects" / "common.xml")
    cfg, out = ReplayConfig(**SHORT), tmp_path / "s" / "study.json"
    st = run_study("grab", out, cfg, workers=0, progress=False, data_dir=tmp_path / "data", verdicts=PAIRS)
    keys = [
        "cubesmall_offhand_1",
        "cubesmall_offhand_1 [hug-oracle@authored]",
        f"cubesmall_offhand_1 [hug-oracle@{P}]",
    ]
    for study in (
        st,
        run_study(
            "grab",
            out,
            cfg,
            objects=["cubesmall_lift"],
            workers=0,
            progress=True,
            data_dir=tmp_path / "data",
            ablation_only=True,
        ),
    ):
        c = study["counts"]
        assert sorted(study["failed"]) == keys and sorted(c["refused_keys"]) == keys
        assert c["refused"] == 1 and c["failed_inputs"] == 1 and c["causes"]["refused"] == {"other_hand": 1}
        text = "\n".join(end_lines(study))
        if c.get("ablation_only_keys") is None:
            assert "refused: 1 recording(s) (bad input" in text and "failed:" not in text
        else:  # --ablation-only: its own row alone; the refused one is said by failure_lines below
            assert "cubesmall_lift" in text and "cubesmall_offhand_1" not in text and "failed:" not in text
        # listed once, its path relative to the data folder
        (line,) = failure_lines(study)
        assert line.startswith("refused: cubesmall_offhand_1: ") and str(tmp_path) not in line, line
    said = capsys.readouterr()
    said = said.out + said.err  # the --ablation-only run's intro counts recordings, not jobs
    assert "the study keeps the other 1 as they are" in said
    assert "kept: 1 recording(s) the study could not replay before" in said


def test_a_result_key_maps_back_to_its_recording_whatever_the_name_holds():
    """A key's text (the JSON's form) reads back as the same key among the study's names, a name holding `` [`` or
    ``]`` too; failures count once per recording."""
    from replay.protocol.protocols.base import ResultKey
    from replay.study.job import failed_recordings

    names = {"mug_lift", "mug [x]", "odd [1] [2]"}
    for s in names:
        for protocol, phys in (("lift", None), ("hug-oracle", None), ("hug-oracle", "authored"), ("lift", "authored")):
            key = ResultKey(s, protocol, phys)
            assert ResultKey.parse(key.text, names) == key
    assert ResultKey("mug_lift", "lift").text == "mug_lift" and ResultKey("a/b", "lift").stem == "a__b"
    assert ResultKey("mug_lift", "hug-oracle", "authored").stem == "mug_lift.hug-oracle@authored"
    assert ResultKey.parse("other [hug-oracle]", names).sequence == "other [hug-oracle]"  # not a name: the text
    failed = {
        ResultKey("mug [x]", "lift"): "a",
        ResultKey("mug [x]", "hug-oracle"): "b",
        ResultKey("mug_lift", "hug-oracle"): "c",
    }
    assert failed_recordings(failed) == {"mug [x]": "a", "mug_lift": "c"}
