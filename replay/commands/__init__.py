"""The command lines, one module per command, each a thin argument parser over the package:
``main(argv=None) -> int`` parses, calls the package, prints one-line errors and returns the
exit status (:mod:`replay.cli` lists the statuses).

They run three ways, the same ``main``:

* ``grasp-replay <command> ...`` (the console script, :func:`replay.cli.main`; works from an
  installed wheel: nothing is read from a source checkout);
* ``python scripts/<module>.py ...`` (the README's commands: each script is a wrapper);
* ``main([...])`` from Python (what the tests do).

Top layer (with :mod:`replay.cli`): a command may import any package below it;
``tests/test_structure.py`` holds them to the same module and function size limits.
"""
