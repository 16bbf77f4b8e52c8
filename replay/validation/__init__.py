"""Validation stages: checks that the inputs say what we think before any physics.

* :mod:`replay.validation.object_frame` - object assets and poses (hull gap, density,
  resting, lift onset, hand-object distance at the grasp frame).
"""
