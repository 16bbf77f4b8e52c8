"""Restricted unpickler: numpy + builtins in, everything else refused without running."""

from __future__ import annotations

import collections
import os
import pickle

import numpy as np
import pytest

from replay.data.safe_pickle import load_pickle, loads_pickle
from replay.errors import DataError


def test_numpy_and_builtins_round_trip(tmp_path):
    data = {
        "a": np.arange(12, dtype=np.float32).reshape(3, 4),
        "b": [1, 2.5, "x", None, True, (1, 2)],
        "c": np.float64(3.5),
        "d": {"nested": np.zeros((2, 2), dtype=np.int64)},
        "e": {1, 2},
        "f": b"bytes",
    }
    for proto in (2, 4, 5):
        p = tmp_path / f"ok{proto}.pkl"
        p.write_bytes(pickle.dumps(data, protocol=proto))
        out = load_pickle(p)
        np.testing.assert_array_equal(out["a"], data["a"])
        assert out["a"].dtype == np.float32
        assert out["b"] == data["b"] and out["c"] == 3.5 and out["e"] == {1, 2} and out["f"] == b"bytes"
        np.testing.assert_array_equal(out["d"]["nested"], 0)


class _Hostile:
    """Unpickling this would call os.system (via __reduce__) if it were allowed."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_hostile_pickle_is_refused_and_does_not_run(tmp_path):
    marker = tmp_path / "pwned"
    p = tmp_path / "hostile.pkl"
    p.write_bytes(pickle.dumps({"hand": _Hostile(marker)}))
    with pytest.raises(DataError) as e:
        load_pickle(p)
    msg = str(e.value)
    assert "hostile.pkl" in msg and ("posix.system" in msg or "os.system" in msg)
    assert not marker.exists()
    # sanity: the payload does run with the unrestricted unpickler
    pickle.loads(p.read_bytes())
    assert marker.exists()


def test_other_classes_refused():
    with pytest.raises(DataError, match="collections.OrderedDict"):
        loads_pickle(pickle.dumps(collections.OrderedDict(a=1)), "x.pkl")
    with pytest.raises(DataError, match="builtins.eval"):
        loads_pickle(pickle.dumps(eval), "x.pkl")


def test_truncated_pickle(tmp_path):
    full = pickle.dumps({"a": np.arange(1000.0)}, protocol=4)
    p = tmp_path / "trunc.pkl"
    for cut in (len(full) // 2, len(full) - 1, 3):
        p.write_bytes(full[:cut])
        with pytest.raises(DataError, match="trunc.pkl.*(truncated|corrupt)"):
            load_pickle(p)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="not found"):
        load_pickle(tmp_path / "nope.pkl")


def test_real_grab_pickle_loads(grab_dir):
    d = load_pickle(grab_dir / "recordings" / "mug_lift.pkl")
    assert d["hand"]["joints_target"].shape == (4246, 21, 3)
