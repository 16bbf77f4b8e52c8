"""The report and the montage's selection at 1,500 recordings (issue 41), made from a real short
study (:mod:`scale_fixture`): the main page stays small and loads in headless Chromium, its table
sorts and filters by outcome, object and cause, each recording has its own page, and the montage
shows a bounded selection with every outcome class.

The figures over time are drawn by matplotlib from the real poses in test_report.py; here
(1,500 of them would take ~4 min on 2 cores) a 1-pixel stand-in is written instead."""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest
from scale_fixture import OUTCOMES, synthetic_study
from test_report import _browser, _chromium
from test_study import SHORT

from replay.config import ReplayConfig
from replay.output import report_recording
from replay.output.render.montage import MONTAGE_MAX_CLIPS, _choose
from replay.output.render.montage_pick import outcome_class
from replay.output.report import build_report
from replay.output.report_table import COLUMNS
from replay.results.files import read_study
from replay.results.study_rows import StudyRow
from replay.study.runner import run_study

pytestmark = [pytest.mark.needs_data, pytest.mark.slow]  # a real study, 1,500 pages, Chromium: ~3 min on 2 shared cores

N = 1500
OBJECTS = [
    "mug",
    "banana",
    "stapler",
    "duck",
    "knife",
    "phone",
    "toothbrush",
    "waterbottle",
    "camera",
    "bowl",
    "elephant",
    "airplane",
]
#: a 1 x 1 PNG (the stand-in for a recording's figure)
PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5b1a26f0000000049454e44ae426082"
)


@pytest.fixture(scope="module")
def big(tmp_path_factory, mirror):
    d = tmp_path_factory.mktemp("scale")
    real = d / "real" / "study.json"
    run_study(
        "grab", real, ReplayConfig(**SHORT), objects=["cubesmall", "mug"], workers=0, progress=False, data_dir=mirror
    )
    return synthetic_study(real, N, d / "big", OBJECTS)


@pytest.fixture(scope="module")
def page(big, tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setattr(report_recording, "plot_rollout", lambda rec, sdir, png: (png.write_bytes(PNG_1PX), True)[1])
    t0 = time.perf_counter()
    n = build_report(big, big.parent / "report.html")
    mp.undo()
    return big.parent / "report.html", n, time.perf_counter() - t0


def test_main_page_is_small_and_each_recording_has_its_page(page):
    out, n, secs = page
    assert n["rows"] == N and n["plots"] == N
    size = out.stat().st_size
    # measured here: 0.83 MB (~0.55 kB a row), built in ~25 s on 2 shared cores; no image, no video on it
    assert size < 1.2e6, size
    text = out.read_text()
    assert "<img" not in text and "<video" not in text
    assert not re.search(r"(?:src|href)=['\"]?(?:https?:)?//", text)  # nothing from the network
    pages = sorted((out.parent / "report_files").glob("*.html"))
    assert len(pages) == N
    links = re.findall(r"<a href='(report_files/[^']+\.html)'>", text)
    assert len(links) == N and all((out.parent / ln).is_file() for ln in links[:50])


def test_filters_and_sort_in_chromium(page, big):
    exe = _chromium()
    out, _, _ = page
    import json

    rows = json.loads(big.read_text())["rollouts"]
    rise_col = [k for _, k, _, _ in COLUMNS].index("rise")
    t0 = time.perf_counter()
    res = _browser(exe, f"{out.as_uri()}#contact-run=not+lifted&object=banana&sort={rise_col}:desc", "--dump-dom")
    took = time.perf_counter() - t0
    assert res.returncode == 0, res.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", res.stdout).group(1)
    want = [r for r in rows if r["object"] == "banana" and outcome_class(StudyRow.from_dict(r)) == "not lifted"]
    assert want and f'data-shown="{len(want)}"' in body, body
    load_ms = int(re.search(r'data-load-ms="(\d+)"', body).group(1))
    js_ms = int(re.search(r'data-js-ms="(\d+)"', body).group(1))
    # measured here, 2 cores at a load average of 8-17: the page's load 3.8-6.2 s (parsing and laying out
    # 25,500 cells), of which the table's script (filter, sort) 25-30 ms; a blank page 0.15-0.3 s
    assert js_ms < 1000 and load_ms < 30000 and took < 90, (js_ms, load_ms, took)
    shown = re.findall(r"<tr><td[^>]*><a href=\"report_files/([^\"]+)\.html\">", res.stdout)
    hidden = re.findall(r"<tr hidden=\"\"><td[^>]*><a href=\"report_files/([^\"]+)\.html\">", res.stdout)
    assert len(shown) == len(want) and len(shown) + len(hidden) == N
    assert set(shown) == {r["sequence"] for r in want}
    # cause filter: the diagnosis class (every slid_out row is a not_lifted one)
    res = _browser(exe, f"{out.as_uri()}#cause=slid_out", "--dump-dom")
    body = re.search(r"<body([^>]*)>", res.stdout).group(1)
    assert f'data-shown="{sum(r["diagnosis"] == "slid_out" for r in rows)}"' in body


def test_montage_selection_is_bounded_with_every_class(big):
    import json

    study = json.loads(big.read_text())
    chosen, left_out, rule = _choose(read_study(big), big, None, ("main",), MONTAGE_MAX_CLIPS)
    # the readable bound: 6 x 4 tiles of 320 x 240 on 1920 x 1080 (issue 49)
    assert len(chosen) == MONTAGE_MAX_CLIPS == 24 and len(left_out) == N - 24
    classes = Counter(outcome_class(e.row) for _, e in chosen)
    every = Counter(outcome_class(StudyRow.from_dict(r)) for r in study["rollouts"])
    assert set(classes) == set(every) == {"lifted", "not lifted", "unstable", "stuck"}
    # in proportion: lifted is 3 of every 7 recordings
    assert abs(classes["lifted"] - 24 * 3 / 7) <= 1.5, classes
    # within a class, one object at a time: 10 lifted tiles of 12 objects show 10 objects, once each
    per_obj = Counter(e.record.object for _, e in chosen if outcome_class(e.row) == "lifted")
    assert len(per_obj) == min(len(OBJECTS), classes["lifted"]) and max(per_obj.values()) == 1
    assert rule.startswith(f"24 of {N} recordings") and "lifted" in rule and "320 px wide" in rule
    assert len(OUTCOMES) == 7
