"""The study's result files: typed records, one writer, one reader, a format version.

Files (all written atomically, :mod:`replay.fileio`)::

    <out>.json                         StudyRecord (summary, config, versions, one row per recording)
    <out>.csv                          the rows of StudyRecord.rollouts, one line per recording
    <out stem>_rollouts/<seq>.json     RolloutRecord (contact run, ``ablation``: the ablation run)
    <out stem>_rollouts/<seq>.npz      per-frame poses of the contact run (:data:`POSES_KEYS`)
    <out stem>_rollouts/<seq>.ablation.npz

Every JSON and npz carries ``format_version`` (:data:`FORMAT_VERSION`); the readers
refuse a file of any other version (or none: written before versions existed) with a
one-line :class:`ResultsFormatError` naming the file and the field. ``docs/results.md``
documents every field (generated from the field metadata: :func:`fields_markdown`).

Extending: a new metric is a new optional field (default ``None``) with ``unit``/``doc``
metadata; keys a record does not declare are kept in ``extra`` and written back as they
were, so files of the same version written by a newer build still read.

The package: :mod:`~replay.results.records` (the typed records, :data:`FORMAT_VERSION`,
:class:`Phase`, :data:`POSES_KEYS`), :mod:`~replay.results.files` (JSON text, writers and
readers) and :mod:`~replay.results.fields_doc` (the tables of ``docs/results.md``); every
name is importable from ``replay.results`` itself.
"""

from replay.results.fields_doc import fields_markdown
from replay.results.files import (
    check_poses_version,
    dumps,
    read_rollout,
    read_study,
    rows_csv,
    write_poses,
    write_rollout,
    write_study,
)
from replay.results.records import (
    FORMAT_VERSION,
    POSES_KEYS,
    QUAT_ORDER,
    REFINE_FIELDS,
    ROW_FIELDS,
    Phase,
    ResultsFormatError,
    RolloutRecord,
    StudyRecord,
    check_version,
    study_row,
)

__all__ = [
    "FORMAT_VERSION", "POSES_KEYS", "QUAT_ORDER", "REFINE_FIELDS", "ROW_FIELDS", "Phase", "ResultsFormatError", "RolloutRecord",
    "StudyRecord", "check_version", "study_row", "check_poses_version", "dumps", "read_rollout", "read_study",
    "rows_csv", "write_poses", "write_rollout", "write_study", "fields_markdown",
]
