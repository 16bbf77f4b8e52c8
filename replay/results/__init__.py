"""The study's result files: typed records, one writer, one reader, a format version.

Files (all written atomically, :mod:`replay.fileio`)::

    <out>.json                         StudyRecord (summary, config, versions, one row per recording)
    <out>.csv                          the rows of StudyRecord.rollouts, one line per recording
    <out stem>_rollouts/<seq>.json     RolloutRecord (contact run, ``ablation``: the ablation run)
    <out stem>_rollouts/<seq>.npz      per-frame poses of the contact run (:data:`POSES_KEYS`)
    <out stem>_rollouts/<seq>.ablation.npz
    <out stem>.records.jsonl           one line per finished job, appended (not atomic: fsync'd, a torn
                                       last line dropped; :mod:`~replay.results.study_log`)

Every JSON and npz carries ``format_version`` (:data:`FORMAT_VERSION`); the readers
refuse a file of any other version (or none: written before versions existed) with a
one-line :class:`ResultsFormatError` naming the file and the field. ``docs/results.md``
documents every field (generated from the field metadata by ``tests/doc_tables.py``).

Extending: a new metric is a new optional field (default ``None``) with ``unit``/``doc``
metadata; keys a record does not declare are kept in ``extra`` and written back as they
were, so files of the same version written by a newer build still read.

The package: :mod:`~replay.results.records` (the typed records, :data:`FORMAT_VERSION`,
:class:`Phase`, :data:`POSES_KEYS`), :mod:`~replay.results.files` (JSON text, writers and
readers) and :mod:`~replay.results.engine_choice` (the config's engine, as every results file records
it). Names are imported from the module that defines them (this package re-exports nothing; the
readers users need are in :mod:`replay.api`).
"""
