"""The dataset adapters ``(path, root, name, **kwargs) -> Recording``, registered in :mod:`replay.datasets`."""

from __future__ import annotations

from pathlib import Path


def read_grab(path: Path, root: Path, name: str, **kwargs):
    from replay.data.grab import load_recording

    return load_recording(path, root, name, **kwargs)


def read_taco(path: Path, root: Path, name: str, **kwargs):
    from replay.data.taco import load_recording

    return load_recording(path, root, name, **kwargs)


def read_hug(path: Path, root: Path, name: str, **kwargs):
    from replay.data.hug import load_recording

    return load_recording(path, root, name, **kwargs)


ADAPTERS = {"grab": read_grab, "taco": read_taco, "hug-bench": read_hug}
