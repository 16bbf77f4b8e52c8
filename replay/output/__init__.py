"""Output: what a person reads and watches of a study.

The top stage (below only :mod:`replay.cli` and the scripts):

* :mod:`~replay.output.report` - the static HTML report page and its plots;
* :mod:`replay.output.render` - headless videos: per-clip H.264, the montage, a recording
  drawn as the data has it.
"""
