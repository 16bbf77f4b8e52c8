"""The dataset adapters, one per entry of :data:`replay.datasets.DATASETS`, registered there
by :mod:`replay.data` when it is imported (the base layer never imports the data layer).

Each adapter is ``(path, root, name, **kwargs) -> Recording`` (:class:`replay.data.types.Recording`)
and imports its module only when called, so listing datasets costs no import of trimesh or
the pickle readers.
"""

from __future__ import annotations

from pathlib import Path


def read_grab(path: Path, root: Path, name: str, **kwargs):
    """A GRAB recording: :func:`replay.data.grab.load_recording`."""
    from replay.data.grab import load_recording

    return load_recording(path, root, name, **kwargs)


def read_taco(path: Path, root: Path, name: str, **kwargs):
    """A TACO recording: :func:`replay.data.taco.load_recording`."""
    from replay.data.taco import load_recording

    return load_recording(path, root, name, **kwargs)


def read_hug(path: Path, root: Path, name: str, **kwargs):
    """A HUG-Bench scene: :func:`replay.data.hug.load_recording`."""
    from replay.data.hug import load_recording

    return load_recording(path, root, name, **kwargs)


#: dataset name -> adapter
ADAPTERS = {"grab": read_grab, "taco": read_taco, "hug-bench": read_hug}
