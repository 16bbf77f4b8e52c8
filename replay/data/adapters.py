"""The dataset adapters ``(path, root, name, **kwargs) -> Recording``, registered in :mod:`replay.datasets`: GRAB's
objects in ``<root>/objects``, TACO's mesh beside it, HUG-Bench's scene ``name`` in ``<root>/hug_bench/<name>``."""

from __future__ import annotations

from pathlib import Path


def read_grab(path: Path, root: Path, name: str, **kwargs):
    from replay.data.grab import load_grab

    return load_grab(path, Path(root) / "objects", **kwargs)


def read_taco(path: Path, root: Path, name: str, **kwargs):
    from replay.data.taco import load_taco

    return load_taco(path, **kwargs)


def read_hug(path: Path, root: Path, name: str, **kwargs):
    from replay.data.hug import load_hug

    return load_hug(path, Path(root) / "hug_bench" / name, **kwargs)


ADAPTERS = {"grab": read_grab, "taco": read_taco, "hug-bench": read_hug}
