"""HUG-Bench from the Hub, with ``huggingface_hub`` replaced at its public boundary.

The fake Hub serves two small repositories built in ``tmp_path`` (object assets and a
scene tar holding image frames plus ``aria_data.pkl``). The tar is read through an
fsspec ``AbstractBufferedFile`` whose ``_fetch_range`` counts bytes, which is how the
real ``HfFileSystemFile`` turns reads into HTTP range requests, so the test measures
what would cross the network.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import io
import os
import pickle
import shutil
import tarfile
from pathlib import Path
from types import SimpleNamespace

import fsspec.spec
import huggingface_hub
import numpy as np
import pytest

import replay.data.hub
from replay.data.fetch import fetch
from replay.data.manifest import Manifest, verify
from replay.data.sources import HUG_BENCH_ASSETS, HUG_RECORDINGS
from replay.errors import FetchError

ASSETS_SHA = "a" * 40
IMAGE_BYTES = 1 << 20
N_IMAGES = 24


class CountingRemoteFile(fsspec.spec.AbstractBufferedFile):
    """A remote file whose every range request is counted."""

    def __init__(self, local: Path, block_size: int, log: list):
        self.local, self.log = local, log
        super().__init__(fs=None, path=str(local), mode="rb", block_size=block_size,
                         size=local.stat().st_size)

    def _fetch_range(self, start, end):
        self.log.append((start, end))
        with open(self.local, "rb") as f:
            f.seek(start)
            return f.read(end - start)


class FakeHub:
    """Records every huggingface_hub call; serves files from ``root/<repo_id>/``."""

    def __init__(self, root: Path, offline: bool = False):
        self.root, self.offline = root, offline
        self.calls: list[tuple[str, dict]] = []
        self.ranges: list[tuple[int, int]] = []
        hub = self

        class FS:
            def open(self, path, mode="rb", revision=None, block_size=None, **kw):
                hub.calls.append(("fs.open", dict(path=path, mode=mode, revision=revision, block_size=block_size)))
                assert path.startswith("datasets/")
                owner, name, rel = path[len("datasets/"):].split("/", 2)
                return CountingRemoteFile(hub.root / owner / name / rel, block_size, hub.ranges)

        self.FS = FS

    def _net(self):
        if self.offline:
            raise ConnectionError("[Errno -3] Temporary failure in name resolution")

    def files(self, repo_id):
        base = self.root / repo_id
        return sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file())

    def dataset_info(self, repo_id, revision=None, **kw):
        self.calls.append(("dataset_info", dict(repo_id=repo_id, revision=revision, **kw)))
        self._net()
        return SimpleNamespace(sha=ASSETS_SHA)

    def list_repo_files(self, repo_id, repo_type=None, revision=None, **kw):
        self.calls.append(("list_repo_files", dict(repo_id=repo_id, repo_type=repo_type, revision=revision)))
        self._net()
        return self.files(repo_id)

    def snapshot_download(self, repo_id, *, repo_type=None, revision=None, allow_patterns=None,
                          ignore_patterns=None, local_dir=None, **kw):
        self.calls.append(("snapshot_download", dict(repo_id=repo_id, repo_type=repo_type, revision=revision,
                                                     allow_patterns=allow_patterns,
                                                     ignore_patterns=ignore_patterns)))
        self._net()
        for rel in self.files(repo_id):
            if allow_patterns and not any(fnmatch.fnmatch(rel, p) for p in allow_patterns):
                continue
            if ignore_patterns and any(fnmatch.fnmatch(rel, p) for p in ignore_patterns):
                continue
            out = Path(local_dir) / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.root / repo_id / rel, out)
        return local_dir

    def hf_hub_download(self, repo_id, filename, *, repo_type=None, revision=None, local_dir=None, **kw):
        self.calls.append(("hf_hub_download", dict(repo_id=repo_id, filename=filename, repo_type=repo_type,
                                                   revision=revision)))
        self._net()
        out = Path(local_dir) / filename
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.root / repo_id / filename, out)
        return str(out)

    def named(self, name):
        return [c for n, c in self.calls if n == name]


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _aria_pickle(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    frames = [{"index": i, "T_world_device": rng.normal(size=(4, 4)),
               "mano_hand_tracking": {"right": {"pose": rng.normal(size=(1, 15, 3)),
                                                "landmarks": rng.normal(size=(21, 3))}}} for i in range(300)]
    return pickle.dumps({"fps": 10, "frame_data": frames})


def _scene_tar(path: Path, scene: str, aria: bytes, images: int = N_IMAGES) -> None:
    """A scene tar like 1M-HUGs': frames before and after the recording."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    with tarfile.open(path, "w") as tf:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))

        for i in range(images // 2):
            add(f"{scene}/rgb/{i:06d}.jpg", rng.bytes(IMAGE_BYTES))
        add(f"{scene}/processed/aria_data.pkl", aria)
        for i in range(images // 2, images):
            add(f"{scene}/depth/{i:06d}.png", rng.bytes(IMAGE_BYTES))


@pytest.fixture()
def hub(tmp_path, monkeypatch):
    root = tmp_path / "hub"
    assets = root / HUG_BENCH_ASSETS.repo_id
    for scene, objs in (("small_2", ("lock", "tape_measure")), ("medium_2", ("softball",))):
        for obj in objs:
            base = assets / "hug_bench" / "test" / scene / obj / "sim_assets"
            _write(base / "visual.obj", f"v 0 0 0\n# {obj}\n".encode())
            _write(base / "collision" / "part_000.obj", f"v 1 0 0\n# {obj}\n".encode())
            _write(base / "properties.json", b'{"world_position": [0.1, 0.2, 0.7]}')
    _write(assets / "hug_bench" / "val" / "small_1" / "cup" / "sim_assets" / "visual.obj", b"v 0 0 1\n")
    _write(assets / "README.md", b"# HUG-Bench\n")
    recs = root / HUG_RECORDINGS.repo_id
    _scene_tar(recs / "test" / "small_2.tar", "small_2", _aria_pickle(1))
    _scene_tar(recs / "test" / "medium_2.tar", "medium_2", _aria_pickle(2), images=4)
    fake = FakeHub(root)
    for name in ("dataset_info", "list_repo_files", "snapshot_download", "hf_hub_download"):
        monkeypatch.setattr(huggingface_hub, name, getattr(fake, name))
    monkeypatch.setattr(huggingface_hub, "HfFileSystem", fake.FS)
    monkeypatch.delenv("REPLAY_MIRROR", raising=False)
    # no commit of kevinywu/hug-bench is pinned in sources.py (none could be confirmed offline):
    # these tests stand for the project once one is
    monkeypatch.setattr(replay.data.hub, "HUG_BENCH_ASSETS", dataclasses.replace(HUG_BENCH_ASSETS, revision=ASSETS_SHA))
    return fake


def _no_tar_requested(fake: FakeHub) -> None:
    for call in fake.named("hf_hub_download"):
        assert not call["filename"].endswith(".tar")
    for call in fake.named("snapshot_download"):
        assert call["allow_patterns"] and "*.tar" in call["ignore_patterns"]


def test_hub_fetch_requests_pinned_repos_and_streams_only_aria_data(hub, tmp_path):
    dest = tmp_path / "data"
    res = fetch("hug-bench", dest, split="test", scenes=["small_2"], progress=False)[0]
    assert res.source == "hub" and res.staged == 7  # 2 objects x 3 files + aria_data.pkl

    assert hub.named("dataset_info") == []  # the pinned commit is used as it is, never a branch resolved
    assert hub.named("list_repo_files") == [
        dict(repo_id="kevinywu/hug-bench", repo_type="dataset", revision=ASSETS_SHA),
        dict(repo_id="kevinywu/1m-hugs", repo_type="dataset", revision=HUG_RECORDINGS.revision),
    ]
    (snap,) = hub.named("snapshot_download")
    assert snap["repo_id"] == "kevinywu/hug-bench" and snap["repo_type"] == "dataset"
    assert snap["revision"] == ASSETS_SHA
    assert snap["allow_patterns"] == ["hug_bench/test/small_2/**"]
    assert hub.named("hf_hub_download") == []
    (opened,) = hub.named("fs.open")
    assert opened["path"] == "datasets/kevinywu/1m-hugs/test/small_2.tar" and opened["mode"] == "rb"
    assert opened["revision"] == "56ea3f100b1a4ec38bb35e986c0dd14d38977283"
    _no_tar_requested(hub)

    # only tar headers and the aria_data.pkl member crossed the "network"
    tar_size = (hub.root / "kevinywu/1m-hugs/test/small_2.tar").stat().st_size
    fetched = sum(e - s for s, e in hub.ranges)
    aria = _aria_pickle(1)
    assert len(aria) < fetched < 0.15 * tar_size, (fetched, tar_size)

    root = dest / "hug-bench"
    assert (root / "scenes/test/small_2/aria_data.pkl").read_bytes() == aria
    assert pickle.loads((root / "scenes/test/small_2/aria_data.pkl").read_bytes())["fps"] == 10
    assert (root / "hug_bench/test/small_2/lock/sim_assets/visual.obj").is_file()
    assert not (root / "hug_bench/test/medium_2").exists()
    man = Manifest(dest).files
    rec = man["hug-bench/scenes/test/small_2/aria_data.pkl"]
    assert rec["source"] == "hub" and rec["repo"] == "https://huggingface.co/datasets/kevinywu/1m-hugs"
    assert rec["revision"] == HUG_RECORDINGS.revision and rec["upstream_path"] == "test/small_2.tar:small_2/processed/aria_data.pkl"
    asset = man["hug-bench/hug_bench/test/small_2/tape_measure/sim_assets/properties.json"]
    assert asset["revision"] == ASSETS_SHA
    assert asset["size"] == len(b'{"world_position": [0.1, 0.2, 0.7]}')
    assert verify(dest, fix=False) == []
    assert res.note == ""  # a commit was pinned: nothing resolved at fetch time

    # idempotent: nothing is downloaded again
    hub.calls.clear()
    res2 = fetch("hug-bench", dest, split="test", scenes=["small_2"], progress=False)[0]
    assert res2.staged == 0 and res2.skipped == 7
    assert hub.named("snapshot_download") == [] and hub.named("fs.open") == []


def test_plain_recording_file_uses_hf_hub_download(hub, tmp_path):
    recs = hub.root / HUG_RECORDINGS.repo_id
    _write(recs / "test" / "medium_2" / "aria_data.pkl", _aria_pickle(3))
    rev = "b" * 40
    res = fetch("hug-bench", tmp_path / "data", split="test", scenes=["medium_2"], hub_revision="c" * 40,
                recordings_revision=rev, progress=False)[0]
    assert res.staged == 4 and res.note == ""
    assert hub.named("dataset_info") == []  # commit hashes are used as given
    assert hub.named("snapshot_download")[0]["revision"] == "c" * 40
    assert hub.named("hf_hub_download") == [dict(repo_id="kevinywu/1m-hugs", filename="test/medium_2/aria_data.pkl",
                                                 repo_type="dataset", revision=rev)]
    assert hub.named("fs.open") == []
    _no_tar_requested(hub)
    staged = tmp_path / "data/hug-bench/scenes/test/medium_2/aria_data.pkl"
    assert staged.read_bytes() == _aria_pickle(3)
    assert not list(staged.parent.glob(".hfdl-*"))


def test_all_scenes_of_split_by_default(hub, tmp_path):
    res = fetch("hug-bench", tmp_path / "data", split="test", progress=False)[0]
    (snap,) = hub.named("snapshot_download")
    assert snap["allow_patterns"] == ["hug_bench/test/medium_2/**", "hug_bench/test/small_2/**"]
    assert res.staged == 3 * 3 + 2
    assert [c["path"] for c in hub.named("fs.open")] == ["datasets/kevinywu/1m-hugs/test/medium_2.tar",
                                                         "datasets/kevinywu/1m-hugs/test/small_2.tar"]


def test_corrupted_hub_file_is_refetched(hub, tmp_path):
    dest = tmp_path / "data"
    fetch("hug-bench", dest, split="test", scenes=["small_2"], progress=False)
    bad = dest / "hug-bench/scenes/test/small_2/aria_data.pkl"
    bad.write_bytes(b"garbage")
    hub.calls.clear()
    res = fetch("hug-bench", dest, split="test", scenes=["small_2"], progress=False)[0]
    assert res.staged == 1 and "aria_data.pkl" in res.repaired[0]
    assert bad.read_bytes() == _aria_pickle(1)
    assert hub.named("snapshot_download") == []  # the assets were still good


def test_unknown_scene_lists_available(hub, tmp_path):
    with pytest.raises(FetchError, match="unknown HUG-Bench scene.*large_9.*available: medium_2, small_2"):
        fetch("hug-bench", tmp_path / "data", split="test", scenes=["large_9"], progress=False)


def test_compressed_scene_archive_is_refused(hub, tmp_path):
    recs = hub.root / HUG_RECORDINGS.repo_id
    os.remove(recs / "test" / "small_2.tar")
    _write(recs / "test" / "small_2.tar.gz", b"\x1f\x8b")
    with pytest.raises(FetchError, match="compressed archive test/small_2.tar.gz"):
        fetch("hug-bench", tmp_path / "data", split="test", scenes=["small_2"], progress=False)
    assert hub.named("fs.open") == [] and hub.named("hf_hub_download") == []


def test_offline_hub_error_names_repo_and_says_no_mirror_has_it(hub, tmp_path):
    hub.offline = True
    with pytest.raises(FetchError) as info:
        fetch("hug-bench", tmp_path / "data", progress=False)
    msg = str(info.value)
    assert "huggingface.co" in msg and "kevinywu/hug-bench" in msg
    # the offline mirror has no HUG-Bench: the message must not send the user there
    assert "--mirror" not in msg and "mirror does not hold it" in msg


def test_all_with_mirror_skips_hub_without_network(hub, tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    with pytest.raises(FetchError, match="has no manosim/ folder"):
        fetch("all", tmp_path / "data", mirror=mirror, progress=False)
    assert hub.calls == []


def test_cli_revision_flags(hub, tmp_path, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("fetch_data", Path(__file__).parents[1] / "scripts/fetch_data.py")
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    rc = cli.main(["--dataset", "hug-bench", "--dest", str(tmp_path / "data"), "--split", "test",
                   "--scenes", "small_2", "--revision", "d" * 40, "--recordings-revision", "e" * 40, "--quiet"])
    assert rc == 0
    assert hub.named("snapshot_download")[0]["revision"] == "d" * 40
    assert hub.named("fs.open")[0]["revision"] == "e" * 40
    assert "hug-bench: 7 file(s) staged from hub" in capsys.readouterr().out
    hub.offline = True
    rc = cli.main(["--dataset", "hug-bench", "--dest", str(tmp_path / "d2"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1 and "could not reach huggingface.co" in err and "Traceback" not in err


def test_assets_packed_as_scene_tar_are_streamed_member_by_member(hub, tmp_path):
    """If a scene's assets exist only as hug_bench/<split>/<scene>.tar, its files are extracted in place."""
    assets = hub.root / HUG_BENCH_ASSETS.repo_id
    scene_dir = assets / "hug_bench" / "test" / "small_2"
    with tarfile.open(assets / "hug_bench" / "test" / "small_2.tar", "w") as tf:
        tf.add(scene_dir, arcname="small_2")
    expected = {p.relative_to(scene_dir).as_posix(): p.read_bytes() for p in scene_dir.rglob("*") if p.is_file()}
    shutil.rmtree(scene_dir)
    dest = tmp_path / "data"
    res = fetch("hug-bench", dest, split="test", scenes=["small_2"], progress=False)[0]
    assert res.staged == len(expected) + 1
    assert hub.named("snapshot_download") == []
    assert [c["path"] for c in hub.named("fs.open")] == ["datasets/kevinywu/hug-bench/hug_bench/test/small_2.tar",
                                                         "datasets/kevinywu/1m-hugs/test/small_2.tar"]
    staged = dest / "hug-bench" / "hug_bench" / "test" / "small_2"
    assert {p.relative_to(staged).as_posix(): p.read_bytes() for p in staged.rglob("*") if p.is_file()} == expected
    entry = Manifest(dest).files["hug-bench/hug_bench/test/small_2/lock/sim_assets/visual.obj"]
    assert entry["upstream_path"] == "hug_bench/test/small_2.tar:small_2/lock/sim_assets/visual.obj"
    assert verify(dest, fix=False) == []


def test_scene_tar_without_recording_is_an_error(hub, tmp_path):
    recs = hub.root / HUG_RECORDINGS.repo_id
    with tarfile.open(recs / "test" / "small_2.tar", "w") as tf:
        info = tarfile.TarInfo("small_2/rgb/000000.jpg")
        info.size = 4
        tf.addfile(info, io.BytesIO(b"jpeg"))
    with pytest.raises(FetchError, match="test/small_2.tar has no aria_data.pkl member"):
        fetch("hug-bench", tmp_path / "data", split="test", scenes=["small_2"], progress=False)
    assert not (tmp_path / "data/hug-bench/scenes/test/small_2/aria_data.pkl").exists()


def test_a_revision_that_is_not_a_commit_is_refused_before_any_request(hub, tmp_path, monkeypatch):
    """Pinned revisions are commits: ``main`` (a branch moves) is refused, as is the unpinned default."""
    with pytest.raises(FetchError, match=r"revision 'main' of kevinywu/hug-bench is not a commit"):
        fetch("hug-bench", tmp_path / "data", split="test", scenes=["small_2"], hub_revision="main", progress=False)
    monkeypatch.setattr(replay.data.hub, "HUG_BENCH_ASSETS", HUG_BENCH_ASSETS)  # as sources.py pins it: nothing
    with pytest.raises(FetchError, match=r"kevinywu/hug-bench has no pinned commit .*--revision <40-hex commit>"):
        fetch("hug-bench", tmp_path / "data", split="test", scenes=["small_2"], progress=False)
    assert hub.calls == []


@pytest.mark.parametrize("member", ["small_2/lock/../../../../escaped.txt", "/tmp/escaped_abs.txt"])
def test_a_tar_member_leaving_dest_is_refused_before_it_is_written(hub, tmp_path, member):
    """An asset tar member with ``..`` or an absolute name (CVE-2007-4559's class) is refused, naming the
    tar and member, before a byte is written; the manifest holds no such key and a later fetch works."""
    assets = hub.root / HUG_BENCH_ASSETS.repo_id / "hug_bench" / "test"
    shutil.rmtree(assets / "small_2")
    with tarfile.open(assets / "small_2.tar", "w") as tf:
        info = tarfile.TarInfo(member)
        info.size = 3
        tf.addfile(info, io.BytesIO(b"bad"))
    dest = tmp_path / "data"
    with pytest.raises(Exception) as exc:
        fetch("hug-bench", dest, split="test", scenes=["small_2"], progress=False)
    assert type(exc.value).__name__ == "DataError" and exc.value.cause == "path_escape"
    assert "small_2.tar" in str(exc.value) and "[member]" in str(exc.value) and "leaves its folder" in str(exc.value)
    assert not list(tmp_path.rglob("escaped*")) and not Path("/tmp/escaped_abs.txt").exists()
    man = Manifest(dest)  # loads: no '..' key was recorded
    assert all(".." not in k for k in man.files)


def test_link_members_of_an_asset_tar_are_never_written(hub, tmp_path):
    """Symlink and hardlink members (to ``/etc/passwd``, or up and out) are not files: only regular
    members are staged, so no link escaping ``--dest`` is ever created."""
    assets = hub.root / HUG_BENCH_ASSETS.repo_id / "hug_bench" / "test"
    shutil.rmtree(assets / "small_2")
    with tarfile.open(assets / "small_2.tar", "w") as tf:
        info = tarfile.TarInfo("small_2/lock/sim_assets/properties.json")
        body = b'{"world_position": [0.1, 0.2, 0.7]}'
        info.size = len(body)
        tf.addfile(info, io.BytesIO(body))
        for name, kind, target in (("small_2/lock/sim_assets/visual.obj", tarfile.SYMTYPE, "/etc/passwd"),
                                   ("small_2/lock/sim_assets/up.obj", tarfile.LNKTYPE, "../../../../etc/passwd")):
            link = tarfile.TarInfo(name)
            link.type, link.linkname = kind, target
            tf.addfile(link)
    dest = tmp_path / "data"
    res = fetch("hug-bench", dest, split="test", scenes=["small_2"], progress=False)[0]
    staged = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file() or p.is_symlink())
    assert not [p for p in dest.rglob("*") if p.is_symlink()]
    assert "hug-bench/hug_bench/test/small_2/lock/sim_assets/properties.json" in staged
    assert not any(s.endswith(("visual.obj", "up.obj")) for s in staged) and res.staged == 2  # + aria_data.pkl
