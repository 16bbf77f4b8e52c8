"""The public API (``__all__``); every other path under ``replay`` is internal and may move in 0.x. Importing it
loads Newton, Warp and MuJoCo. Units: Z up, m, s, kg, rad; quaternions xyzw unless a name ends in ``_wxyz``.

* recordings: :func:`list_sequences`, :func:`read_recording` (the adapter alone), :func:`load_recording`
  (adapter + input checks), :class:`Recording`, :data:`DATASETS`, :func:`fetch`;
* one recording: :func:`replay_recording` (load, fit the hand, replay), :class:`ReplayConfig`, :class:`Variant`,
  :func:`run_rollout`, :func:`run_rollouts` (from hand coordinates), :class:`RolloutResult`;
* many recordings: :func:`run_study`, :func:`build_report`, :func:`render_montage`;
* results files: :func:`read_study`, :func:`read_rollout`, :class:`StudyRecord`, :class:`RolloutRecord`,
  :data:`FORMAT_VERSION`; errors: :class:`ReplayError` and its kinds.
"""

from __future__ import annotations

from replay import __version__
from replay.checks import load_recording
from replay.config import ReplayConfig
from replay.data import list_sequences, read_recording
from replay.data.fetch import fetch
from replay.data.types import Recording
from replay.datasets import DATASETS, RECORDING_DATASETS
from replay.errors import (
    DataError,
    EngineError,
    FetchError,
    IntegrityError,
    OutputError,
    ReadbackError,
    ReplayError,
    SceneError,
    UsageError,
)
from replay.output.render.montage import render_montage
from replay.output.report import build_report
from replay.protocol.rollout import RolloutResult, run_rollout, run_rollouts
from replay.results.files import read_rollout, read_study
from replay.results.records import FORMAT_VERSION, RolloutRecord, StudyRecord
from replay.sim.engine.variants import Variant
from replay.study.one_recording import replay_recording
from replay.study.runner import run_study

__all__ = [
    "__version__",
    "DATASETS",
    "RECORDING_DATASETS",
    "Recording",
    "fetch",
    "list_sequences",
    "load_recording",
    "read_recording",
    "ReplayConfig",
    "RolloutResult",
    "Variant",
    "replay_recording",
    "run_rollout",
    "run_rollouts",
    "build_report",
    "render_montage",
    "run_study",
    "FORMAT_VERSION",
    "RolloutRecord",
    "StudyRecord",
    "read_rollout",
    "read_study",
    "DataError",
    "EngineError",
    "FetchError",
    "IntegrityError",
    "OutputError",
    "ReadbackError",
    "ReplayError",
    "SceneError",
    "UsageError",
]
