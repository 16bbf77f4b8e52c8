"""Colours and view constants shared by every drawing in :mod:`replay.output.render`."""

from __future__ import annotations

from replay.results.verdict_record import Word

#: RGB (0-255) of each outcome's label.
OUTCOME_RGB = {
    "lifted": (90, 210, 120),
    "not_lifted": (240, 90, 80),
    "unstable": (245, 175, 40),
    "stuck": (175, 110, 230),
    "tracked": (90, 210, 120),
    "lost": (240, 90, 80),
}

#: RGB (0-255) of each verdict's label (replay.results.verdict_record.Word: holds, uncertain, fails), as the
#: outcomes': holds as lifted, fails as not lifted, uncertain as unstable's amber
VERDICT_RGB = {Word.HOLDS: (90, 210, 120), Word.UNCERTAIN: (245, 175, 40), Word.FAILS: (240, 90, 80)}

#: hand colour (light skin tone), RGBA 0-1.
SKIN_RGBA = (0.89, 0.71, 0.60, 1.0)

#: object colours, RGBA 0-1: the first is the grasped object, the others scene clutter.
OBJECT_RGBA = (
    (0.22, 0.45, 0.85, 1.0),
    (0.55, 0.75, 0.45, 1.0),
    (0.80, 0.55, 0.80, 1.0),
    (0.90, 0.80, 0.35, 1.0),
    (0.45, 0.75, 0.80, 1.0),
    (0.75, 0.50, 0.40, 1.0),
)

#: geom groups MuJoCo shows by default; groups >= 3 are collision-only by convention.
VISIBLE_GROUPS = (0, 1, 2)

#: vertical field of view of the render camera, degrees (MuJoCo's default).
FOVY_DEG = 45.0

#: table-top colour (walnut), RGBA 0-1: red-brown with green/red 0.66, so it is never
#: mistaken for the skin tone (green/red 0.80) in pixel tests.
TABLE_RGBA = (0.50, 0.33, 0.22, 1.0)

#: colour of the recorded object drawn beside the simulated one (recorded protocol): the
#: grasped object's blue, translucent (alpha 0.3) so the simulated object stays readable.
GHOST_RGBA = (0.22, 0.45, 0.85, 0.3)
