"""SHA-256 of the input files a rollout read and whether they changed since (``--resume``); ``pinned`` from the
project's pin list, never the data's ``MANIFEST.json`` (docs/data.md)."""

from __future__ import annotations

import os
from pathlib import Path

from replay.data.limits import load_json
from replay.data.sources import MIRROR_ALIASES, pin_digests
from replay.fileio import sha256_file


def input_hashes(paths: list[Path], data_dir: str | None) -> dict:
    """SHA-256 of every input file as it is now: ``{key: {"sha256", "from": "hashed", "pinned", "manifest"}}`` (plus
    ``"pin_mismatch": True``); ``key`` relative to ``data_dir`` if under it, else absolute; ``manifest``: ``"match"``,
    ``"changed since staging"`` or ``"not staged"``. Raises DataError: an unreadable manifest or pin list."""
    manifest = {}
    root = None
    if data_dir is not None:
        root = Path(data_dir).resolve()
        mpath = root / "MANIFEST.json"
        if mpath.is_file():
            doc = load_json(mpath, "the data manifest")
            manifest = doc.get("files", {}) if isinstance(doc, dict) else {}
            manifest = manifest if isinstance(manifest, dict) else {}
    pins = pin_digests()
    out = {}
    for p in paths:
        p = Path(p).resolve()
        key = _relative(p, root) or str(p)
        digest = sha256_file(p)
        entry = manifest.get(key)
        if not isinstance(entry, dict) or "sha256" not in entry:
            state, claimed = "not staged", False
        else:
            state = "match" if entry["sha256"] == digest else "changed since staging"
            claimed = entry.get("pinned", entry.get("repo", "unknown") != "unknown") is True
        pin = pins.get(_pin_key(p, key))
        out[key] = {"sha256": digest, "from": "hashed", "pinned": pin == digest, "manifest": state}
        if (pin is not None or claimed) and pin != digest:
            out[key]["pin_mismatch"] = True
    return out


def _relative(p: Path, root: Path | None) -> str | None:
    """``p`` relative to ``root`` (POSIX), or None when it does not lie under it."""
    return p.relative_to(root).as_posix() if root is not None and p.is_relative_to(root) else None


def _pin_key(p: Path, key: str) -> str:
    """The pin-list key of an input: ``key`` if relative, else its path in ``$REPLAY_MIRROR``."""
    if not Path(key).is_absolute():
        return key
    mirror = os.environ.get("REPLAY_MIRROR")
    rel = _relative(p, Path(mirror).resolve()) if mirror else None
    if rel is None:
        return key
    for src, dst in MIRROR_ALIASES.items():
        if rel.startswith(src + "/"):
            return dst + rel[len(src) :]
    return rel


def pin_mismatch_lines(inputs: dict) -> list[str]:
    """One line per input whose SHA-256 is not the project's pin."""
    return [
        f"{key}: SHA-256 {e.get('sha256', '')[:12]}… is not the project's pin for it "
        "(replay/data/pinned_files.json; the data's own manifest is not believed): recorded as pinned: false, "
        "pin_mismatch: true"
        for key, e in inputs.items()
        if isinstance(e, dict) and e.get("pin_mismatch")
    ]


def inputs_changed(inputs: dict | None, data_dir: str | Path | None) -> str | None:
    """Why a finished rollout's ``inputs`` differ from the files on disk, or None; none recorded counts as changed."""
    inputs = inputs or {}
    if not inputs:
        return "no input digests recorded"
    for key, entry in inputs.items():
        p = Path(key) if Path(key).is_absolute() or data_dir is None else Path(data_dir) / key
        if not p.is_file():
            return f"{key} is gone"
        if sha256_file(p) != entry.get("sha256"):
            return f"{key} changed"
    return None
