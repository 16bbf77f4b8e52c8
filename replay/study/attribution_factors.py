"""The factors of the attribution study, each with its source (format: docs/attribution.md)."""

from __future__ import annotations

#: 1-10 N over a 5-10 cm lever: 0.1-1 N·m in use, 1-2 N·m at the high end
HUMAN_TORQUE = (
    "human grip: fingertip forces 1-10 N in precision lifts (Westling & Johansson, Exp. Brain Res. 1984), "
    "several times that at maximal pinch, over a 5-10 cm knuckle-to-pad lever"
)
PULP = (
    "fingertip pulp compresses ~2-4 mm under 1-5 N (Serina et al., J. Biomech. 1997; Pawluk & Howe, J. Biomech. "
    "Eng. 1999)"
)
SKIN = (
    "fingertip skin on smooth polymers: mu ~0.5-1.5, higher when moist (Derler & Gerhardt, Tribol. Lett. 2012, "
    "review of skin friction)"
)
PRINT = (
    "GRAB's objects are 3D prints (ContactDB, Brahmbhatt et al., CVPR 2019): PLA 1240 kg/m^3 solid, ~0.3-0.5 of "
    "that at partial infill; today: solid 1250 kg/m^3 over the hulls"
)

FACTORS = [
    dict(name="defaults", value="-", source="today's protocol (manosim-in-Newton: 0.4 N·m, mu 1, solid, zerohand)"),
    dict(name="finger effort", value=1.0, source=HUMAN_TORQUE, choices={"finger_effort_limit": 1.0}),
    dict(name="finger effort", value=2.0, source=HUMAN_TORQUE + " (high end)", choices={"finger_effort_limit": 2.0}),
    dict(name="object density", value=0.4, source=PRINT, choices={"object_density_scale": 0.4}),
    dict(name="hand-object friction", value=1.5, source=SKIN, choices={"hand_object_friction": 1.5}),
    dict(
        name="contact softness",
        value="manosim",
        source="manosim README: HUG's soft solref/solimp on both sides of "
        "the finger-object pair (object geoms given the finger values, read back)",
        choices={"contact_mixing": "hand"},
    ),
    dict(
        name="hand shape",
        value="myhand",
        source="manosim README: the HUG hand shape (zerohand fits GRAB's subjects closer: "
        "docs/results/grab-hand-shapes.json)",
        choices={"hand_shape": "myhand"},
    ),
    dict(
        name="hand geometry",
        value="mesh",
        source="manosim mesh hand (convex hull per bone) instead of capsules",
        config={"hand": "mesh"},
    ),
    dict(
        name="wrist stiffness",
        value=3.0,
        source="wrist drive kp/kd x3 (MJCF 300 N/m -> 900 N/m)",
        choices={"wrist_gain_scale": 3.0},
    ),
    dict(
        name="replay speed",
        value=1.0,
        source="the recorded speed (HUG replays at the recorded rate; today half)",
        config={"replay_speed": 1.0},
    ),
    dict(
        name="lift speed",
        value="2.4 s",
        source="half today's mean lift speed: 0.075 m/s",
        config={"lift": {"lift_s": 2.4}},
    ),
    dict(
        name="lift height",
        value="0.10 m",
        source="a 10 cm lift (success at half of it, 5 cm, the same rule)",
        config={"lift": {"lift_height": 0.10, "lifted_min_rise": 0.05}},
    ),
    *[
        dict(name="pad compression", value=f"{d} mm", source=PULP, choices={"pad_compression": float(d)})
        for d in (2, 3, 5)
    ],
    dict(
        name="finger drive",
        value="quat",
        source="quaternion-error PD torque per ball joint (the manosim-in-Newton "
        "report's recommendation; replay.sim.engine.finger_drive)",
        config={"finger_drive": "quat"},
    ),
    dict(
        name="effort 1 + density 0.4 + mu 1.5",
        value="combined",
        source="the three model factors together",
        choices={"finger_effort_limit": 1.0, "object_density_scale": 0.4, "hand_object_friction": 1.5},
    ),
    dict(
        name="effort 1 + pad 3 mm",
        value="combined",
        source=HUMAN_TORQUE + "; " + PULP,
        choices={"pad_compression": 3.0, "finger_effort_limit": 1.0},
    ),
    dict(
        name="effort 1 + density 0.4 + mu 1.5 + pad 3 mm",
        value="combined",
        source="the model factors + pad",
        choices={
            "pad_compression": 3.0,
            "finger_effort_limit": 1.0,
            "object_density_scale": 0.4,
            "hand_object_friction": 1.5,
        },
    ),
]
