"""SHA-256 of the input files a rollout read, and whether they changed since.

A study records, in every rollout JSON's ``inputs``, the digest of each file the rollout
read (recording, object meshes, hand MJCF), hashed when it runs (never copied from the
manifest), with the manifest's ``pinned`` flag and whether the file still matches its
staged digest; ``--resume`` re-hashes them (:func:`inputs_changed`) and reruns a
recording whose inputs changed.
"""

from __future__ import annotations

import json
from pathlib import Path

from replay.errors import DataError
from replay.fileio import sha256_file


def input_hashes(paths: list[Path], data_dir: str | None) -> dict:
    """SHA-256 of every input file as it is now (hashed, never copied from the manifest).

    Returns:
        ``{key: {"sha256", "from": "hashed", "pinned", "manifest"}}``; ``key`` is the path
        relative to ``data_dir`` where the file lies under it, else absolute. ``manifest``
        says how the digest compares with ``<data_dir>/MANIFEST.json``: ``"match"``,
        ``"changed since staging"`` (the file was modified after the fetch) or
        ``"not staged"``; ``pinned`` is the manifest's flag (``None`` when not staged).

    Raises:
        DataError: an unreadable manifest.
    """
    manifest = {}
    root = None
    if data_dir is not None:
        root = Path(data_dir).resolve()
        mpath = root / "MANIFEST.json"
        if mpath.is_file():
            try:
                manifest = json.loads(mpath.read_text()).get("files", {})
            except (OSError, json.JSONDecodeError) as e:
                raise DataError(mpath, None, f"cannot read manifest: {e}") from e
    out = {}
    for p in paths:
        p = Path(p).resolve()
        key = str(p)
        if root is not None:
            try:
                key = p.relative_to(root).as_posix()
            except ValueError:
                pass
        digest = sha256_file(p)
        entry = manifest.get(key)
        if entry is None or "sha256" not in entry:
            state, pinned = "not staged", None
        else:
            state = "match" if entry["sha256"] == digest else "changed since staging"
            pinned = entry.get("pinned", True if entry.get("repo", "unknown") != "unknown" else False)
        out[key] = {"sha256": digest, "from": "hashed", "pinned": pinned, "manifest": state}
    return out


def inputs_changed(doc: dict, data_dir: str | Path | None) -> str | None:
    """Why a finished rollout's inputs differ from the files now on disk, or None.

    Re-hashes every file of ``doc["inputs"]`` (:func:`input_hashes` keys: relative to
    ``data_dir`` or absolute); a rollout without recorded inputs counts as changed.
    """
    inputs = doc.get("inputs") or {}
    if not inputs:
        return "no input digests recorded"
    for key, entry in inputs.items():
        p = Path(key) if Path(key).is_absolute() or data_dir is None else Path(data_dir) / key
        if not p.is_file():
            return f"{key} is gone"
        if sha256_file(p) != entry.get("sha256"):
            return f"{key} changed"
    return None
