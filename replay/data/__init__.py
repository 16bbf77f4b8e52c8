"""Data layer: where datasets live, how they are read, their canonical form (``types.py``) and how they are staged."""

from __future__ import annotations

from pathlib import Path

from replay import datasets
from replay.data.adapters import ADAPTERS
from replay.data.locate import dataset_dir
from replay.data.types import Recording

datasets.register_adapters(ADAPTERS)  # the registry below is filled from here, above it


def list_sequences(dataset: str, data_dir: str | Path | None = None) -> list[str]:
    """Names :func:`read_recording` accepts, sorted: ``grab`` ``<object>_lift``, ``<object>_<intent>_<n>``; ``taco``
    ``<seq>``; ``hug-bench`` ``<split>/<scene>``. Raises DataError: unknown or missing dataset."""
    ds = datasets.dataset(dataset)
    return ds.sequences(dataset_dir(dataset, data_dir))


def read_recording(dataset: str, name: str, data_dir: str | Path | None = None, **kwargs) -> Recording:
    """Sequence ``name`` as its adapter gives it, without input checks (:func:`replay.checks.load_recording` adds
    them); ``kwargs`` to the adapter (``hand="left"``). Raises DataError: unknown dataset or name, an adapter error."""
    ds = datasets.dataset(dataset)
    return ds.load(dataset_dir(dataset, data_dir), name, **kwargs)
