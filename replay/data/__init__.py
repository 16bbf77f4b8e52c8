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

:func:`load_recording` and :func:`list_sequences` dispatch by dataset name.
"""

from __future__ import annotations

from pathlib import Path

from replay.data.locate import dataset_dir
from replay.data.types import Recording
from replay.errors import DataError

#: Folder under ``hug-bench/`` holding ``<split>/<scene>/aria_data.pkl`` (see replay.data.hub).
HUG_RECORDINGS_DIR = "scenes"

#: Datasets with an adapter.
RECORDING_DATASETS = ("grab", "taco", "hug-bench")


def _hug_scenes(root: Path) -> list[str]:
    # HUG recordings as fetch_data.py stages them: <root>/scenes/<split>/<scene>/aria_data.pkl.
    rec_root = root / HUG_RECORDINGS_DIR
    return sorted(str(p.parent.relative_to(rec_root)) for p in rec_root.glob("*/*/aria_data.pkl"))


def list_sequences(dataset: str, data_dir: str | Path | None = None) -> list[str]:
    """Names accepted by :func:`load_recording` for ``dataset``, sorted.

    * ``grab``: ``<object>_lift`` (files ``grab/recordings/<name>.pkl``).
    * ``taco``: ``<seq>`` (files ``taco/<seq>.pkl`` + ``taco/<seq>.obj``).
    * ``hug-bench``: ``<split>/<scene>`` (files ``hug-bench/scenes/<split>/<scene>/aria_data.pkl``).

    Raises:
        DataError: unknown dataset, or dataset not found (see :func:`dataset_dir`).
    """
    if dataset not in RECORDING_DATASETS:
        raise DataError(None, "dataset", f"no adapter for {dataset!r}; choose from {', '.join(RECORDING_DATASETS)}")
    root = dataset_dir(dataset, data_dir)
    if dataset == "grab":
        return sorted(p.stem for p in (root / "recordings").glob("*.pkl"))
    if dataset == "taco":
        return sorted(p.stem for p in root.glob("*.pkl"))
    return _hug_scenes(root)


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
    if checks:
        from replay.input_checks import check_recording

        rec = check_recording(rec)
    return rec


def _load(dataset: str, name: str, data_dir: str | Path | None = None, **kwargs) -> Recording:
    if dataset not in RECORDING_DATASETS:
        raise DataError(None, "dataset", f"no adapter for {dataset!r}; choose from {', '.join(RECORDING_DATASETS)}")
    root = dataset_dir(dataset, data_dir)
    if dataset == "grab":
        from replay.data.grab import load_grab

        path = root / "recordings" / f"{name}.pkl"
        if not path.is_file():
            raise DataError(path, None, f"no GRAB sequence {name!r}; available: {', '.join(list_sequences('grab', data_dir))}")
        return load_grab(path, root / "objects", **kwargs)
    if dataset == "taco":
        from replay.data.taco import load_taco

        path = root / f"{name}.pkl"
        if not path.is_file():
            raise DataError(path, None, f"no TACO sequence {name!r}; available: {', '.join(list_sequences('taco', data_dir))}")
        return load_taco(path, **kwargs)
    from replay.data.hug import load_hug

    path = root / HUG_RECORDINGS_DIR / name / "aria_data.pkl"
    if not path.is_file():
        raise DataError(path, None, f"no HUG-Bench scene {name!r} (expected {HUG_RECORDINGS_DIR}/<split>/<scene>/aria_data.pkl)")
    return load_hug(path, hug_scene_assets(root, name), **kwargs)


def hug_scene_assets(root: Path, name: str) -> Path:
    """Object folder of HUG scene ``name`` (``<split>/<scene>``): ``<root>/hug_bench/<split>/<scene>``
    (the Hub's layout, as fetch_data.py stages it)."""
    return Path(root) / "hug_bench" / name
