"""Data layer: where datasets live, how they are read, and their canonical form.

* :mod:`replay.data.locate` - resolve a dataset's folder (``data/`` after fetch, or the
  offline mirror given by ``REPLAY_MIRROR``).
* :mod:`replay.data.types` - the canonical :class:`Recording` / :class:`ObjectAsset`.
* :mod:`replay.data.sources` - pinned upstream sources (GitHub commits, Hub repos).
* :mod:`replay.data.fetch` - :func:`~replay.data.fetch.fetch`: stage datasets from a mirror,
  GitHub or the Hub (:mod:`replay.data.hub`) into ``data/``.
* :mod:`replay.data.manifest` - ``data/MANIFEST.json`` and :func:`~replay.data.manifest.verify`.
* :mod:`replay.data.safe_pickle` - restricted unpickler for untrusted dataset pickles.
* :mod:`replay.data.objects` - object asset loaders (GRAB MJCF, TACO + CoACD, HUG sim_assets).
* :mod:`replay.data.grab`, :mod:`replay.data.taco`, :mod:`replay.data.hug` - adapters.

:func:`load_recording` and :func:`list_sequences` dispatch by dataset name through the
registry :mod:`replay.datasets`.
"""

from __future__ import annotations

from pathlib import Path

from replay import datasets
from replay.data.locate import dataset_dir
from replay.data.types import Recording

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


def load_recording(dataset: str, name: str, data_dir: str | Path | None = None, checks: bool = True,
                   **kwargs) -> Recording:
    """Load sequence ``name`` of ``dataset`` into the canonical :class:`Recording`.

    With ``checks`` (default) the recording then passes :func:`replay.input_checks.check_recording`:
    untracked frames are marked in ``valid``, the hand side is checked against the landmarks,
    and too few / too sparse / too fast frames, object scale, mass and placement are input
    errors; named flags go to ``meta["input_flags"]``.

    Args:
        dataset: ``"grab"``, ``"taco"`` or ``"hug-bench"``.
        name: a name from :func:`list_sequences`.
        data_dir: staged data folder (default ``data/`` or ``$REPLAY_DATA``; falls back to
            ``$REPLAY_MIRROR``), see :func:`replay.data.locate.dataset_dir`.
        **kwargs: passed to the adapter (e.g. ``hand="left"`` for HUG-Bench).

    Raises:
        DataError: unknown dataset or sequence, any adapter error (file + field), or
            (``checks``) an input error of :mod:`replay.input_checks`.
    """
    rec = _load(dataset, name, data_dir, **kwargs)
    if checks:  # imported here: replay.input_checks reads assets through this package's modules
        from replay.input_checks import check_recording

        rec = check_recording(rec)
    return rec


def _load(dataset: str, name: str, data_dir: str | Path | None = None, **kwargs) -> Recording:
    ds = datasets.dataset(dataset)
    return ds.load(dataset_dir(dataset, data_dir), name, **kwargs)
