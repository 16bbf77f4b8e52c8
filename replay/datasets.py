"""What the pipeline knows about each dataset (:data:`DATASETS`): name, recordings, adapter, per-dataset defaults;
:mod:`replay.data` registers the adapters on import."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from replay.errors import DataError


@dataclass(frozen=True)
class Dataset:
    """One dataset of recordings.

    Attributes:
        name: its folder in ``data/`` and the mirror, and the ``--dataset`` value.
        pattern: glob of its recordings below its folder; a name is the path less the pattern's fixed prefix and suffix
            (HUG-Bench ``scenes/<split>/<scene>/aria_data.pkl`` -> ``<split>/<scene>``).
        hand_variant: the default ``hand_shape`` (docs/hand.md). fitted_hand: what ``fitted`` is: ``"landmarks"`` or an
            authored shape.
        flat_hand_mean: MANO finger values relative to the flat hand where files do not say (None: no MANO pose).
        names_object: names are ``<object>_<intent>`` (GRAB)."""

    name: str
    label: str
    pattern: str
    hand_variant: str
    fitted_hand: str
    flat_hand_mean: bool | None = None
    names_object: bool = False

    def _ends(self) -> tuple[str, str]:
        return self.pattern.split("*", 1)[0], self.pattern.rsplit("*", 1)[1]

    def sequences(self, root: Path) -> list[str]:
        """Names of the recordings below ``root``, sorted."""
        head, tail = self._ends()
        rels = (p.relative_to(root).as_posix() for p in Path(root).glob(self.pattern))
        return sorted(r[len(head) : len(r) - len(tail)] for r in rels)

    def path(self, root: Path, name: str) -> Path:
        head, tail = self._ends()
        return Path(root) / f"{head}{name}{tail}"

    def load(self, root: Path, name: str, **kwargs):
        """Recording ``name`` through its adapter; DataError: no such recording (staged ones listed), no adapter."""
        path = self.path(root, name)
        if not path.is_file():
            have = self.sequences(root)
            raise DataError(
                path,
                None,
                f"no {self.label} sequence {name!r} (expected {self.pattern}); available: "
                f"{', '.join(have) if have else 'none staged'}",
            )
        fn = _ADAPTERS.get(self.name)
        if fn is None:
            raise DataError(
                path,
                None,
                f"no adapter registered for {self.label} (replay.data registers them on "
                "import: read recordings through replay.data.read_recording)",
            )
        return fn(path, Path(root), name, **kwargs)


#: every dataset with recordings, in the order scripts list them
DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset("grab", "GRAB", "recordings/*.pkl", "zerohand", "landmarks", names_object=True),
        Dataset("taco", "TACO", "*.pkl", "zerohand", "zerohand", flat_hand_mean=True),
        Dataset("hug-bench", "HUG-Bench", "scenes/*/*/aria_data.pkl", "myhand", "myhand", flat_hand_mean=True),
    )
}
#: dataset name -> adapter ``(path, root, name, **kwargs) -> Recording``; filled by replay.data
_ADAPTERS: dict[str, Callable] = {}


def register_adapters(adapters: dict[str, Callable]) -> None:
    """Register each dataset's adapter; DataError for a name not in :data:`DATASETS`."""
    unknown = sorted(set(adapters) - set(DATASETS))
    if unknown:
        raise DataError(
            None,
            "dataset",
            f"adapter for unknown dataset(s) {', '.join(unknown)}; add them to replay.datasets.DATASETS first",
        )
    _ADAPTERS.update(adapters)


#: ``--dataset`` values of the replay stages
RECORDING_DATASETS = tuple(DATASETS)
#: the hand models' dataset (fetched and located like the others, no recordings)
HAND_DATASET = "manosim"
#: what ``fetch_data.py --dataset all`` stages, in order
FETCH_ORDER = (HAND_DATASET, *RECORDING_DATASETS)


def dataset(name: str) -> Dataset:
    """The :class:`Dataset` called ``name``; DataError (listing the known ones) if none."""
    try:
        return DATASETS[name]
    except KeyError:
        raise DataError(None, "dataset", f"no adapter for {name!r}; choose from {', '.join(DATASETS)}") from None
