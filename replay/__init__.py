"""grasp-replay: replay recorded human grasps with the manosim MANO hand in Newton.

Stages (each a script in ``scripts/``): fetch -> validate -> import -> replay -> render.
Conventions used throughout the package:

* World frame: Z up, metres, seconds, kilograms, radians.
* Quaternions are **xyzw** (Newton / warp order) unless a name ends in ``_wxyz``
  (MuJoCo order, also the order the datasets store them in).
"""

__version__ = "0.1.0"
