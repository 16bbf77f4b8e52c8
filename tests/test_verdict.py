"""One verdict per recording (issue #56): :func:`replay.protocol.verdict.verdict_of` from a record's sampled p_lift,
its per-sample lift verdicts and diagnoses; the cross-checks beside it; the AUC's interval over recordings; where
the API finds data. The verdict on real sampled studies: ``tests/test_study_verdicts.py``
(``test_extra_verdict_beside_a_sampled_study``)."""

from __future__ import annotations

import json
from itertools import combinations_with_replacement
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest, mannwhitneyu

from replay.errors import DataError
from replay.protocol.verdict import interval_text, tile_text, verdict_of
from replay.results.judge import DEFAULT_JUDGE
from replay.results.records import RolloutRecord
from replay.results.study_rows import StudyRow
from replay.results.verdict_record import Word
from replay.study.cross_checks import recording_checks
from replay.study.discrimination import auc, auc_interval

ROOT = Path(__file__).resolve().parents[1]
J = DEFAULT_JUDGE.condition  # the judged condition
O = next(c for c in ("as_replayed", "wrist_uncompensated") if c != J)  # a cross-check



def _tile(meta: dict, title: str):
    """A montage tile as the overlay reads it: its title and its study row (``Clip.row``)."""
    from types import SimpleNamespace

    from replay.results.study_rows import StudyRow

    return SimpleNamespace(meta=meta, title=title, row=StudyRow.from_dict(meta))

def _entry(k: int, n: int, driver=None) -> dict:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")  # the textbook interval
    return {"p": k / n, "lo": ci.low, "hi": ci.high, "n": n, "k": k, "class": None, "driver": driver}


def _record(lifted: list[int], diagnoses: list, other: list[int] | None = None, driver=None) -> RolloutRecord:
    """A record sampled under the judged condition J (and the other, O, where ``other`` is given)."""
    n = len(lifted)
    rec = RolloutRecord(outcome="not_lifted", lifted=False, diagnosis={"class": "never_gripped", "figure": {}})
    rec.sampled.p_lift = {J: _entry(sum(lifted), n, driver)}
    rec.sampled.p_lift_samples = {"lifted": {f"{J}/real": lifted}, "diagnoses": {f"{J}/real": diagnoses}}
    if other is not None:
        rec.sampled.p_lift[O] = _entry(sum(other), len(other))
    return rec


def test_fails_says_the_diagnosis_most_failing_samples_share():
    diag = ["never_gripped"] * 27 + ["no_contact"] * 4 + [None]
    v = verdict_of(_record([0] * 31 + [1], diag))
    assert v.word is Word.FAILS and v.reason == "never gripped, 27 of 32 samples" and v.cause == "never_gripped"
    assert (v.k, v.n, v.condition, v.sampled, v.cause_samples) == (1, 32, J, True, 27)
    assert v.hi <= 0.5 and v.p == pytest.approx(1 / 32)
    assert interval_text(v) == f"0.03 [{v.lo:.2f}, {v.hi:.2f}]"
    assert tile_text(v) == "fails: never gripped 27/32"


def test_uncertain_says_what_it_depends_on_and_which_way():
    drv = {"variable": "friction", "effect": 0.5, "low": 0.25, "high": 0.75}
    v = verdict_of(_record([1, 0] * 8, [None, "slid_out"] * 8, driver=drv))
    assert v.word is Word.UNCERTAIN and v.lo < 0.5 < v.hi
    assert v.reason == "depends on friction: lifted 75% of samples where it is higher, 25% where lower"
    drv = {"variable": "object_mass_scale", "effect": -0.5, "low": 0.75, "high": 0.25}
    v = verdict_of(_record([1, 0] * 8, [None, "too_heavy"] * 8, driver=drv))
    assert v.reason.startswith("depends on object mass scale: lifted 75% of samples where it is lower")


def test_holds_says_whether_the_lifted_samples_held_through_the_shake():
    v = verdict_of(_record([1] * 32, [None] * 32))
    assert v.word is Word.HOLDS and v.reason == "lifted in 32 of 32 samples, each held through the shake and let go"
    v = verdict_of(_record([1] * 30 + [0, 0], [None] * 10 + ["shaken_loose"] * 20 + ["no_contact"] * 2))
    assert v.word is Word.HOLDS and v.cause == "shaken_loose" and v.reason.endswith("20 of them shaken loose")
    # the other condition is a cross-check, never the verdict
    v = verdict_of(_record([1] * 32, [None] * 32, other=[0] * 32))
    assert v.word is Word.HOLDS and v.condition == J


def test_a_hug_oracle_verdict_says_only_what_its_protocol_tested():
    """The hug-oracle lifts and holds, no shake, no release: its samples that held are said as lifted, also where its
    contact run did not lift (the sampled verdict is read from the samples alone), on the recording page too."""
    from replay.output.verdict_section import samples_html

    rec = _record([1] * 30 + [0, 0], [None] * 30 + ["no_contact"] * 2)  # its contact run: not lifted
    rec.protocol = "hug-oracle"
    v = verdict_of(rec)
    assert v.word is Word.HOLDS and v.reason == "lifted in 30 of 32 samples" and tile_text(v) == "holds: lifted 30/32"
    page = samples_html(rec, None)
    assert "shake" not in v.reason + page and "<li>lifted: 30 of 32</li>" in page
    rec.protocol = "lift"  # the same samples under the lift protocol held through its shake
    assert verdict_of(rec).reason == "lifted in 30 of 32 samples, each held through the shake and let go"
    assert "<li>lifted, held through the shake and let go: 30 of 32</li>" in samples_html(rec, None)
    # the report's contact-run table has a shake column only where the study's protocol shakes
    from replay.output.report import _summary_html
    from replay.results.records import StudyRecord
    from replay.results.study_counts import Counts

    lifts = {"lift": {"rollouts": 2, "lifted": 1, "shake_held": 1, "not_lifted": 1, "unstable": 0}}
    for protocol, shown in (("hug-oracle", False), ("lift", True)):
        study = StudyRecord(protocols=[protocol], counts={"by_intent": lifts})
        page = _summary_html(study, Counts.from_dict(study.counts), {})
        assert ("<th>held through the shake</th>" in page) is shown and "<td>lifts</td><td>2</td><td>1</td>" in page


def test_a_study_of_single_rollouts_says_its_verdict_is_one_run():
    rec = RolloutRecord(outcome="not_lifted", lifted=False, diagnosis={"class": "no_contact", "figure": {}})
    v = verdict_of(rec)
    assert v.word is Word.FAILS and not v.sampled and v.n == 1 and v.reason == "one run, not sampled: no contact"
    assert interval_text(v).startswith("0.00 [0.00, ")
    rec = RolloutRecord(outcome="lifted", lifted=True, diagnosis=None)
    rec.lift.shake_ran = True
    v = verdict_of(rec)
    assert v.word is Word.HOLDS and tile_text(v) == "holds (one run): held through the shake and let go"
    # the hug-oracle neither shakes nor releases: a lift that held is said as lifted, nothing more
    v = verdict_of(RolloutRecord(protocol="hug-oracle", outcome="lifted", lifted=True, diagnosis=None))
    assert (
        v.word is Word.HOLDS
        and v.reason == "one run, not sampled: lifted"
        and tile_text(v) == "holds (one run): lifted"
    )


def test_an_older_study_without_the_samples_diagnoses_still_has_a_verdict():
    rec = _record([0] * 8, ["never_gripped"] * 8)
    rec.sampled.p_lift_samples = {"lifted": {f"{J}/real": [0] * 8}}
    v = verdict_of(rec)
    assert v.word is Word.FAILS and v.cause is None and "diagnoses not kept" in v.reason


def test_cross_checks_agree_disagree_or_no_call():
    rec = _record([1] * 32, [None] * 32, other=[1] * 14 + [0] * 18)  # the other condition: uncertain
    row = StudyRow.from_dict(
        {
            "sequence": "mug_lift",
            "outcome": "not_lifted",
            "lifted": False,
            "diagnosis": "slid_out",
            "ablation_no_rise": True,
            "p_lift": rec.sampled.p_lift,
            "verdict": verdict_of(rec).to_dict(),
        }
    )
    pair = {
        "hug-oracle@authored": {
            "mug_lift": StudyRow.from_dict({"sequence": "mug_lift", "outcome": "lifted", "lifted": True})
        }
    }
    got = {c.check: (c.says, c.agrees) for c in recording_checks(row, pair)}
    assert got == {
        "contact run": ("not lifted (slid out)", False),  # it lifted in 32 of 32 samples, not in its one run
        f"condition {O}": ("uncertain, p_lift 0.44", None),
        "hug-oracle@authored": ("one run: lifted", True),
        "contact ablation": ("stayed down", True),
    }


def test_auc_interval_by_hand():
    """Two recordings (real, corrupted p_lift) (1, 0.5) and (0, 0.5): a resample is either recording twice or one
    of each, with probabilities 1/4, 1/4, 1/2; the AUCs of those (hand: 1, 0, 0.5) are the whole bootstrap
    distribution, so its 2.5th and 97.5th percentiles are 0 and 1. Three recordings with every real p_lift above
    every corrupted one: AUC 1 in every resample."""
    real, bad = [1.0, 0.0], [0.5, 0.5]
    by_hand = {}
    for pick in combinations_with_replacement(range(2), 2):
        by_hand[pick] = auc([real[i] for i in pick], [bad[i] for i in pick])
    assert by_hand == {(0, 0): 1.0, (1, 1): 0.0, (0, 1): 0.5} and auc(real, bad) == 0.5
    assert auc_interval(real, bad) == (0.0, 1.0)
    assert auc_interval([0.9, 0.8, 0.7], [0.1, 0.2, 0.3]) == (1.0, 1.0)
    assert auc_interval([], []) is None and auc_interval([0.5], [0.1, 0.2]) is None
    # seeded: the same interval every time
    rng = np.random.default_rng(7)
    a, b = rng.random(30), rng.random(30) * 0.8
    assert auc_interval(a, b) == auc_interval(a, b)


def test_auc_interval_of_the_grab_lifts():
    """The README's first table's study (docs/results/grab-trust.json, GRAB's 30 lifts): each AUC's interval is the
    bootstrap of the recordings' own p_lift (kept per recording in the summary) and holds the AUC; the AUC itself is
    re-derived from those p_lift (Mann-Whitney, scipy)."""
    doc = json.loads((ROOT / "docs" / "results" / "grab-trust.json").read_text())
    if "p_lift_corrupted" not in doc:
        pytest.skip(
            "docs/results/grab-trust.json is from before issue 56 (no p_lift per corrupted recording): "
            "`make docs-results` remakes it"
        )
    real = doc["p_lift"]["lift"]
    corr = doc["p_lift_corrupted"]["lift"]
    for d in doc["discrimination"]:
        seqs = [s for s in real if d["condition"] in real[s] and d["condition"] in corr[s][d["corruption"]]]
        a = [real[s][d["condition"]]["p"] for s in seqs]
        b = [corr[s][d["corruption"]][d["condition"]]["p"] for s in seqs]
        assert len(seqs) == d["n_recordings"] == 30 and auc(a, b) == pytest.approx(d["auc"])
        assert (d["auc_lo"], d["auc_hi"]) == pytest.approx(auc_interval(a, b))
        assert d["auc_lo"] <= d["auc"] <= d["auc_hi"]
        u = mannwhitneyu(a, b).statistic  # P(real > corrupted) + P(tie) / 2, over every pair of recordings
        assert d["auc"] == pytest.approx(u / (len(a) * len(b)))


def test_the_api_finds_data_as_the_commands_do(tmp_path, monkeypatch, mirror):
    """--data (``data_dir``), else $REPLAY_DATA, else ./data in the working directory, else $REPLAY_MIRROR; with none
    of them, one error saying where it looked."""
    from replay.data import list_sequences

    staged = tmp_path / "staged"
    (staged / "grab" / "recordings").mkdir(parents=True)
    want = sorted(p.stem for p in (mirror / "grab" / "recordings").glob("*.pkl"))
    for name in want:  # each file linked (a linked folder is not looked into: a staged copy holds files)
        (staged / "grab" / "recordings" / f"{name}.pkl").symlink_to(mirror / "grab" / "recordings" / f"{name}.pkl")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("REPLAY_MIRROR")
    monkeypatch.delenv("REPLAY_DATA", raising=False)
    assert list_sequences("grab", staged) == want  # data_dir=, the commands' --data
    monkeypatch.setenv("REPLAY_DATA", str(staged))
    assert list_sequences("grab") == want
    monkeypatch.delenv("REPLAY_DATA")
    (elsewhere / "data").symlink_to(staged)
    assert list_sequences("grab") == want  # ./data of the working directory
    (elsewhere / "data").unlink()
    with pytest.raises(DataError, match=r"looked in .*elsewhere/data/grab .*\$REPLAY_DATA.* \$REPLAY_MIRROR \(unset\)"):
        list_sequences("grab")
    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    assert list_sequences("grab") == want


def test_the_montage_shows_each_verdict_and_its_reason_on_the_tile():
    """Thirteen recordings (fails 10, holds 2, uncertain 1) in 4 tiles: one per verdict, the spare one to the largest
    (fails: 10 - 1 of the 10 spare recordings); each tile's verdict line is tile_text of the row's verdict."""

    from replay.output.render.clip import study_rollout
    from replay.output.render.montage_pick import pick_tiles
    from replay.output.render.overlay import verdict_line
    from replay.output.render.style import VERDICT_RGB

    def row(i, rec):
        return i, {
            "sequence": f"o{i}_lift",
            "object": f"o{i}",
            "outcome": "not_lifted",
            "verdict": verdict_of(rec).to_dict(),
        }

    fails = _record([0] * 32, ["no_contact"] * 32)
    holds = _record([1] * 32, [None] * 32)
    unsure = _record([1, 0] * 8, [None, "slid_out"] * 8)
    rows = [row(i, fails) for i in range(10)] + [row(10, holds), row(11, unsure), row(12, holds)]
    chosen, rule = pick_tiles([(i, study_rollout(r, ".")) for i, r in rows], 4)
    words = [e.row.verdict.word.value for _, e in chosen]
    assert words == ["holds", "uncertain", "fails", "fails"] and [i for i, _ in chosen] == [10, 11, 0, 1]
    assert rule.startswith("4 of 13 recordings: one tile per verdict") and "fails 2 of 10" in rule
    tile = _tile(dict(rows)[chosen[2][0]], title="o0")
    assert verdict_line(tile) == ("fails: no contact 32/32", VERDICT_RGB[Word.FAILS])
    assert verdict_line(_tile(dict(rows)[chosen[2][0]], title="o0 (contact ablation)")) is None
    assert verdict_line(_tile({"sequence": "x"}, title="x")) is None  # an older study: no line


def test_a_tile_says_when_its_video_the_contact_run_disagrees_with_the_verdict():
    """On the 30 GRAB lifts sampled 32 times (docs/results/grab-p-lift.json: each recording's p_lift per condition and
    its one contact run): a tile whose verdict holds over a contact run that was not lifted (eyeglasses, flashlight,
    mouse under wrist_uncompensated) or fails over one that lifted (mug, elephant, waterbottle under as_replayed, each
    shaken loose) says what its video shows; an agreeing or uncertain one says nothing more."""

    from replay.output.render.overlay import head_lines, video_line
    from replay.output.render.style import OUTCOME_RGB
    from replay.protocol.verdict import WORD_OF_CLASS
    from replay.results.verdict_record import Verdict

    doc = json.loads((ROOT / "docs" / "results" / "grab-p-lift.json").read_text())
    said = {}
    for r in doc["rollouts"]:
        for cond, e in doc["p_lift"]["lift"][r["sequence"]].items():
            v = Verdict(WORD_OF_CLASS[e["class"]], "-", e["p"], e["lo"], e["hi"], e["n"], e["k"], cond, True)
            clip = _tile(dict(r, verdict=v.to_dict()), title=r["object"])
            line = video_line(clip)
            if line is not None:
                said[(r["object"], cond)] = line
                assert head_lines(clip)[1] == line  # under the verdict, a row of its own
    fell, rose = "video: the contact run, not lifted", "video: the contact run, lifted, then shaken loose"
    want = {
        (o, "wrist_uncompensated"): (fell, OUTCOME_RGB["not_lifted"]) for o in ("eyeglasses", "flashlight", "mouse")
    }
    want |= {(o, c): (rose, OUTCOME_RGB["not_lifted"]) for o in ("elephant", "mug", "waterbottle") for c in (J, O)}
    want[("stamp", "wrist_uncompensated")] = (rose, OUTCOME_RGB["not_lifted"])  # stamp under as_replayed: uncertain
    assert said == want
    # one run (--samples 0) is its own video; an older study's row has no verdict line; the ablation's tile neither
    duck = next(r for r in doc["rollouts"] if r["object"] == "duck")  # not lifted
    one = Verdict(Word.HOLDS, "-", 1.0, 0.0, 1.0, 1, 1, None, False)
    assert video_line(_tile(dict(duck, verdict=one.to_dict()), title="duck")) is None
    assert video_line(_tile(duck, title="duck")) is None
    holds = Verdict(Word.HOLDS, "-", 1.0, 0.9, 1.0, 32, 32, J, True).to_dict()
    assert video_line(_tile(dict(duck, verdict=holds), title="duck")) == (
        fell,
        OUTCOME_RGB["not_lifted"],
    )
    assert video_line(_tile(dict(duck, verdict=holds), title="duck (contact ablation)")) is None


def test_an_auc_over_few_recordings_says_it_means_little():
    from replay.results.verdict_record import Discrimination
    from replay.study.discrimination import auc_text

    base = {"protocol": "lift", "condition": "as_replayed", "corruption": "wrist_offset_2cm"}
    one = Discrimination.from_dict({**base, "auc": 1.0, "auc_lo": 1.0, "auc_hi": 1.0, "n_recordings": 1})
    assert auc_text(one) == "AUC 1.00 [1.00, 1.00] over 1 recording (fewer than 10 recordings: it means little)"
    ten = Discrimination.from_dict({**base, "auc": 0.64, "auc_lo": 0.5, "auc_hi": 0.78, "n_recordings": 30})
    assert auc_text(ten) == "AUC 0.64 [0.50, 0.78] over 30 recordings"


def test_the_readme_verdicts_of_a_study_before_issue_56():
    """docs/results/grab-trust.json without its verdict counts, as a study before issue 56: no verdict counts kept, so the README's first table reads each
    recording's verdict from its p_lift under the judged condition, agreeing with the classes the study counted (counts.p_lift:
    robust lift / uncertain / robust failure), and says that the reasons were not kept."""
    from replay.output.p_lift_table import verdict_markdown

    doc = json.loads((ROOT / "docs" / "results" / "grab-trust.json").read_text())
    doc["counts"].pop("verdicts", None)  # as a study before issue 56 kept it
    doc.pop("judge", None)
    got = doc["counts"]["p_lift"][J]
    per = [e[J]["class"] for e in doc["p_lift"]["lift"].values()]
    assert {k: per.count(k) for k in got} == got  # the summary's rows are the counts' recordings
    text = verdict_markdown(doc)
    n = sum(got.values())
    assert f"| verdict | {n} lifts | why |" in text
    for word, cls in (("holds", "robust_lift"), ("uncertain", "uncertain"), ("fails", "robust_failure")):
        assert f"| **{word}** | {got.get(cls, 0)} |" in text
    assert (
        "a study before issue 56" in text
        and f"read under condition {J}, {doc['sampling']['samples']} samples each" in text
    )
