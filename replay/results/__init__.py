"""The study's result files (docs/results.md), written atomically::

    <out>.json                         StudyRecord (summary, config, versions, one row per recording)
    <out>.csv                          its rows, one line per recording
    <out stem>_rollouts/<seq>.json     RolloutRecord (``ablation``: the ablation run)
    <out stem>_rollouts/<seq>.npz      per-frame poses of the contact run (:data:`POSES_KEYS`); .ablation.npz
    <out stem>.records.jsonl           one line per finished job (:mod:`~replay.results.study_log`)

Readers refuse another ``format_version`` with a one-line :class:`ResultsFormatError` naming the file and field; users
read them through :mod:`replay.api`."""
