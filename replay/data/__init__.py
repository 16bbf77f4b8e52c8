"""Data layer: where datasets live, how they are fetched, and their canonical form.

* :mod:`replay.data.locate` - resolve a dataset's folder (``data/`` after fetch, or the
  offline mirror given by ``REPLAY_MIRROR``).
* :mod:`replay.data.types` - the canonical :class:`Recording` / :class:`ObjectAsset`.
* :mod:`replay.data.sources` - pinned upstream sources (GitHub commits, Hub repos).
* :mod:`replay.data.fetch` - :func:`~replay.data.fetch.fetch`: stage datasets from a mirror,
  GitHub or the Hub (:mod:`replay.data.hub`) into ``data/``.
* :mod:`replay.data.manifest` - ``data/MANIFEST.json`` and :func:`~replay.data.manifest.verify`.
"""
