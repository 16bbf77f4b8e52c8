"""The command lines, one module per command (:mod:`.common` holds what several share): ``main(argv=None) -> int``
parses, calls the package, prints one-line errors and returns the exit status of :mod:`replay.cli`'s convention
(0 done, 1 the work or some of it not done, 2 a wrong command line, 130 interrupted). The same ``main`` runs as
``grasp-replay <command>``, as ``python scripts/<command>.py`` and from Python.
"""
