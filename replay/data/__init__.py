"""Data layer: where datasets live, how they are read, their canonical form (``types.py``) and how they are
staged (``fetch.py``); :func:`read_recording` and :func:`list_sequences` dispatch through :mod:`replay.datasets`."""

from __future__ import annotations

from pathlib import Path

from replay import datasets
from replay.data.adapters import ADAPTERS
from replay.data.locate import dataset_dir
from replay.data.types import Recording

datasets.register_adapters(ADAPTERS)  # the registry below is filled from here, above it

RECORDING_DATASETS = datasets.RECORDING_DATASETS


def list_sequences(dataset: str, data_dir: str | Path | None = None) -> list[str]:
    """Names :func:`read_recording` accepts for ``dataset``, sorted: ``grab`` ``<object>_lift`` and
    ``<object>_<intent>_<n>``; ``taco`` ``<seq>``; ``hug-bench`` ``<split>/<scene>``.

    Raises:
        DataError: unknown dataset, or dataset not found (:func:`dataset_dir`).
    """
    ds = datasets.dataset(dataset)
    return ds.sequences(dataset_dir(dataset, data_dir))


def read_recording(dataset: str, name: str, data_dir: str | Path | None = None, **kwargs) -> Recording:
    """Read sequence ``name`` of ``dataset`` as its adapter gives it, without input checks (a replay calls
    :func:`replay.checks.load_recording`); ``kwargs`` go to the adapter (e.g. ``hand="left"`` for HUG-Bench).

    Raises:
        DataError: unknown dataset or sequence, or any adapter error (file + field).
    """
    ds = datasets.dataset(dataset)
    return ds.load(dataset_dir(dataset, data_dir), name, **kwargs)
