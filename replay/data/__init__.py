"""Data layer: where datasets live, how they are fetched, and their canonical form.

* :mod:`replay.data.locate` - resolve a dataset's folder (``data/`` after fetch, or the
  offline mirror given by ``REPLAY_MIRROR``).
* :mod:`replay.data.types` - the canonical :class:`Recording` / :class:`ObjectAsset`.
"""
