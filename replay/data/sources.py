"""Pinned upstream sources of every dataset: GitHub repositories at fixed commits with each file's size and SHA-256 in
``pinned_files.json`` (``scripts/pin_sources.py``), and the Hub repositories of HUG-Bench."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from replay.errors import DataError

PINS_PATH = Path(__file__).with_name("pinned_files.json")


@dataclass(frozen=True)
class GitHubSource:
    """One GitHub repository at a fixed 40-hex ``commit`` feeding folder ``local_prefix`` of a dataset ("": its root)
    from ``upstream_prefix``; ``what``: one line for the README's data-source table."""

    dataset: str
    local_prefix: str
    repo: str
    commit: str
    upstream_prefix: str
    license: str
    what: str

    def owns(self, relpath: str) -> bool:
        """Whether ``relpath`` (relative to the dataset folder) comes from this source."""
        return not self.local_prefix or relpath.startswith(self.local_prefix + "/")

    def upstream_path(self, relpath: str) -> str:
        """``relpath``'s path upstream."""
        tail = relpath[len(self.local_prefix) + 1 :] if self.local_prefix else relpath
        return f"{self.upstream_prefix}/{tail}" if self.upstream_prefix else tail

    def raw_url(self, relpath: str) -> str:
        """HTTPS raw-file URL of ``relpath`` at the pinned commit."""
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.upstream_path(relpath)}"

    @property
    def repo_url(self) -> str:
        return f"https://github.com/{self.repo}"


#: Ordered so that the more specific ``local_prefix`` of a dataset comes first.
GITHUB_SOURCES: tuple[GitHubSource, ...] = (
    GitHubSource(
        dataset="manosim",
        local_prefix="",
        repo="KevinyWu/manosim",
        commit="c96e2d5cd70838a2b025b60b85a7e4e06af1b3ac",
        upstream_prefix="",
        license="MIT",
        what="MANO hand MJCF (capsule/mesh, right/left, myhand/zerohand), bone meshes, build configs",
    ),
    GitHubSource(
        dataset="grab",
        local_prefix="recordings",
        repo="fflahm/t800_retargeting",
        commit="7d5ef23c505ca4a30c224da7abf6387da9cf2c6c",
        upstream_prefix="data/grab/s1",
        license="GRAB license (research use); repository has no top-level license",
        what="30 GRAB subject-s1 right-hand lift recordings `<object>_lift.pkl` and 10 of other intents "
        "`<object>_<intent>_<n>.pkl` (pass, drink, pour, offhand, use, inspect, ...)",
    ),
    GitHubSource(
        dataset="grab",
        local_prefix="objects",
        repo="vikashplus/object_sim",
        commit="5257bbdbe7e3af32aae5ad67ffa1d4402ac2e871",
        upstream_prefix="",
        license="Apache-2.0",
        what="MuJoCo models of the 30 GRAB objects those recordings use, the table, common.xml, LICENSE",
    ),
    GitHubSource(
        dataset="taco",
        local_prefix="",
        repo="Meowuu7/GeneOH-Diffusion",
        commit="f14a566ec7005caf5047b718bddcfcf46537ffb5",
        upstream_prefix="data/taco/source_data",
        license="repository MIT; TACO data terms apply",
        what="2 TACO sequences (MANO parameters, object pose) with their object meshes",
    ),
)

PINNED_DATASETS = frozenset(s.dataset for s in GITHUB_SOURCES)

#: ``{mirror folder: staging folder}`` of pinned files the mirror keeps elsewhere (GRAB's other intents)
MIRROR_ALIASES: dict[str, str] = {"grab_intents/recordings": "grab/recordings"}


@dataclass(frozen=True)
class HubRepo:
    """A Hub dataset repository and its default revision: a 40-hex commit, or None (a fetch needs ``--revision``)."""

    repo_id: str
    revision: str | None
    license: str
    what: str
    repo_type: str = "dataset"

    @property
    def repo_url(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo_id}"


#: HUG-Bench object assets: no commit could be confirmed offline, so a fetch needs ``--revision <commit>``
HUG_BENCH_ASSETS = HubRepo(
    repo_id="kevinywu/hug-bench",
    revision=None,
    license="CC BY 4.0",
    what="object assets `hug_bench/<split>/<scene>/<object>/sim_assets/` (visual.obj, CoACD parts, properties.json)",
)
#: 1M-HUGs recordings at the revision public HUG users cite (not checked against the Hub from here)
HUG_RECORDINGS = HubRepo(
    repo_id="kevinywu/1m-hugs",
    revision="56ea3f100b1a4ec38bb35e986c0dd14d38977283",
    license="CC BY 4.0",
    what="only `aria_data.pkl` of each selected scene (streamed out of the scene tar, never the whole tar)",
)

HUG_SPLITS = ("val", "test")


@dataclass(frozen=True)
class PinnedFile:
    dataset: str
    relpath: str  # relative to the dataset folder
    size: int
    sha256: str
    source: GitHubSource
    mirror_path: str | None = None  # where a mirror keeps it when not at ``path`` (MIRROR_ALIASES)

    @property
    def path(self) -> str:
        """``<dataset>/<relpath>``: the manifest key."""
        return f"{self.dataset}/{self.relpath}"


def is_hidden(rel: str) -> bool:
    """True for a ``/``-separated path with a dot-named part (``.git``, temp files): never pinned or staged."""
    return any(part.startswith(".") for part in rel.split("/"))


def github_source_for(dataset: str, relpath: str) -> GitHubSource:
    """The GitHub source a dataset file comes from; raises DataError when none of ``dataset`` covers ``relpath``."""
    for src in GITHUB_SOURCES:
        if src.dataset == dataset and src.owns(relpath):
            return src
    raise DataError(PINS_PATH, f"{dataset}/{relpath}", "no pinned upstream source covers this path")


@lru_cache(maxsize=1)
def _load_pins() -> dict:
    p = PINS_PATH
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise DataError(p, None, "pin list missing; regenerate it with scripts/pin_sources.py") from None
    except json.JSONDecodeError as exc:
        raise DataError(p, None, f"not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise DataError(p, "files", "expected an object mapping '<dataset>/<relpath>' to {size, sha256}")
    return data


def pin_digests() -> dict[str, str]:
    """``{"<dataset>/<relpath>": SHA-256}`` of the project's pin list, the one source of ``pinned: true``. Raises
    DataError: a missing or malformed list."""
    files = _load_pins()["files"]
    return {k: str(v.get("sha256")) for k, v in files.items() if isinstance(v, dict)}


def pinned_files(dataset: str) -> list[PinnedFile]:
    """Every pinned file of ``manosim``, ``grab`` or ``taco``, sorted by path. Raises DataError: unknown dataset or
    malformed pin list (field named)."""
    if dataset not in PINNED_DATASETS:
        raise DataError(None, "dataset", f"{dataset!r} has no pinned GitHub files")
    data = _load_pins()
    out = []
    for key, entry in sorted(data["files"].items()):
        ds, _, rel = key.partition("/")
        if ds != dataset:
            continue
        try:
            size, digest = int(entry["size"]), str(entry["sha256"])
        except (KeyError, TypeError, ValueError):
            raise DataError(PINS_PATH, f"files.{key}", "needs integer 'size' and 'sha256'") from None
        if len(digest) != 64:
            raise DataError(PINS_PATH, f"files.{key}.sha256", "not a SHA-256 hex digest")
        mpath = entry.get("mirror_path")
        if mpath is not None and not isinstance(mpath, str):
            raise DataError(PINS_PATH, f"files.{key}.mirror_path", "must be a path string")
        out.append(PinnedFile(ds, rel, size, digest, github_source_for(ds, rel), mpath))
    if not out:
        raise DataError(PINS_PATH, "files", f"no files pinned for {dataset!r}")
    return out
