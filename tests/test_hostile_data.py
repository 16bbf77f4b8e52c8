"""A dataset from a stranger (issue 48): nothing outside its folder read or written, no size bomb,
provenance from the project's own pin list, the right cause for a bad frame rate.

Each test is a class of fault: it builds its hostile inputs in ``tmp_path`` from copies of the
mirror's files (never one shared case file) and tries several members of the class.
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
import struct
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from replay.errors import DataError, FetchError

#: a refusal costs under 2 s and 500 MB whatever the file claims (issue 48); asserted loosely
#: (10 s: 2 shared cores) and, for memory, as the Python/numpy heap's peak under tracemalloc
REFUSAL_S = 10.0
REFUSAL_PEAK_BYTES = 50e6


def _one_line(msg: str) -> None:
    assert "\n" not in msg and "Traceback" not in msg, msg


def _refused_cheaply(fn, match: str, cause: str | None = None, bounded: bool = True) -> DataError:
    """``fn()`` raises a one-line DataError matching ``match`` (``bounded``: within the time and memory
    bounds; False where the refusal follows reading a real recording, whose cost is not the point)."""
    if bounded:
        tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(DataError, match=match) as exc:
            fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if bounded:
        assert time.perf_counter() - t0 < REFUSAL_S
        assert peak < REFUSAL_PEAK_BYTES, f"refusal peaked at {peak / 1e6:.0f} MB"
    _one_line(str(exc.value))
    if cause is not None:
        assert exc.value.cause == cause, exc.value.line
    return exc.value


def _grab_copy(tmp: Path, mirror: Path, objects=("cubesmall", "table")) -> Path:
    """``tmp/data``: the mirror's cubesmall_lift.pkl and the named object folders (copies), common.xml."""
    data = tmp / "data"
    rec = data / "grab" / "recordings"
    rec.mkdir(parents=True)
    shutil.copyfile(mirror / "grab" / "recordings" / "cubesmall_lift.pkl", rec / "cubesmall_lift.pkl")
    for name in objects:
        shutil.copytree(mirror / "grab" / "objects" / name, data / "grab" / "objects" / name)
    shutil.copyfile(mirror / "grab" / "objects" / "common.xml", data / "grab" / "objects" / "common.xml")
    return data


def _rewrite(pkl: Path, edit) -> None:
    from replay.data.safe_pickle import load_pickle

    d = load_pickle(pkl)
    edit(d)
    pkl.write_bytes(pickle.dumps(d, protocol=2))


# --------------------------------------------------------------------------- 1. confinement


@pytest.mark.parametrize("name", ["../../outside/cubesmall", "cubesmall/../../../outside/cubesmall", "ABS",
                                  "..", "sub\\..\\x"])
def test_an_object_name_leaving_the_objects_folder_is_refused(tmp_path, mirror, name):
    """``object.name`` with ``..``, a separator or an absolute path is refused naming the file and field,
    though a model sits where it points (the study would otherwise replay it as lifted)."""
    from replay.data.grab import load_grab

    data = _grab_copy(tmp_path, mirror)
    outside = tmp_path / "outside" / "cubesmall"
    shutil.copytree(mirror / "grab" / "objects" / "cubesmall", outside)
    name = str(outside) if name == "ABS" else name
    pkl = data / "grab" / "recordings" / "cubesmall_lift.pkl"
    _rewrite(pkl, lambda d: d["object"].__setitem__("name", name))
    err = _refused_cheaply(lambda: load_grab(pkl), r"cubesmall_lift.pkl \[object.name\]: .* is not a plain name",
                           "path_escape")
    assert name in str(err) or repr(name)[1:-1] in str(err)


@pytest.mark.parametrize("target", ["../../../outside.xml", "ABS"])
def test_an_mjcf_include_outside_the_objects_folder_is_refused(tmp_path, mirror, target):
    """``<include file>`` resolves relative to the including file and must stay in the objects folder
    (object_sim's own ``../common.xml`` does)."""
    from replay.data.object_mjcf import load_grab_object

    data = _grab_copy(tmp_path, mirror)
    outside = tmp_path / "outside.xml"
    outside.write_text("<mujoco/>")
    obj = data / "grab" / "objects" / "cubesmall"
    assert load_grab_object(obj).name == "cubesmall"  # the clean copy, ../common.xml included, loads
    xml = obj / "object.xml"
    text = xml.read_text()
    assert '<include file="../common.xml" />' in text
    xml.write_text(text.replace('<include file="../common.xml" />', f'<include file="{outside if target == "ABS" else target}"/>'
                                '<include file="../common.xml" />'))
    _refused_cheaply(lambda: load_grab_object(obj), r"object.xml \[include.file\]: include .*outside.xml.* outside "
                                                     r".*grab/objects", "path_escape")


def test_a_symlink_out_of_a_local_folder_is_refused_unless_followed(tmp_path, mirror, capsys):
    """``fetch_data.py --local DIR``: a file symlink in DIR to a file elsewhere (a password file) is
    refused in one line naming it; ``--follow-symlinks`` stages it and the manifest says so."""
    from replay.commands.fetch_data import main

    local = tmp_path / "mine"
    (local / "grab" / "recordings").mkdir(parents=True)
    shutil.copyfile(mirror / "grab" / "recordings" / "cubesmall_lift.pkl", local / "grab" / "recordings" / "own_lift.pkl")
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0\n")
    (local / "grab" / "recordings" / "notes.txt").symlink_to(secret)
    dest = tmp_path / "data"
    for link in ("copy", "symlink"):
        rc = main(["--dataset", "grab", "--local", str(local), "--dest", str(dest), "--link", link, "--quiet"])
        err = capsys.readouterr().err
        assert rc == 1 and "notes.txt: a symlink to" in err and str(secret) in err and "--follow-symlinks" in err
        _one_line(err.strip())
        assert not (dest / "grab" / "recordings" / "notes.txt").exists()
    # a link inside the folder is no escape
    (local / "grab" / "recordings" / "again.pkl").symlink_to(local / "grab" / "recordings" / "own_lift.pkl")
    (local / "grab" / "recordings" / "notes.txt").unlink()
    assert main(["--dataset", "grab", "--local", str(local), "--dest", str(dest), "--quiet"]) == 0
    (local / "grab" / "recordings" / "notes.txt").symlink_to(secret)
    assert main(["--dataset", "grab", "--local", str(local), "--dest", str(dest), "--follow-symlinks", "--quiet"]) == 0
    entry = json.loads((dest / "MANIFEST.json").read_text())["files"]["grab/recordings/notes.txt"]
    assert entry["symlink_target"] == str(secret.resolve()) and entry["pinned"] is False
    assert "symlink_target" not in json.loads((dest / "MANIFEST.json").read_text())["files"]["grab/recordings/again.pkl"]


@pytest.mark.parametrize("key", ["grab/../../x.pkl", "/etc/passwd", "grab\\..\\x", "C:/x"])
def test_a_manifest_key_leaving_the_staging_root_is_never_recorded(tmp_path, key):
    from replay.data.manifest import Manifest

    man = Manifest(tmp_path)
    with pytest.raises(DataError, match=r"MANIFEST.json \[files\..*\]: .* leaves its folder") as exc:
        man.add(dataset="grab", source="local", repo="unknown", revision="unknown", path=key, size=1, sha256="0" * 64)
    assert exc.value.cause == "path_escape" and man.files == {}


# --------------------------------------------------------------------------- 2. bounded cost


def _reduce(module: str, name: str, args: bytes) -> bytes:
    """A protocol-2 pickle calling ``module.name`` on the pickled tuple ``args`` (opcodes)."""
    return b"\x80\x02c" + f"{module}\n{name}\n".encode() + args + b"R."


def _int(n: int) -> bytes:
    return b"\x8a" + bytes([len(n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True))]) + \
        n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)


def _hostile_pickles() -> dict[str, bytes]:
    """Small pickles that ask an allow-listed constructor for gigabytes."""
    nd = b"cnumpy\nndarray\n"
    f8 = b"cnumpy\ndtype\nU\x02f8\x89\x88\x87R"  # dtype('f8', False, True)
    shape = _int(10**8) + _int(21) + _int(3) + b"\x87"
    return {
        "bytearray 6 GiB": _reduce("__builtin__", "bytearray", _int(6 << 30) + b"\x85"),
        "range 1e12": _reduce("__builtin__", "range", _int(10**12) + b"\x85"),
        "_reconstruct (1e8, 21, 3) f8": _reduce("numpy.core.multiarray", "_reconstruct", b"(" + nd + shape + f8 + b"t"),
        "zero-stride ndarray over 8 bytes": _reduce(
            "numpy", "ndarray", b"(" + shape + f8 + b"C\x08" + b"\0" * 8 + b"K\x00" + _int(0) + _int(0) + _int(0) + b"\x87t"),
        "void dtype of 2 GB": _reduce("numpy.core.multiarray", "scalar",
                                      b"(cnumpy\ndtype\nU\x0bV2000000000\x89\x88\x87RC\x00t"),
    }


@pytest.mark.parametrize("kind", list(_hostile_pickles()))
def test_a_pickle_constructor_is_never_asked_for_more_than_the_file_holds(tmp_path, kind):
    """The unpickler bounds what each allow-listed constructor builds by the file's own length."""
    from replay.data.safe_pickle import load_pickle

    p = tmp_path / "x_lift.pkl"
    p.write_bytes(_hostile_pickles()[kind])
    assert p.stat().st_size < 200
    _refused_cheaply(lambda: load_pickle(p), r"x_lift.pkl: .*(declares|called directly|refusing)")


def test_numpy_pickles_of_every_protocol_still_load(tmp_path):
    """The bounds admit what numpy writes: protocols 2-5, contiguous and Fortran, object, scalar, bytes."""
    from replay.data.safe_pickle import load_pickle

    value = {"a": np.arange(12.0).reshape(3, 4), "f": np.asfortranarray(np.ones((4, 3), np.float32)),
             "s": np.float64(2.5), "b": b"\x00\xff", "ba": bytearray(b"xy"), "o": np.array(["x", 1], object)}
    for proto in (2, 3, 4, 5):
        p = tmp_path / f"p{proto}.pkl"
        p.write_bytes(pickle.dumps(value, protocol=proto))
        got = load_pickle(p)
        assert np.array_equal(got["a"], value["a"]) and np.array_equal(got["f"], value["f"]) and got["s"] == 2.5
        assert got["b"] == b"\x00\xff" and got["ba"] == bytearray(b"xy")
        assert list(got["o"]) == ["x", 1]


def test_a_file_over_its_kinds_limit_is_refused_before_it_is_read(tmp_path, mirror, monkeypatch):
    """A sparse 25 GB recording, a 300 MB mesh and a 2 MB MJCF file are refused by their size alone
    (a stat), naming the limit and the variable that raises it; raising it lets a real file through."""
    from replay.data.mesh_io import load_mesh
    from replay.data.object_mjcf import grab_object_info
    from replay.data.safe_pickle import load_pickle

    big = tmp_path / "big_lift.pkl"
    with open(big, "wb") as f:
        f.truncate(25 * 10**9)
    _refused_cheaply(lambda: load_pickle(big), r"big_lift.pkl: is 25,000.0 MB, above the 1000 MB limit for a recording; "
                                               r".*REPLAY_MAX_RECORDING_MB=<MB>", "file_size")
    mesh = tmp_path / "huge.stl"
    with open(mesh, "wb") as f:
        f.truncate(300 * 10**6)
    _refused_cheaply(lambda: load_mesh(mesh, "visual_mesh"), r"huge.stl \[visual_mesh\]: is 300.0 MB, above the 200 MB "
                                                             r"limit for a mesh", "file_size")
    data = _grab_copy(tmp_path, mirror, objects=("cubesmall",))
    obj = data / "grab" / "objects" / "cubesmall"
    with open(obj / "body.xml", "ab") as f:
        f.truncate(2 * 10**6)
    _refused_cheaply(lambda: grab_object_info(obj), r"body.xml: is 2.0 MB, above the 1 MB limit for an MJCF file",
                     "file_size")
    rec = mirror / "grab" / "recordings" / "cubesmall_lift.pkl"
    monkeypatch.setenv("REPLAY_MAX_RECORDING_MB", "1")
    size = rec.stat().st_size
    _refused_cheaply(lambda: load_pickle(rec), rf"is {size / 1e6:,.1f} MB, above the 1 MB limit")
    monkeypatch.setenv("REPLAY_MAX_RECORDING_MB", str(size / 1e6 * 1.01))
    assert isinstance(load_pickle(rec), dict)
    monkeypatch.setenv("REPLAY_MAX_RECORDING_MB", "lots")
    with pytest.raises(DataError, match=r"^REPLAY_MAX_RECORDING_MB: expected a positive size in MB, got 'lots'"):
        load_pickle(rec)


@pytest.mark.parametrize("count", [2**31, 2**32 - 1, "one more"])
def test_an_stl_declaring_more_triangles_than_it_holds_says_so(tmp_path, mirror, count):
    """A binary STL's triangle count against its length (84 + 50 n bytes), before any parser
    believes it; the part is named through the object that uses it."""
    from replay.data.mesh_io import load_mesh
    from replay.data.object_mjcf import load_grab_object

    data = _grab_copy(tmp_path, mirror, objects=("cubesmall",))
    part = data / "grab" / "objects" / "cubesmall" / "contact0.stl"
    raw = bytearray(part.read_bytes())
    real = struct.unpack("<I", raw[80:84])[0]
    assert len(raw) == 84 + 50 * real  # the mirror's part is a well-formed binary STL
    n = real + 1 if count == "one more" else count
    raw[80:84] = struct.pack("<I", n)
    part.write_bytes(bytes(raw))
    msg = rf"contact0.stl \[geom\[cubesmall_contact0\].mesh\]: binary STL declares {n:,} triangles \({84 + 50 * n:,} bytes\) but the " \
          rf"file holds {len(raw):,} bytes"
    _refused_cheaply(lambda: load_mesh(part, "geom[cubesmall_contact0].mesh"), msg, "file_size")
    _refused_cheaply(lambda: load_grab_object(part.parent), msg, "file_size")


@pytest.mark.parametrize("fanout,levels", [(7, 7), (65, 1), (2, 7)])
def test_an_include_fanout_is_refused_by_count_quickly(tmp_path, mirror, fanout, levels):
    """Small MJCF files each including the next ``fanout`` times: refused by the include count
    (``MAX_INCLUDES``), within the depth limit, before the expansion grows."""
    from replay.data.object_mjcf import MAX_INCLUDE_DEPTH, MAX_INCLUDES, load_grab_object

    assert levels + 1 <= MAX_INCLUDE_DEPTH and fanout ** levels > MAX_INCLUDES
    data = _grab_copy(tmp_path, mirror, objects=("cubesmall",))
    obj = data / "grab" / "objects" / "cubesmall"
    for i in range(1, levels + 2):  # f1 .. f<levels> each include the next `fanout` times; the last is empty
        body = "".join(f'<include file="f{i + 1}.xml"/>' for _ in range(fanout)) if i <= levels else ""
        (obj / f"f{i}.xml").write_text(f"<mujoco>{body}</mujoco>")
    xml = obj / "object.xml"
    text = xml.read_text()
    assert '<include file="../common.xml" />' in text
    xml.write_text(text.replace('<include file="../common.xml" />', '<include file="../common.xml" /><include file="f1.xml"/>'))
    _refused_cheaply(lambda: load_grab_object(obj), rf"\[include.file\]: more than {MAX_INCLUDES} includes in one model",
                     "file_size")


# --------------------------------------------------------------------------- 3. provenance


def test_pinned_only_on_the_projects_own_pin(tmp_path, mirror, monkeypatch, capsys):
    """An edited recording that a shipped MANIFEST.json calls pinned (with its own SHA-256) is
    ``pinned: false, pin_mismatch: true`` in a rollout's inputs and for ``--verify``; the clean
    copy beside it is pinned."""
    from replay.commands.fetch_data import main
    from replay.data.inputs import input_hashes, pin_mismatch_lines
    from replay.data.sources import pin_digests
    from replay.fileio import sha256_file

    data = _grab_copy(tmp_path, mirror, objects=("cubesmall",))
    pkl = data / "grab" / "recordings" / "cubesmall_lift.pkl"
    clean = data / "grab" / "objects" / "cubesmall" / "contact0.stl"
    key, clean_key = "grab/recordings/cubesmall_lift.pkl", "grab/objects/cubesmall/contact0.stl"
    pins = pin_digests()
    assert sha256_file(pkl) == pins[key] and sha256_file(clean) == pins[clean_key]
    _rewrite(pkl, lambda d: d["object"].__setitem__("loc", d["object"]["loc"] + [0.0, 0.0, 0.003]))
    own = sha256_file(pkl)
    entry = {"dataset": "grab", "source": "github", "repo": "https://github.com/fflahm/t800_retargeting",
             "revision": "7d5ef23c505ca4a30c224da7abf6387da9cf2c6c", "path": key, "size": pkl.stat().st_size,
             "sha256": own, "pinned": True}
    (data / "MANIFEST.json").write_text(json.dumps({"format": 1, "files": {key: entry}}))
    monkeypatch.setenv("REPLAY_MIRROR", str(mirror))
    got = input_hashes([pkl, clean], str(data))
    assert got[key] == {"sha256": own, "from": "hashed", "pinned": False, "manifest": "match", "pin_mismatch": True}
    assert got[clean_key]["pinned"] is True and "pin_mismatch" not in got[clean_key]
    [line] = pin_mismatch_lines(got)
    assert line.startswith(f"{key}: SHA-256 {own[:12]}… is not the project's pin") and "pin_mismatch: true" in line
    rc = main(["--verify", "--dest", str(data), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1 and f"{key}: the manifest calls it pinned, but its SHA-256 {own[:12]}" in err
    assert f"the pin list has {pins[key][:12]}" in err
    saved = json.loads((data / "MANIFEST.json").read_text())["files"][key]
    assert saved["pinned"] is False and saved["pin_mismatch"] is True and pkl.is_file()


# --------------------------------------------------------------------------- 4. the right cause


@pytest.mark.parametrize("text,field,what", [
    ('{"fps": Infinity}', "fps", "got inf"),
    ('{"fps": NaN}', "fps", "got nan"),
    ('{"fps": {"cubesmall_lift": -Infinity}}', "fps.cubesmall_lift", "got -inf"),
    ('{"fps": 1e9}', "fps", "implausible frame rate 1e\\+09 Hz"),
    ('{"fps": {"*": 1e300}}', "fps.\\*", "implausible frame rate 1e\\+300 Hz"),
    ("[" * 100000 + "]" * 100000, None, "nested too deeply to parse"),
    ('{"fps": [' * 50000 + "]}" * 50000, None, "nested too deeply to parse"),
])
def test_a_bad_rate_in_recordings_json_names_that_file_and_field(tmp_path, mirror, text, field, what):
    """A non-finite, implausible or unparseable ``recordings.json`` is refused naming it (and the
    field), never the pickle, never a RecursionError; the cause is the frame rate where it is one."""
    from replay.checks import load_recording

    data = _grab_copy(tmp_path, mirror)
    (data / "grab" / "recordings" / "recordings.json").write_text(text)
    where = r"recordings.json" + (rf" \[{field}\]" if field else "")
    err = _refused_cheaply(lambda: load_recording("grab", "cubesmall_lift", data), rf"{where}: .*{what}", bounded=False)
    assert "cubesmall_lift.pkl" not in str(err)
    if field:
        assert err.cause == "frame_rate"


@pytest.mark.parametrize("fps", [1e9, 2e4])
def test_an_implausible_stated_rate_is_not_too_few_frames(mirror, fps):
    """``--fps 1e9`` (3194 frames in 3.2 us) is an implausible rate, said before any frame count."""
    from replay.checks import load_recording
    from replay.data.limits import MAX_PLAUSIBLE_FPS_HZ

    assert fps > MAX_PLAUSIBLE_FPS_HZ
    err = _refused_cheaply(lambda: load_recording("grab", "cubesmall_lift", mirror, fps=fps),
                           rf"cubesmall_lift.pkl \[fps\]: implausible frame rate {re.escape(f'{fps:g}')} Hz \(user "
                           r"\(--fps\)\)", "frame_rate", bounded=False)
    assert "too few frames" not in str(err)
