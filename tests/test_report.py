"""The report page: built from a real (short) study, loaded in headless Chromium.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it). Without it the browser
tests skip here, and fail in CI (``CI=true``), where the install must have provided it.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from test_study import SHORT

from replay.config import ReplayConfig
from replay.output.report import build_report
from replay.output.report_table import COLUMNS
from replay.results.judge import DEFAULT_JUDGE
from replay.results.records import Phase
from replay.study.runner import run_study

pytestmark = pytest.mark.needs_data

OBJECTS = ["cubesmall", "mug"]
PAIRS = "lift,hug-oracle@authored"  # the verdicts side by side (replay.study.verdicts): one extra pair


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is not installed (apt-get install chromium; .ci/run does it)")
        pytest.skip("chromium is not installed (apt-get install chromium); CI runs this test")
    return exe


def _browser(exe: str, url: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--allow-file-access-from-files",
        "--virtual-time-budget=5000",
        *args,
        url,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report(tmp_path_factory, mirror):
    d = tmp_path_factory.mktemp("report")
    study = run_study(
        "grab",
        d / "study.json",
        ReplayConfig(**SHORT),
        objects=OBJECTS,
        workers=0,
        progress=False,
        data_dir=mirror,
        verdicts=PAIRS,
    )
    n = build_report(d / "study.json", d / "report.html")
    return d, study, n


def test_report_files_and_csv(report):
    d, study, n = report
    assert n == {"rows": 2, "plots": 2, "clips": 0, "montage": False}
    assert sorted(p.name for p in (d / "report_files").iterdir()) == [
        "cubesmall_lift.html",
        "cubesmall_lift.png",
        "mug_lift.html",
        "mug_lift.png",
    ]
    rows = list(csv.DictReader((d / "study.csv").open()))
    assert [r["sequence"] for r in rows] == ["cubesmall_lift", "mug_lift"]
    for r, s in zip(rows, study["rollouts"]):
        # rise re-derived from the saved poses: object z at the end of the hold minus at lift start
        with np.load(d / f"study_rollouts/{r['sequence']}.npz") as z:
            k = list(z["body_names"]).index("object")
            ph, zz = z["phase"], z["body_pos"][:, k, 2]
            lift0 = int(np.flatnonzero(ph == Phase.LIFT)[0]) - 1
            end_hold = int(np.flatnonzero(ph == Phase.HOLD)[-1])
            assert float(r["rise"]) == pytest.approx(zz[end_hold] - zz[lift0], abs=1e-6)
            assert float(r["height_end_hold"]) == pytest.approx(zz[end_hold], abs=1e-6)
        assert r["outcome"] == s["outcome"]


def test_contact_agreement_summary_counts_recordings_with_both(report):
    """The summary's contact agreement: medians over the recordings with recorded and simulated contact
    only, re-counted from the rows, and the page says how many of all and why the others were left out."""
    d, study, _ = report
    rows = study["rollouts"]
    both = [
        r for r in rows if r["contact_agreement_precision"] is not None and r["contact_agreement_recall"] is not None
    ]
    c = study["counts"]
    assert c["contact_agreement_n"] == len(both) and c["contact_agreement_of"] == len(rows) == 2
    assert c["contact_agreement_n"] + c["contact_agreement_no_simulated"] + c["contact_agreement_no_recorded"] == 2
    if both:
        assert c["median_contact_agreement_recall"] == pytest.approx(
            np.median([r["contact_agreement_recall"] for r in both])
        )
    page = (d / "report.html").read_text()
    assert f"over the {len(both)} of 2 recordings with recorded and simulated contact" in page
    assert f"{c['contact_agreement_no_simulated']} with no bone carrying force" in page


def test_page_renders_in_chromium(report):
    exe = _chromium()
    d, study, _ = report
    url = (d / "report.html").as_uri()
    rise_col = [k for _, k, _, _ in COLUMNS].index("rise")
    res = _browser(exe, f"{url}#sort={rise_col}:desc", "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    dom = res.stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    # the table sorted by rise, every row shown; no plot on the main page (each is on its recording's page)
    assert f'data-sorted="{rise_col}:desc"' in body and 'data-shown="2"' in body, body
    rows = re.findall(r"<tr><td[^>]*><a href=\"report_files/([^\"]+)\.html\">", dom)
    by_rise = sorted(study["rollouts"], key=lambda r: -r["rise"])
    assert rows == [r["sequence"] for r in by_rise]
    assert dom.count("<img") == 0 and '"physics_overrides"' in dom and '"newton": "1.8.0"' in dom
    # a recording's page: its plot loaded (the page counts images with pixels once loaded)
    res = _browser(exe, (d / "report_files" / "mug_lift.html").as_uri(), "--dump-dom")
    assert res.returncode == 0 and "<img" in res.stdout and "back to the study" in res.stdout, res.stderr[-2000:]
    # the cross-checks, one table: the hug-oracle as authored set beside each recording's verdict (single runs
    # here: the verdict is the lift's contact run), agreeing where both lifted or neither did
    pair = {r["sequence"]: r["lifted"] for r in study["verdict_rollouts"]["hug-oracle@authored"]}
    alike = sum(bool(r["lifted"]) == bool(pair[r["sequence"]]) for r in study["rollouts"])
    assert re.search(rf"<td>hug-oracle@authored</td><td>{alike}</td><td>{2 - alike}</td><td>0</td><td>2</td>", dom)
    assert (
        f"Not in this study: hug-oracle@{DEFAULT_JUDGE.physics}" in dom
        and f"--verdicts lift@{DEFAULT_JUDGE.physics},hug-oracle@authored,hug-oracle@{DEFAULT_JUDGE.physics}" in dom
    )
    # a recording's page: led by its verdict, each check's word beside it
    head = re.search(r"<p id=\"?verdict\"?[^>]*>(.*?)</p>", res.stdout, re.S).group(1)
    mug = next(r for r in study["rollouts"] if r["sequence"] == "mug_lift")
    assert ("holds (one run)" if mug["lifted"] else "fails (one run)") in head, head
    checks = re.search(r"<table id=\"?recording-checks\"?>(.*?)</table>", res.stdout, re.S).group(1)
    said = "one run: lifted" if pair["mug_lift"] else "one run: not lifted"
    assert re.search(rf"<td>hug-oracle@authored</td><td>{said}[^<]*</td>", checks), checks


def test_screenshot(report, tmp_path):
    exe = _chromium()
    d, study, _ = report
    shot = tmp_path / "report.png"
    res = _browser(
        exe, (d / "report_files" / "mug_lift.html").as_uri(), f"--screenshot={shot}", "--window-size=1280,1600"
    )
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    import matplotlib.image as mpimg

    img = (mpimg.imread(shot)[..., :3] * 255).round().astype(int)
    assert img.shape[:2] == (1600, 1280)
    # the verdict in its colour (holds #2e9e4f: one run here, so where it lifted) and the plot's phase bands
    n_lifted = sum(r["outcome"] == "lifted" for r in study["rollouts"] if r["sequence"] == "mug_lift")
    green = np.all(np.abs(img - [0x2E, 0x9E, 0x4F]) <= 8, axis=-1).sum()
    assert (green > 20) == (n_lifted > 0), green
    band = np.all(np.abs(img - [0xDD, 0xE8, 0xF6]) <= 2, axis=-1).sum()  # approach band
    assert band > 5000, band
    shutil.copy(shot, d / "report_screenshot.png")


def test_montage_copied_beside_the_page_and_tiles_left_out_named(report, tmp_path):
    """The montage (rendered elsewhere, as make study's renders/) is copied beside the page, embedded
    at its own width, and the recordings without a tile are named; the page's links survive
    moving its folder."""
    d, study, _ = report
    renders = tmp_path / "renders"
    renders.mkdir()
    montage = renders / "montage.mp4"
    montage.write_bytes(b"\x00\x00\x00\x18ftypmp42")  # any bytes: the page only links it
    (renders / "montage.mp4.json").write_text(json.dumps({"rollouts": ["cubesmall_lift"], "size": [288, 216]}))
    page_dir = tmp_path / "site"
    page_dir.mkdir()
    shutil.copytree(d, page_dir / "grab")
    n = build_report(page_dir / "grab" / "study.json", page_dir / "grab" / "report.html", montage=montage)
    assert n["montage"] is True and n["clips"] == 0  # the montage is not a per-recording clip
    html_text = (page_dir / "grab" / "report.html").read_text()
    assert "src='report_files/montage.mp4'" in html_text and " width=288 " in html_text
    assert "no tile for 1 recording(s): mug_lift" in html_text
    assert "href='study.csv'" in html_text and "../" not in re.sub(r"<pre.*?</pre>", "", html_text, flags=re.S)
    moved = tmp_path / "moved"
    shutil.move(page_dir / "grab", moved)
    for link in re.findall(r"(?:src|href)='([^'#]+)'", (moved / "report.html").read_text()):
        assert (moved / link).is_file(), link
    # the lifts and the other intents apart (here lifts only)
    assert "<table id=by-intent>" in html_text and "<td>lifts</td>" in html_text


def test_p_lift_study_loads_and_its_filter_works_in_chromium(report, tmp_path):
    """The real study given the sampled verdict's fields (:mod:`p_lift_fixture`'s entries, one made-up lifted
    count per recording and condition): its page loads, the filter on a condition's class shows exactly
    the rows of that class, and a recording's chart is drawn (its class colour on screen)."""
    from p_lift_fixture import CLASS_WORDS, CONDITIONS, entry

    from replay.output.p_lift_section import WORD_CSS
    from replay.protocol.verdict import WORD_OF_CLASS

    exe = _chromium()
    d, study, _ = report
    site = tmp_path / "grab"
    shutil.copytree(d, site)
    doc = json.loads((site / "study.json").read_text())
    made = {}
    for i, row in enumerate(doc["rollouts"]):
        p = site / row["json"]
        rec = json.loads(p.read_text())
        made[row["sequence"]] = {c: entry(k) for c, k in zip(CONDITIONS, (30 - 28 * i, 16, 2 + 28 * i))}
        rec["sampled"] = dict(rec.get("sampled") or {}, p_lift=made[row["sequence"]])
        p.write_text(json.dumps(rec))
    build_report(site / "study.json", site / "report.html")
    for c in CONDITIONS:
        for cls, word in CLASS_WORDS.items():
            want = sum(m[c]["class"] == cls for m in made.values())
            if not want:
                continue
            res = _browser(
                exe, f"{(site / 'report.html').as_uri()}#p_lift-{c}={word.replace(' ', '%20')}", "--dump-dom"
            )
            assert res.returncode == 0, res.stderr[-2000:]
            body = re.search(r"<body([^>]*)>", res.stdout).group(1)
            assert f'data-shown="{want}"' in body, (c, word, body)
    seq = doc["rollouts"][0]["sequence"]
    shot = tmp_path / "rec.png"
    res = _browser(
        exe, (site / "report_files" / f"{seq}.html").as_uri(), f"--screenshot={shot}", "--window-size=900,900"
    )
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    import matplotlib.image as mpimg

    img = (mpimg.imread(shot)[..., :3] * 255).round().astype(int)
    cls = made[seq][CONDITIONS[0]]["class"]
    rgb = [int(WORD_CSS[WORD_OF_CLASS[cls]][i : i + 2], 16) for i in (1, 3, 5)]
    assert np.all(np.abs(img - rgb) <= 8, axis=-1).sum() > 30  # its dot and its words in the class colour
