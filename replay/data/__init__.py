"""Data layer: where datasets live, how they are read, and their canonical form.

* :mod:`replay.data.locate` - resolve a dataset's folder (``data/`` after fetch, or the
  offline mirror given by ``REPLAY_MIRROR``).
* :mod:`replay.data.types` - the canonical :class:`Recording` / :class:`ObjectAsset`.
* :mod:`replay.data.sources` - pinned upstream sources (GitHub commits, Hub repos).
* :mod:`replay.data.fetch` - :func:`~replay.data.fetch.fetch`: stage datasets from a mirror,
  GitHub or the Hub (:mod:`replay.data.hub`) into ``data/`` (pinned files:
  :mod:`replay.data.stage_pinned`; the others: :mod:`replay.data.stage_unpinned`).
* :mod:`replay.data.manifest` - ``data/MANIFEST.json`` and :func:`~replay.data.manifest.verify`.
* :mod:`replay.data.safe_pickle` - restricted unpickler for untrusted dataset pickles.
* :mod:`replay.data.objects` - object asset loaders (GRAB MJCF: :mod:`replay.data.object_mjcf`,
  TACO + CoACD: :mod:`replay.data.coacd`, HUG sim_assets).
* :mod:`replay.data.grab`, :mod:`replay.data.taco`, :mod:`replay.data.hug` - adapters.

:func:`read_recording` and :func:`list_sequences` dispatch by dataset name through the
registry :mod:`replay.datasets`, which this package fills with its adapters
(:mod:`replay.data.adapters`) on import.
"""

from __future__ import annotations

from pathlib import Path

from replay import datasets
from replay.data.adapters import ADAPTERS
from replay.data.locate import dataset_dir
from replay.data.types import Recording

datasets.register_adapters(ADAPTERS)  # the registry below is filled from here, above it

#: Datasets with an adapter (:data:`replay.datasets.RECORDING_DATASETS`).
RECORDING_DATASETS = datasets.RECORDING_DATASETS


def list_sequences(dataset: str, data_dir: str | Path | None = None) -> list[str]:
    """Names accepted by :func:`load_recording` for ``dataset``, sorted
    (:meth:`replay.datasets.Dataset.sequences`):

    * ``grab``: ``<object>_lift``, ``<object>_<intent>_<n>`` (files ``grab/recordings/<name>.pkl``).
    * ``taco``: ``<seq>`` (files ``taco/<seq>.pkl`` + ``taco/<seq>.obj``).
    * ``hug-bench``: ``<split>/<scene>`` (files ``hug-bench/scenes/<split>/<scene>/aria_data.pkl``).

    Raises:
        DataError: unknown dataset, or dataset not found (see :func:`dataset_dir`).
    """
    ds = datasets.dataset(dataset)
    return ds.sequences(dataset_dir(dataset, data_dir))


def read_recording(dataset: str, name: str, data_dir: str | Path | None = None, **kwargs) -> Recording:
    """Read sequence ``name`` of ``dataset`` into the canonical :class:`Recording`, as its
    adapter gives it: no input checks (those live a layer up, in
    :func:`replay.checks.load_recording`, which is what a replay should call).

    Args:
        dataset: ``"grab"``, ``"taco"`` or ``"hug-bench"``.
        name: a name from :func:`list_sequences`.
        data_dir: staged data folder (default ``data/`` or ``$REPLAY_DATA``; falls back to
            ``$REPLAY_MIRROR``), see :func:`replay.data.locate.dataset_dir`.
        **kwargs: passed to the adapter (e.g. ``hand="left"`` for HUG-Bench).

    Raises:
        DataError: unknown dataset or sequence, or any adapter error (file + field).
    """
    ds = datasets.dataset(dataset)
    return ds.load(dataset_dir(dataset, data_dir), name, **kwargs)
