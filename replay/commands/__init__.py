"""The command lines, one module per command: ``main(argv=None) -> int`` returns the exit status (0 done, 1 the work
or some of it not done, 2 a wrong command line, 130 interrupted), as ``grasp-replay <command>``, a script or a call.
"""
