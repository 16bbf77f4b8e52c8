"""Studies: many recordings (or many variants of one), in processes or Ray tasks.

Above :mod:`replay.protocol` (each job is one rollout), below :mod:`replay.output`:

* :mod:`~replay.study.prepare` - a recording ready to replay: named, loaded, cropped, hand
  filled in;
* :mod:`~replay.study.inputs` - SHA-256 of every file a rollout read, and whether it changed;
* :mod:`~replay.study.job` - one recording under one protocol in a worker;
* :mod:`~replay.study.pool` / :mod:`~replay.study.ray_pool` - the executors (process pool,
  Ray; :mod:`~replay.study.ray_transfer` and :mod:`~replay.study.ray_stage` carry a Ray task's
  inputs and results, on a cluster that shares no folder);
* :mod:`~replay.study.runner` - many jobs: select, resume, merge subsets, summarize;
* :mod:`~replay.study.summary` - a study's counts, package versions and study record;
* :mod:`~replay.study.sweep` - robustness maps: one recording over a grid of variants;
* :mod:`~replay.study.console` - what a study prints;
* the sampled verdict (``--samples``, issue #46): :mod:`~replay.study.verdict_conditions` (conditions),
  :mod:`~replay.study.uncertainty` (declared distributions), :mod:`~replay.study.sampler` (seeded joint
  samples), :mod:`~replay.protocol.p_lift_stats` (interval, class, driver), :mod:`~replay.study.corruptions`,
  :mod:`~replay.study.discrimination`, :mod:`~replay.study.sampling_setup` and
  :mod:`~replay.study.sample_job` (the worker's batches).
"""
