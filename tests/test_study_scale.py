"""benchmarks/study_scale.py's recordings (issue 41): the variants it makes of the 30 GRAB lifts are
each a recording of their own (own file, own hash) that the GRAB reader takes, with the scene turned
about the vertical and the hand moved by at most 3 mm, re-derived here from the raw files."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from replay.data.grab import load_grab
from replay.fileio import sha256_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import study_scale  # noqa: E402

pytestmark = pytest.mark.needs_data


def test_variants_are_distinct_recordings_of_the_same_grasp(mirror, tmp_path):
    names = study_scale.make_dataset(mirror, 33, tmp_path)
    assert len(names) == len(set(names)) == 33 and names[30:] == ["airplanev001_lift", "bananav001_lift",
                                                                  "binocularsv001_lift"]
    recs = tmp_path / "grab" / "recordings"
    assert len({sha256_file(p) for p in recs.glob("*.pkl")}) == 33
    for name in names[30:]:
        base = name.replace("v001", "")
        with open(mirror / "grab" / "recordings" / f"{base}.pkl", "rb") as f:
            raw = pickle.load(f)
        orig, var = load_grab(mirror / "grab" / "recordings" / f"{base}.pkl"), load_grab(recs / f"{name}.pkl")
        # heights unchanged (a turn about the vertical), so the lift onset and support too
        assert np.allclose(var.objects[0].pos[:, 2], orig.objects[0].pos[:, 2], atol=1e-9)
        assert var.grasp_frame == orig.grasp_frame and var.support_height == pytest.approx(orig.support_height, abs=1e-6)
        # the hand about the object: distances between hand points and the object kept but for the
        # wrist offset (at most 3 mm, the same for every frame and landmark)
        d0 = np.linalg.norm(orig.landmarks - orig.objects[0].pos[:, None], axis=-1)
        d1 = np.linalg.norm(var.landmarks - var.objects[0].pos[:, None], axis=-1)
        assert np.abs(d1 - d0).max() <= 0.003 + 1e-9
        # the object's horizontal path turned by one yaw within +-20 deg about its first position
        p0 = np.asarray(raw["object"]["loc"], float)
        a = orig.objects[0].pos[:, :2] - p0[0, :2]
        b = var.objects[0].pos[:, :2] - p0[0, :2]
        k = int(np.argmax(np.linalg.norm(a, axis=1)))
        yaw = np.degrees(np.arctan2(a[k, 0] * b[k, 1] - a[k, 1] * b[k, 0], a[k] @ b[k]))
        assert 0.01 < abs(yaw) <= 20.0
        assert np.allclose(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1), atol=1e-9)
