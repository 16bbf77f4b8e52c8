"""The one home of what the pipeline knows about each dataset: its name, where its
recordings are, which adapter reads them, and the per-dataset defaults that were measured
on it. Every script's ``--dataset`` choices, the fetch list and the per-dataset defaults read
from :data:`DATASETS`; adding a dataset is one entry here plus its adapter module.

The adapters live a layer up, in :mod:`replay.data`, which registers them here when it is
imported (:func:`register_adapters`, filled from above: this base module imports nothing of
the data layer, by name or by string). Each registered adapter imports its module when a
recording is read, so knowing the names costs no import of trimesh, pickle readers or Newton.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from replay.errors import DataError


@dataclass(frozen=True)
class Dataset:
    """One dataset of recordings.

    Attributes:
        name: the folder name in ``data/`` and in the mirror, and the ``--dataset`` value.
        label: how messages name it (``no GRAB sequence 'x'``).
        pattern: glob of its recordings below its folder; a name is the path relative to the
            folder with the pattern's fixed prefix and suffix removed (GRAB
            ``recordings/<name>.pkl``, TACO ``<name>.pkl``, HUG-Bench
            ``scenes/<split>/<scene>/aria_data.pkl`` -> ``<split>/<scene>``).
        hand_variant: manosim hand shape when ``ReplayConfig.hand_variant`` is None: the shape
            whose bone lengths best fit the dataset's subjects (measured with
            ``scripts/validate_pose_mapping.py --hand-shape``: GRAB s1 landmark IK median
            1.92 mm with zerohand vs 3.99 mm with myhand; TACO fingertips 8.5 vs 10.1 mm;
            HUG-Bench recordings come from the hand ``myhand`` was fitted to).
        flat_hand_mean: whether the dataset's 45 MANO finger values are relative to the flat
            hand, where its files do not say (None: no MANO pose, or unknown). TACO: measured
            (the flat reading fits the fingertip vertices ~10 mm median vs ~34 mm for the mean
            reading, :mod:`replay.kinematics.mano`). HUG-Bench: ASSUMED flat (no copy
            reachable here; ``validate_pose_mapping.py`` checks both readings per sequence).
        fitted_hand: what the hand shape ``fitted`` is for its recordings (docs/hand.md):
            ``"landmarks"``, the subject's hand measured from the recording's landmarks
            (:mod:`replay.kinematics.fitted_hand`); or an authored manosim shape, where no hand can be
            fitted defensibly (TACO: no joint positions, only a MANO fit's mesh; HUG-Bench: ``myhand``
            is the hand of its own subject).
        names_object: recording names start with the object's name and then say the
            intent (GRAB ``mug_lift``, ``mug_pass_1``): ``--objects mug`` selects the lift
            (:func:`replay.study.prepare.sequence_object`; other intents by their own name) and
            :func:`replay.checks.recording_checks.recording_intent` reads the intent.
    """

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
        """Names of the recordings staged below ``root`` (this dataset's folder), sorted."""
        head, tail = self._ends()
        rels = (p.relative_to(root).as_posix() for p in Path(root).glob(self.pattern))
        return sorted(r[len(head) : len(r) - len(tail)] for r in rels)

    def path(self, root: Path, name: str) -> Path:
        """The recording file of ``name`` below ``root``."""
        head, tail = self._ends()
        return Path(root) / f"{head}{name}{tail}"

    def load(self, root: Path, name: str, **kwargs):
        """Read recording ``name`` (its file: :meth:`path`) with the adapter registered for
        this dataset (:func:`register_adapters`): ``adapter(path, root, name, **kwargs)`` ->
        :class:`replay.data.types.Recording`.

        Raises:
            DataError: no such recording (the message lists the staged ones), no adapter
                registered (``replay.data`` not imported), or any error of the adapter.
        """
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


#: Every dataset with recordings, in the order scripts list them.
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
    """Register the adapter of each named dataset (:meth:`Dataset.load` calls it); called by
    :mod:`replay.data` on import, the layer that holds the adapters.

    Raises:
        DataError: a name that is not in :data:`DATASETS`.
    """
    unknown = sorted(set(adapters) - set(DATASETS))
    if unknown:
        raise DataError(
            None,
            "dataset",
            f"adapter for unknown dataset(s) {', '.join(unknown)}; add them to replay.datasets.DATASETS first",
        )
    _ADAPTERS.update(adapters)


#: ``--dataset`` values of the replay stages.
RECORDING_DATASETS = tuple(DATASETS)
#: The hand models' dataset (fetched and located like the others, no recordings).
HAND_DATASET = "manosim"
#: Everything ``fetch_data.py --dataset all`` stages, in that order (the hand first).
FETCH_ORDER = (HAND_DATASET, *RECORDING_DATASETS)


def dataset(name: str) -> Dataset:
    """The :class:`Dataset` called ``name``.

    Raises:
        DataError: no such dataset (the message lists the known ones).
    """
    try:
        return DATASETS[name]
    except KeyError:
        raise DataError(None, "dataset", f"no adapter for {name!r}; choose from {', '.join(DATASETS)}") from None
