"""``data/MANIFEST.json`` (``format`` 1): per staged file (key ``<dataset>/<relpath>``) its source, revision, size,
SHA-256, link mode, ``pinned`` and ``origin`` (fields: docs/data.md); written atomically."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from replay import console
from replay.data.confine import safe_relpath
from replay.data.limits import load_json
from replay.data.sources import pin_digests
from replay.errors import DataError
from replay.fileio import atomic_write_text, sha256_file

MANIFEST_NAME = "MANIFEST.json"
FORMAT = 1
SOURCES = ("mirror", "github", "hub", "local")
_REQUIRED = ("dataset", "source", "repo", "revision", "path", "size", "sha256")


def move_aside(path: Path) -> Path:
    """Rename a bad file to ``<name>.corrupt-<unix time>``; the new path."""
    target = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    n = 1
    while target.exists() or target.is_symlink():
        target = path.with_name(f"{path.name}.corrupt-{int(time.time())}-{n}")
        n += 1
    os.replace(path, target)
    return target


@dataclass(frozen=True)
class Problem:
    """A staged file not matching its entry: ``kind`` ``"missing"``, ``"size"``, ``"sha256"`` or ``"pin"`` (called
    pinned, not in the pin list); ``moved_to`` None if missing or left alone."""

    path: str
    kind: str
    expected: str
    actual: str
    moved_to: Path | None = None

    def describe(self) -> str:
        if self.kind == "missing":
            return f"{self.path}: listed in the manifest but missing on disk"
        if self.kind == "pin":
            pin = "the pin list does not name it" if self.expected == "-" else f"the pin list has {self.expected[:12]}…"
            return (
                f"{self.path}: the manifest calls it pinned, but its SHA-256 {self.actual[:12]}… is not the "
                f"project's pin ({pin}, replay/data/pinned_files.json); recorded as pinned: false, pin_mismatch: true"
            )
        msg = f"{self.path}: {self.kind} mismatch (manifest {self.expected}, on disk {self.actual})"
        if self.moved_to is not None:
            msg += f"; moved aside to {self.moved_to.name}"
        return msg


class Manifest:
    """The staging root's ``MANIFEST.json``: relative path -> entry; raises DataError on a malformed existing one."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.path = self.root / MANIFEST_NAME
        self.files: dict[str, dict] = {}
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        try:  # bounded: a shipped manifest nested 100,000 deep is one line, not a RecursionError
            data = load_json(self.path)
        except DataError as exc:
            raise DataError(self.path, None, f"{exc.message}; delete it and re-run the fetch") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
            raise DataError(self.path, "format", f"expected a format-{FORMAT} manifest with a 'files' object")
        for key, entry in data["files"].items():
            missing = [k for k in _REQUIRED if not isinstance(entry, dict) or k not in entry]
            if missing:
                raise DataError(self.path, f"files.{key}", f"entry lacks {', '.join(missing)}")
            if entry["path"] != key:
                raise DataError(self.path, f"files.{key}.path", f"does not match its key ({entry['path']!r})")
            if Path(key).is_absolute() or ".." in Path(key).parts:
                raise DataError(self.path, f"files.{key}", "path must be relative to the staging root")
        self.files = data["files"]

    def save(self) -> None:
        """Write the manifest atomically, keys sorted."""
        self.root.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"format": FORMAT, "files": dict(sorted(self.files.items()))}, indent=1, sort_keys=True)
        atomic_write_text(self.path, text + "\n")

    def add(
        self,
        *,
        dataset: str,
        source: str,
        repo: str,
        revision: str,
        path: str,
        size: int,
        sha256: str,
        upstream_path: str | None = None,
        link: str = "copy",
        pinned: bool | None = None,
        origin: str | None = None,
        symlink_target: str | None = None,
    ) -> None:
        """Record one staged file; ``pinned`` None: a dataset without a pin list; ``origin``: the absolute source path.
        Raises ValueError: unknown ``source``; DataError: a ``path`` leaving the staging root (``path_escape``)."""
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
        safe_relpath(path, self.path, f"files.{path}")
        self.files[path] = {
            "dataset": dataset,
            "source": source,
            "repo": repo,
            "revision": revision,
            "path": path,
            "size": int(size),
            "sha256": sha256,
            "upstream_path": upstream_path,
            "link": link,
            "pinned": pinned,
            "origin": origin,
        }
        if symlink_target is not None:
            self.files[path]["symlink_target"] = symlink_target

    def for_dataset(self, dataset: str) -> dict[str, dict]:
        return {k: v for k, v in self.files.items() if v["dataset"] == dataset}

    def check(self, key: str, *, fix: bool = True) -> Problem | None:
        """Re-hash one staged file: None if it matches, else the :class:`Problem`; ``fix`` moves it aside."""
        entry = self.files[key]
        path = self.root / key
        problem = None
        if not path.exists():
            problem = Problem(key, "missing", entry["sha256"], "-")
        elif path.stat().st_size != entry["size"]:
            problem = Problem(key, "size", str(entry["size"]), str(path.stat().st_size))
        else:
            digest = sha256_file(path)
            if digest != entry["sha256"]:
                problem = Problem(key, "sha256", entry["sha256"], digest)
        if problem is not None and fix:
            moved = move_aside(path) if problem.kind != "missing" else None
            del self.files[key]
            problem = Problem(problem.path, problem.kind, problem.expected, problem.actual, moved)
        return problem


def verify(
    root: str | Path, datasets: list[str] | None = None, *, fix: bool = True, progress: bool | None = None
) -> list[Problem]:
    """Re-hash every staged file of ``root/MANIFEST.json`` (``datasets``: only these), and every ``pinned`` entry
    against the project's pin list; ``fix`` moves bad files aside. Returns the problems. Raises DataError: no or a
    malformed manifest or pin list."""

    man = Manifest(root)
    if not man.path.exists():
        raise DataError(man.path, None, "no manifest; run scripts/fetch_data.py first")
    keys = [k for k, v in man.files.items() if datasets is None or v["dataset"] in datasets]
    problems = []
    pins = pin_digests()
    for key in console.bar(progress, iterable=keys, desc="verify", unit="file"):
        p = man.check(key, fix=fix) or _pin_problem(man, key, pins, fix)
        if p is not None:
            problems.append(p)
    if problems and fix:
        man.save()
    return problems


def _pin_problem(man: Manifest, key: str, pins: dict[str, str], fix: bool) -> Problem | None:
    """An entry claiming ``pinned`` whose SHA-256 is not the pin; ``fix`` rewrites it ``pinned: false,
    pin_mismatch: true`` (the file may be the user's own edit)."""
    entry = man.files[key]
    pin = pins.get(key)
    # an entry from before the flag existed (pinned files only) claims it by lying at a pinned path
    claims = entry.get("pinned") is True or (entry.get("pinned") is None and pin is not None)
    if not claims or pin == entry["sha256"]:
        return None
    if fix:
        entry["pinned"], entry["pin_mismatch"] = False, True
    return Problem(key, "pin", pin or "-", entry["sha256"])
