"""GitHub raw-file path with the HTTP boundary (``urllib.request.urlopen``) replaced.

The fake server answers raw.githubusercontent.com URLs with the bytes of the real
mirror, so the digests checked are the real pinned ones.
"""

from __future__ import annotations

import hashlib
import io
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from replay.data.fetch import fetch
from replay.data.stage import mirror_source
from replay.data.manifest import Manifest
from replay.data.sources import GITHUB_SOURCES, pinned_files
from replay.errors import FetchError, IntegrityError

RAW = "https://raw.githubusercontent.com/"


class FakeGitHub:
    """Serves ``raw.githubusercontent.com/<repo>/<commit>/<path>`` from the mirror."""

    def __init__(self, mirror: Path, tamper: str | None = None, fail: BaseException | None = None):
        self.mirror, self.tamper, self.fail = mirror, tamper, fail
        self.urls: list[str] = []
        self.lock = threading.Lock()
        # upstream (repo, commit, path) -> mirror path, from the pinned layout
        self.index = {}
        for src in GITHUB_SOURCES:
            for pf in pinned_files(src.dataset):
                if pf.source is src:
                    self.index[(src.repo, src.commit, src.upstream_path(pf.relpath))] = mirror_source(pf, mirror)

    def __call__(self, req, timeout=None):
        url = req.full_url if isinstance(req, urllib.request.Request) else req
        with self.lock:
            self.urls.append(url)
        if self.fail is not None:
            raise self.fail
        assert url.startswith(RAW), url
        owner, name, commit, path = url[len(RAW):].split("/", 3)
        local = self.index.get((f"{owner}/{name}", commit, path))
        if local is None:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)
        data = local.read_bytes()
        if self.tamper and url.endswith(self.tamper):
            data = data[:-1] + bytes([data[-1] ^ 1])
        return io.BytesIO(data)


def test_github_download_uses_pinned_commits(mirror, tmp_path, monkeypatch):
    fake = FakeGitHub(mirror)
    monkeypatch.setattr(urllib.request, "urlopen", fake)
    dest = tmp_path / "data"
    monkeypatch.delenv("REPLAY_MIRROR", raising=False)
    res_taco = fetch("taco", dest, progress=False)[0]
    res_mano = fetch("manosim", dest, progress=False)[0]
    assert res_taco.source == res_mano.source == "github"
    n_taco, n_mano = len(pinned_files("taco")), len(pinned_files("manosim"))  # the committed pin list
    assert res_taco.staged == n_taco and res_mano.staged == n_mano
    assert len(fake.urls) == len(set(fake.urls)) == n_taco + n_mano  # one request per pinned file
    assert all(u.startswith(RAW) for u in fake.urls)
    taco_urls = [u for u in fake.urls if "GeneOH-Diffusion" in u]
    assert sorted(taco_urls) == sorted(
        f"{RAW}Meowuu7/GeneOH-Diffusion/f14a566ec7005caf5047b718bddcfcf46537ffb5/data/taco/source_data/{n}"
        for n in ("20231104_010.obj", "20231104_010.pkl", "20231104_017.obj", "20231104_017.pkl"))
    assert all("/KevinyWu/manosim/c96e2d5cd70838a2b025b60b85a7e4e06af1b3ac/" in u
               for u in fake.urls if "manosim" in u)
    man = Manifest(dest).files
    for key, entry in man.items():
        assert entry["source"] == "github"
        assert hashlib.sha256((dest / key).read_bytes()).hexdigest() == entry["sha256"]
        assert hashlib.sha256((mirror / key).read_bytes()).hexdigest() == entry["sha256"]
    # resumable: a re-run requests nothing
    fake.urls.clear()
    assert fetch("taco", dest, progress=False)[0].skipped == n_taco
    assert fake.urls == []


def test_github_grab_objects_url_layout(mirror, tmp_path, monkeypatch):
    """GRAB needs two repositories: recordings from t800_retargeting, meshes from object_sim."""
    fake = FakeGitHub(mirror)
    monkeypatch.setattr(urllib.request, "urlopen", fake)
    monkeypatch.delenv("REPLAY_MIRROR", raising=False)
    fetch("grab", tmp_path / "data", progress=False)
    assert f"{RAW}fflahm/t800_retargeting/7d5ef23c505ca4a30c224da7abf6387da9cf2c6c/data/grab/s1/mug_lift.pkl" \
        in fake.urls
    assert f"{RAW}vikashplus/object_sim/5257bbdbe7e3af32aae5ad67ffa1d4402ac2e871/mug/contact13.stl" in fake.urls
    assert f"{RAW}vikashplus/object_sim/5257bbdbe7e3af32aae5ad67ffa1d4402ac2e871/common.xml" in fake.urls
    # the 10 recordings of other intents come from the same repository, commit and folder
    assert f"{RAW}fflahm/t800_retargeting/7d5ef23c505ca4a30c224da7abf6387da9cf2c6c/data/grab/s1/mug_pass_1.pkl" \
        in fake.urls
    assert len(fake.urls) == len(set(fake.urls)) == len(pinned_files("grab"))  # one request per pinned file


def test_tampered_download_is_rejected(mirror, tmp_path, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", FakeGitHub(mirror, tamper="20231104_017.pkl"))
    monkeypatch.delenv("REPLAY_MIRROR", raising=False)
    dest = tmp_path / "data"
    with pytest.raises(IntegrityError, match="20231104_017.pkl"):
        fetch("taco", dest, progress=False)
    assert not (dest / "taco" / "20231104_017.pkl").exists()
    assert not list((dest / "taco").glob(".*part*"))
    assert "taco/20231104_017.pkl" not in Manifest(dest).files


def test_no_network_names_source_and_suggests_mirror(tmp_path, monkeypatch):
    err = urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution"))
    monkeypatch.setattr(urllib.request, "urlopen", FakeGitHub(tmp_path, fail=err))
    monkeypatch.delenv("REPLAY_MIRROR", raising=False)
    with pytest.raises(FetchError) as info:
        fetch("manosim", tmp_path / "data", progress=False)
    msg = str(info.value)
    assert "raw.githubusercontent.com" in msg and "KevinyWu/manosim@c96e2d5" in msg and "--mirror" in msg


def test_missing_upstream_file_is_a_404_message(mirror, tmp_path, monkeypatch):
    fake = FakeGitHub(mirror)
    fake.index = {k: v for k, v in fake.index.items() if not k[2].endswith("20231104_010.obj")}
    monkeypatch.setattr(urllib.request, "urlopen", fake)
    monkeypatch.delenv("REPLAY_MIRROR", raising=False)
    with pytest.raises(FetchError, match="404.*20231104_010.obj is not in Meowuu7/GeneOH-Diffusion"):
        fetch("taco", tmp_path / "data", progress=False)
