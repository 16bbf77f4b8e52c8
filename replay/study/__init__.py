"""Studies: many recordings (or many variants of one), in processes or Ray tasks.

Above :mod:`replay.protocol` (each job is one rollout), below :mod:`replay.output`:

* :mod:`~replay.study.prepare` - a recording ready to replay: named, loaded, cropped, hand
  filled in;
* :mod:`~replay.study.inputs` - SHA-256 of every file a rollout read, and whether it changed;
* :mod:`~replay.study.job` - one recording under one protocol in a worker;
* :mod:`~replay.study.pool` / :mod:`~replay.study.ray_pool` - the executors (process pool,
  Ray);
* :mod:`~replay.study.runner` - many jobs: select, resume, merge subsets, summarize;
* :mod:`~replay.study.summary` - a study's counts, package versions and study record;
* :mod:`~replay.study.sweep` - robustness maps: one recording over a grid of variants;
* :mod:`~replay.study.console` - what a study prints.

``replay.study.run_study`` (0.1's path) still works for one release, with a
:class:`DeprecationWarning`; the function is :func:`replay.study.runner.run_study`.
"""


def __getattr__(name: str):
    """0.1's module ``replay.study`` is this package's :mod:`~replay.study.runner` now:
    its public names resolve there for one release, with a :class:`DeprecationWarning`."""
    if name.startswith("_"):
        raise AttributeError(name)
    import importlib
    import warnings

    runner = importlib.import_module("replay.study.runner")
    if not hasattr(runner, name):
        raise AttributeError(f"module 'replay.study' has no attribute {name!r}")
    warnings.warn(f"replay.study.{name} moved to replay.study.runner.{name}; the old path goes in 0.3",
                  DeprecationWarning, stacklevel=2)
    return getattr(runner, name)
