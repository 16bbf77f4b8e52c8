"""The physics table, the one home of every physics value: each :class:`Choice` of each named physics (``authored``,
``replay``) with its value, source and why, and the values each may take (:func:`check_value`); applied by
:mod:`replay.sim.physics`. Units: m, s, mm where named."""

from __future__ import annotations

from dataclasses import dataclass

from replay.errors import DataError


@dataclass(frozen=True)
class Choice:
    """One declared physics choice: its ``value`` (the single run's), the ``source`` of that value (MJCF, MuJoCo
    default, paper, or "our choice") and ``why``. What the sampled verdict draws it from, if it samples it:
    ``spread`` ``(low, high)`` (uniform) or ``levels`` (equal weight: values, or ``{name: value}``), with
    ``spread_source`` where that is not ``source``."""

    name: str
    value: object
    source: str
    why: str
    spread: tuple | None = None
    levels: tuple | dict = ()
    spread_source: str | None = None


_MJ = "MuJoCo default (the MJCF has no <option>; MuJoCo XML reference, option)"
_HAND = "manosim capsule_hand.xml"


_c = Choice


#: every choice's name, in table order; every reader asks :func:`replay.sim.physics.choice_value`
CHOICES = tuple(
    "wrist_law wrist_gravity_compensation integrator cone impratio contact_mixing object_margin "
    "finger_flutter_damping closure_profile hand_shape multiccd wrist_target_interpolation object_visual_geoms "
    "support_geometry object_free_joint wrist_target_offset_mm timestep finger_effort_limit grip_force_n "
    "finger_force_share pad_compression pad_deep_fingers object_mass_model object_print object_mass_unstated_spread "
    "support_contact contact_priority contact_finger_object contact_palm_object contact_object_support "
    "contact_hand_support hand_object_friction hand_object_softness hand_object_torsional_friction "
    "object_density_scale object_shape_stiffness contact_gap wrist_gain_scale finger_flutter_bound".split()
)

#: choices the protocol's config fields set, not the physics table (their value in effect: read from the config
#: a rollout runs with, after :func:`replay.protocol.oracle_plan.oracle_config`; not an override)
CONFIG_SET = {
    "timestep": ("dt", "config.control_fps x config.substeps (hug-oracle: oracle_dt)"),
}


VALUES = {
    "wrist_law": ("authored_actuators", "wrench"),
    "wrist_gravity_compensation": (False, True),
    "integrator": ("euler", "implicitfast", "implicit", "rk4"),
    "cone": ("pyramidal", "elliptic"),
    "contact_mixing": ("mujoco", "hand"),
    "object_margin": ("asset", "zero"),
    "finger_flutter_damping": ("as_authored", "raised"),
    "closure_profile": ("linear", "minjerk"),
    "hand_shape": (None, "myhand", "zerohand", "fitted"),
    "multiccd": (False, True),
    "wrist_target_interpolation": ("held", "per_step"),
    "object_visual_geoms": ("inert", "as_written"),
    "support_geometry": ("box",),
    "object_free_joint": ("freejoint",),
    "object_mass_model": ("asset", "as_made"),
    "hand_object_softness": (None,),
    "hand_object_torsional_friction": (None,),
    "pad_deep_fingers": ("as_recorded", "opened"),
}

#: what a value of a choice is and how it is made, where the table's rows do not hold it (a departure to it cites
#: this in its record: :func:`replay.sim.physics.physics_record`)
VALUE_SOURCES = {
    ("pad_deep_fingers", "opened"): (
        "Serina, Mote & Rempel 1997, J. Biomech. 30(10):1035-1040 and Pawluk & Howe 1999, J. Biomech. Eng. "
        "121(6):605-611 (the pulp's 2-4 mm, as pad_compression); HUG (arXiv:2606.17054, table 7): 98-99 % of its "
        "recorded grasps start with the hand inside the object, mean depth 10.2-13.1 mm. A recorded finger deeper "
        "than the pulp compresses sits where the person's soft tissue gave way, which a rigid capsule cannot "
        "occupy: its drive aims past the surface and shoves the object before the lift. From the first approach "
        "frame a finger comes within pad_near_mm of the object (at its recorded pose) on, a pad (middle or distal "
        "capsule) deeper than pad_compression is opened along the finger's recorded closure to that depth, held "
        "from the grasp frame on (replay.protocol.pad_depth_table)"
    ),
    ("hand_shape", "fitted"): (
        "the recording's own hand (docs/hand.md; replay.datasets fitted_hand): GRAB, manosim zerohand with every "
        "bone scaled to the subject measured from the recording's landmarks (replay.kinematics.fitted_hand: joint "
        "centres at the subject's bone lengths in zerohand's bone directions and its palm points; capsule radii x "
        "the hand-length ratio, geometric similarity, our choice; mass by volume at manosim's total 0.4 kg; built "
        "once per subject, cached); TACO, zerohand (a MANO fit without joint positions); HUG-Bench, myhand "
        "(the hand of its own subject)"
    ),
}
_PRINT = (
    "ContactDB (Brahmbhatt et al., CVPR 2019; github.com/samarth-robo/contactdb_utils README, 3D Printing: the "
    "objects printed at 15 % hexagonal honeycomb infill in PLA); GRAB (Taheri et al., ECCV 2020) uses ContactDB's "
    "meshes, 3D printed at MPI-IS (github.com/otaheri/GRAB README, acknowledgements), print settings and masses "
    "unpublished: infill 15-20 % (ContactDB's 15 %; PrusaSlicer 2.x profiles' fill_density 15 %, Cura's default 20), "
    "shells 2-3 lines of 0.4 mm (Ultimaker Cura manual, Wall settings: two or three times the line width; Cura "
    "profile.py wall_thickness 0.8 mm), PLA 1210-1250 kg/m^3 (Farah, Anderson & Langer 2016, Adv. Drug Deliv. Rev. "
    "107:367-392)"
)
_GRIP = (
    "Li Z.-M. 2002, The influence of wrist position on individual finger forces during forceful grip, J. Hand "
    "Surg. 27A(5):886-896 (abstract): maximal grip of an instrumented handle 114.9 +- 12.8 N (9 healthy men, 20 deg "
    "wrist extension), shared index 32.2 %, middle 32.6 %, ring 23.5 %, little 11.7 %"
)
_PAD = (
    "Serina, Mote & Rempel 1997, Force response of the fingertip pulp to repeated compression, J. Biomech. "
    "30(10):1035-1040: the pulp displaces ~2-4 mm under 1-5 N; Pawluk & Howe 1999, J. Biomech. Eng. "
    "121(6):605-611: nonlinear "
    "(exponential) stiffness over 0-2 N"
)
_EFFORT_OLD = (
    "lift: 0.4 N·m at every finger joint (manosim-in-Newton report); hug-oracle: None = manosim's actuators as "
    "authored (no forcerange; implemented as +-1000 N·m, which kp 30 x pi never reaches)"
)

AUTHORED = (
    _c(
        "wrist_law",
        "authored_actuators",
        _HAND + ": slide x3 + ball wrist, <position> kp 300 / 50, dampratio 1 / 1.5",
        "the PD law MuJoCo applies to those actuators (kp (ctrl - q) - kv qdot per slide along world axes; per ball "
        "axis in the hand frame on the rotation vector), emulated on the importer's free joint "
        "(replay.sim.engine.wrist)",
    ),
    _c("wrist_gravity_compensation", False, _HAND + ": no gravcomp", "the hand hangs below its target by M g / kp"),
    _c("integrator", "euler", _MJ, "as authored"),
    _c("cone", "pyramidal", _MJ, "as authored"),
    _c("impratio", 1.0, _MJ, "as authored"),
    _c(
        "contact_mixing",
        "mujoco",
        "MuJoCo mj_contactParam (solmix 1 on both geoms: half-and-half)",
        "as authored: the hand's solref/solimp mixed with the object's for every equal-priority pair",
    ),
    _c("object_margin", "asset", "GRAB object_sim common.xml: object_col margin 0.0005 m", "as authored"),
    _c(
        "multiccd",
        True,
        "MuJoCo 3.17 default: multi-CCD on (a disable flag, mjDSBL_MULTICCD, unset)",
        "as authored (Newton's SolverMuJoCo disables it unless asked)",
    ),
    _c("finger_flutter_damping", "as_authored", _HAND + ": finger damping 0.01 N·m·s/rad", "as authored"),
    _c(
        "closure_profile",
        "linear",
        "HUG arXiv:2606.17054 app. E.1: the wrist on a straight line; timing not stated",
        "the plainest reading: constant speed",
    ),
    _c(
        "hand_shape",
        None,
        "replay.datasets: zerohand for GRAB/TACO, myhand for HUG-Bench (fitted, the recording's own hand: "
        "VALUE_SOURCES, docs/hand.md)",
        "both shapes are authored files; the dataset's default",
    ),
    _c("wrist_target_offset_mm", (0.0, 0.0, 0.0), "the recording", "the recorded wrist pose"),
    _c(
        "wrist_target_interpolation",
        "held",
        "MuJoCo: ctrl is set once per control frame and held over its steps",
        "a plain MuJoCo replay writes ctrl per control frame",
    ),
    _c(
        "object_visual_geoms",
        "inert",
        "our choice: object_sim's *_visual geoms (class grab) set no contype/"
        "conaffinity/density, so MuJoCo as written collides their hulls and weighs them at 1000 kg/m^3 (MuJoCo's "
        "default density); as_written runs that (replay.sim.object_visual)",
        "meant for display (object_col's group "
        "3 marks the collision parts); measured: docs/results/grab-oracle-authored-visual.json (the hug-oracle as "
        "authored with them as written) beside docs/results/grab-oracle-authored.json (inert)",
    ),
    _c(
        "support_geometry",
        "box",
        "our choice (no other implemented): a box of support_thickness at the table top",
        "the GRAB table's collision part is a slab; its top is the recorded support height",
    ),
    _c(
        "object_free_joint",
        "freejoint",
        "our choice (no other implemented): the object body has no joint as written; "
        "MuJoCo's <freejoint/> takes no class defaults",
        "a <joint type=free> would take the grab class's armature and "
        "frictionloss 0.001 (benchmarks/authored_crosscheck.py --set object_joint=grab runs it)",
    ),
    _c(
        "finger_effort_limit",
        {"lift": 0.4, "hug-oracle": None},
        _EFFORT_OLD,
        "as the manosim-in-Newton protocol runs it: one limit at every joint",
    ),
    _c("pad_compression", 0.0, "the recording: the recorded fingers", "as authored: a rigid capsule has no pulp"),
    _c(
        "pad_deep_fingers",
        "as_recorded",
        "the recording: the recorded fingers as they are",
        "as authored: a finger the recording puts deeper in the object stays there (with pad_compression > 0: the "
        "compression closes fingers shallower than its depth only)",
    ),
    _c(
        "object_mass_model",
        "asset",
        "GRAB object_sim common.xml object_col: 1250 kg/m^3 over the collision parts (TACO, HUG without a stated "
        "mass: the same density, replay.data.objects; a stated mass as stated)",
        "as authored (sampled over object_mass_unstated_spread)",
    ),
)

_FILES = "GRAB common.xml object_col (TACO / HUG meshes: the same values, replay.data.objects)"
_MIX = (
    "MuJoCo mj_contactParam: a higher priority's condim and friction win outright; at equal priority the "
    "larger condim and, per component, the larger friction"
)

#: choices fixed alike in every named physics: the protocol's config (:data:`CONFIG_SET`) or the contact values MuJoCo
#: makes of the files and the support box, per pair class (``tests/test_physics_table.py`` reads them back from the
#: compiled model: condim and friction (sliding, torsional m, rolling m) of every pair of the class)
SHARED = (
    _c(
        "timestep",
        {"lift": 1 / 240, "hug-oracle": 0.002},
        "not authored (the MJCF has no <option>; MuJoCo's "
        "default 0.002 s); lift: control_fps 30 Hz x substeps 8 (manosim-in-Newton report); hug-oracle: oracle_dt "
        "(HUG arXiv:2606.17054: 2 ms, 50 Hz x 10)",
        "set by the protocol's config: " + CONFIG_SET["timestep"][1],
    ),
    _c(
        "grip_force_n",
        114.9,
        _GRIP,
        "the fingers' maximal grip force together, N (the mean; sampled over mean +- 1 SD); each finger's pad force "
        "is it times finger_force_share, where finger_effort_limit is human",
        spread=(102.1, 127.7),
    ),
    _c(
        "finger_force_share",
        {"index": 0.322, "middle": 0.326, "pinky": 0.117, "ring": 0.235, "thumb": 1.0},
        _GRIP + "; the thumb opposes the four fingers, so in a static grasp its normal force equals theirs together "
        "(statics; the virtual finger of Shim, Latash & Zatsiorsky 2005, J. Neurophysiol. 93:766-776)",
        "each finger's share of grip_force_n at its pad (MANO order)",
    ),
    _c(
        "object_print",
        {"material_density_kg_m3": (1210.0, 1250.0), "infill": (0.15, 0.2), "shell_mm": (0.8, 1.2)},
        _PRINT,
        "a print's mass = density x (shell + infill x (volume - shell)), shell = surface area x shell thickness (at "
        "most the volume), from the object's own mesh (replay.sim.made_mass); the ends of its range from the ends "
        "of these (the mass grows with each); objects the dataset says are printed (GRAB) under object_mass_model "
        "as_made",
    ),
    _c(
        "object_mass_unstated_spread",
        (0.8, 1.2),
        "our choice: no source states how these objects were made or what they weigh (TACO's real objects; HUG "
        "without a stated mass; every object under object_mass_model asset)",
        "the asset's mass times this, sampled uniformly (its centre 1: the asset's)",
    ),
    _c(
        "support_contact",
        {"condim": 3, "friction": [1.0, 0.005, 0.0001], "margin": 0.0},
        "our choice (no other "
        "implemented): Newton 1.8.0's defaults for the support box (ShapeConfig mu 1, the sliding friction; "
        "mu_torsional "
        "0.005, mu_rolling 0.0001, margin 0; SolverMuJoCo condim 3); the GRAB table asset's contact part "
        "(object_col) writes condim 4, friction (1, 0.5, 0.01), margin 0.0005 m",
        "what reaches a pair is what counts: the rows contact_object_support and contact_hand_support",
    ),
    _c(
        "contact_priority",
        {"palm": 1, "fingers": 0, "object": 0, "support": 0},
        _HAND + ': the palm geom\'s priority="1"; the object files and the support set none (0)',
        "as authored: palm contacts take the palm's values outright (contact_palm_object)",
    ),
    _c(
        "contact_finger_object",
        {"condim": 4, "friction": [1.0, 0.5, 0.01]},
        _MIX + ": " + _FILES + " condim 4, "
        "friction (1, 0.5, 0.01) over the finger capsules' MuJoCo defaults (condim 3, (1, 0.005, 0.0001))",
        "as authored: object_col's torsional friction 0.5 m (100x MuJoCo's default) and rolling 0.01 m reach every "
        "finger contact through condim 4",
    ),
    _c(
        "contact_palm_object",
        {"condim": 3, "friction": [1.0, 0.005, 0.0001]},
        _MIX + ": the palm's priority 1 "
        "(contact_priority): its MuJoCo defaults, condim 3, (1, 0.005, 0.0001), and its solref / solimp",
        "as authored: no torsional or rolling resistance beyond MuJoCo's defaults at the palm",
    ),
    _c(
        "contact_object_support",
        {"condim": 4, "friction": [1.0, 0.5, 0.01]},
        _MIX + ": the object's (" + _FILES + ") over the support box's (support_contact)",
        "the GRAB table asset's own values would give the same pair values (they equal the object's)",
    ),
    _c(
        "contact_hand_support",
        {"condim": 3, "friction": [1.0, 0.005, 0.0001]},
        _MIX + ": the hand's and the support box's MuJoCo / Newton defaults (support_contact)",
        "the GRAB table asset as written would give condim 4, friction (1, 0.5, 0.01), margin 0.0005 m",
    ),
    _c(
        "hand_object_friction",
        None,
        "as built: the hand's and the object files' sliding friction 1 (contact_finger_object, contact_palm_object)",
        "a departure sets the sliding friction of the hand's and the object's geoms (replay.sim.object_contact, as "
        "a Variant's friction does one world's)",
        spread=(0.3, 1.0),
        spread_source="Derler & Gerhardt 2012, Tribology of skin: review and analysis of experimental results for the "
        "friction coefficient of human skin, Tribol. Lett. 45:1-27 (dry finger pad on polymers, metals, wood and "
        "glass: mostly 0.3-1.0; moist skin higher, not sampled)",
    ),
    _c(
        "hand_object_softness",
        None,
        "as built: the hand's and the object's solref / solimp, mixed by contact_mixing",
        "the sampled verdict sets one of the levels on the hand's and the object's geoms of a world: {name: (solref "
        "(timeconst s, dampratio), solimp (dmin, dmax, width m))}",
        levels={
            "mujoco_default": ((0.02, 1.0), (0.9, 0.95, 0.001)),
            "manosim_soft": ((0.04, 1.0), (0.5, 0.95, 0.001)),
            "manosim_stiff": ((0.004, 1.0), (0.99, 0.9999, 0.0005)),
        },
        spread_source="MuJoCo XML reference (geom solref/solimp defaults); manosim README (the soft set HUG chose by "
        "replaying human grasps, and the stiff set it names: ~45 % vs >90 % of recorded grasps succeed)",
    ),
    _c(
        "hand_object_torsional_friction",
        None,
        "as built: contact_finger_object's torsional friction 0.5 m, contact_palm_object's 0.005 m",
        "the sampled verdict sets one of the levels, m, on the hand's and the object's geoms of a world",
        levels=(0.005, 0.5),
        spread_source="MuJoCo XML reference geom friction default (1, 0.005, 0.0001); GRAB object_sim common.xml "
        "object_col friction 1 0.5 0.01 (as authored)",
    ),
    _c(
        "object_density_scale",
        1.0,
        "our choice: no departure",
        "the object's mass and inertia times this over the mass object_mass_model gives (replay.sim.made_mass, "
        "replay.sim.object_contact)",
    ),
    _c(
        "object_shape_stiffness",
        {"ke": 2500.0, "kd": 100.0},
        "manosim-in-Newton: object contact stiffness ke 2500 N/m; kd 100 N·s/m (Newton 1.8.0 ShapeConfig defaults)",
        "the object shapes' Newton contact material (replay.sim.world_builder)",
    ),
    _c(
        "contact_gap",
        0.0,
        "MuJoCo XML reference, geom gap: default 0 (the MJCF sets none)",
        "m: Newton's builder default rigid_gap 0.1 makes MuJoCo detect (and exclude from the solver) every pair "
        "within 10 cm: many more contacts, all inert",
    ),
    _c(
        "wrist_gain_scale",
        1.0,
        _HAND + ": the wrist's kp 300 N/m, 50 N·m/rad as written",
        "the wrist drive's kp times this, its kd times its square root (replay.sim.world_builder)",
    ),
    _c(
        "finger_flutter_bound",
        {"safety": 1.25, "discrete_factor": 1.19},
        "manosim-in-Newton report: discrete-time flutter bound 0.137 vs continuous 0.115 N·m·s/rad (discrete_factor); "
        "safety our choice",
        "finger_flutter_damping raised: each finger joint's damping raised to safety x discrete_factor x the "
        "ball-drive flutter bound where short (replay.sim.silent_failures)",
    ),
)

REPLAY = (
    _c(
        "wrist_law",
        "wrench",
        "our choice (replay.sim.engine.wrist)",
        "the MJCF's gains as a geodesic 6-DOF PD wrench "
        "with velocity and acceleration feed-forward: tracks a moving target without lag",
    ),
    _c(
        "wrist_gravity_compensation",
        True,
        "our choice",
        "+M g at the hand's COM: the wrist holds its target height; a "
        "replayed wrist is a recorded pose, not a weight the arm carries",
    ),
    _c(
        "integrator",
        "implicitfast",
        "manosim-in-Newton report; Newton 1.8.0 SolverMuJoCo default (solver_mujoco.py)",
        "MuJoCo's recommended integrator for position actuators (implicit in their damping)",
    ),
    _c(
        "cone",
        "elliptic",
        "our choice, on the MuJoCo modeling guide's advice (Modeling, Contact: elliptic cones, "
        "with impratio, for grasping); manosim-in-Newton report; not Newton's default (Newton 1.8.0 SolverMuJoCo: "
        "pyramidal, solver_mujoco.py)",
        "the elliptic cone is Coulomb's friction cone itself, the pyramidal one "
        "approximates it by facets (MuJoCo documentation, Computation: friction cones)",
    ),
    _c(
        "impratio",
        10.0,
        "MuJoCo modeling guide, Contact",
        "impratio ~10 with an elliptic cone for slip-sensitive grasps",
    ),
    _c(
        "contact_mixing",
        "mujoco",
        "MuJoCo mj_contactParam",
        "as authored (the hug-oracle protocol forces the hand's values: oracle_contact manosim)",
    ),
    _c(
        "object_margin",
        "zero",
        "Newton 1.8.0 SolverMuJoCo (zeroes geom margins under MULTICCD with meshes, newton #2106)",
        "kept as Newton compiles it; a 0.5 mm margin acts before the surfaces meet",
    ),
    _c(
        "multiccd",
        True,
        "our choice (Newton SolverMuJoCo enable_multiccd=True)",
        "up to 4 contacts per convex pair: a hull on the table-top box gets 1 without it and rocks",
    ),
    _c(
        "finger_flutter_damping",
        "raised",
        "manosim-in-Newton report: discrete-time flutter bound",
        "finger damping raised to 1.25x the ball-drive flutter bound where short (replay.sim.silent_failures)",
    ),
    _c("closure_profile", "minjerk", "our choice", "zero velocity and acceleration at the ends: no jerk on the drives"),
    _c(
        "hand_shape",
        None,
        "replay.datasets: zerohand for GRAB/TACO, myhand for HUG-Bench (fitted, the recording's own hand: "
        "VALUE_SOURCES, docs/hand.md)",
        "landmark IK fits GRAB's hands best with zerohand among the authored shapes (replay.datasets: the "
        "measurement); the calibrated physics, the default judge's, replays fitted (replay/results/calibration.json)",
    ),
    _c("wrist_target_offset_mm", (0.0, 0.0, 0.0), "the recording", "the recorded wrist pose"),
    _c(
        "wrist_target_interpolation",
        "per_step",
        "our choice",
        "the wrist target interpolated per physics step: no step in the target at each control frame",
    ),
    _c(
        "object_visual_geoms",
        "inert",
        "our choice",
        "the collision parts alone collide and weigh (authored physics: its row)",
    ),
    _c("support_geometry", "box", "our choice (no other implemented)", "a box of support_thickness at the table top"),
    _c(
        "object_free_joint",
        "freejoint",
        "our choice (no other implemented)",
        "no joint damping, armature or frictionloss on the object",
    ),
    _c(
        "finger_effort_limit",
        {"lift": "human", "hug-oracle": None},
        "lift: human: each finger joint's limit = its finger's maximal pad force (grip_force_n x "
        "finger_force_share) x the joint's lever to the pad on the replayed hand's MJCF (replay.kinematics."
        "joint_levers); hug-oracle: as authored. " + _GRIP,
        "a capacity, the most the finger can press, not the force it uses: the force comes from the drive's "
        "position error (the pad compression), as a person's grip force follows the load (Westling & Johansson "
        "1984, Exp. Brain Res. 53:277-284) rather than staying at a typical value",
    ),
    _c(
        "pad_compression",
        3.0,
        _PAD,
        "mm: a rigid capsule at the recorded pad presses with almost no force; each finger within pad_near_mm of "
        "the object closes until its pad is this deep in it (replay.protocol.pad_compression), fingers farther away "
        "stay as recorded",
        spread=(2.0, 4.0),
    ),
    _c(
        "pad_deep_fingers",
        "as_recorded",
        "the recording: the recorded fingers; a finger deeper than pad_compression stays there (the compression "
        "closes shallower fingers only)",
        "not yet chosen: 'opened' (--physics-set pad_deep_fingers=opened) is declared and measured "
        "(docs/results/pad-opening.md); which one runs is for the calibration to decide",
    ),
    _c(
        "object_mass_model",
        "as_made",
        "the dataset's own making (replay.sim.made_mass): GRAB's 3D prints, shell + infill (object_print) over the "
        "object's own mesh; a stated mass (HUG properties.json mass) as stated; unstated (TACO's real objects): the "
        "asset's, over object_mass_unstated_spread",
        "the recording's object: a print is mostly air; the single run takes the centre of the range",
    ),
)

#: named physics -> {choice name: Choice}
PHYSICS = {"authored": {c.name: c for c in AUTHORED + SHARED}, "replay": {c.name: c for c in REPLAY + SHARED}}
#: every named physics: the two tables, and ``calibrated``: its base table with the choices fitted once by
#: scripts/calibrate.py on GRAB's lifts (replay.study.calibration), read from its results file
#: (replay.sim.calibration_file: replay/results/calibration.json)
NAMES = ("authored", "replay", "calibrated")


#: dict-valued choices a departure may set key by key (each a number > 0)
_DICT_KEYS = {"finger_flutter_bound": ("safety", "discrete_factor"), "object_shape_stiffness": ("ke", "kd")}


def check_value(name: str, value) -> object:
    """``value`` as choice ``name`` takes it (a number as a float, a triple as a tuple); DataError for an unknown choice
    or a value it does not take."""
    if name not in CHOICES:
        raise DataError(None, "config.physics_overrides", f"unknown physics choice {name!r}; known: {sorted(CHOICES)}")
    if name in CONFIG_SET:
        if value != PHYSICS["replay"][name].value:
            raise DataError(
                None, f"config.physics_overrides.{name}", f"not a physics override: set by {CONFIG_SET[name][1]}"
            )
        return value
    if name in ("pad_compression", "contact_gap"):
        if not float(value) >= 0:
            raise DataError(None, f"config.physics_overrides.{name}", f"must be >= 0, got {value!r}")
        return float(value)
    if name in ("impratio", "object_density_scale", "wrist_gain_scale") or (
        name == "hand_object_friction" and value is not None
    ):
        if not float(value) > 0:
            raise DataError(None, f"config.physics_overrides.{name}", f"must be > 0, got {value!r}")
        return float(value)
    if name == "finger_effort_limit":
        return check_effort(value)
    if name in _DICT_KEYS:
        keys = _DICT_KEYS[name]
        if not (isinstance(value, dict) and set(value) <= set(keys) and all(_positive(v) for v in value.values())):
            raise DataError(None, f"config.physics_overrides.{name}", f"needs {{{', '.join(keys)}}} > 0, got {value!r}")
        return {k: float(v) for k, v in value.items()}
    if name == "wrist_target_offset_mm":
        v = tuple(float(x) for x in value)
        if len(v) != 3:
            raise DataError(None, "config.physics_overrides.wrist_target_offset_mm", f"needs 3 values, got {value!r}")
        return v
    if name in VALUES and value not in VALUES[name]:
        raise DataError(None, f"config.physics_overrides.{name}", f"{value!r} not in {VALUES[name]}")
    return value


def check_effort(value):
    """``finger_effort_limit``'s override: N·m > 0 or ``human`` (every protocol's limit but the hug-oracle's, which
    keeps its table entry: ``--effort``), or ``{protocol: N·m, human or None}`` (those entries; the others the
    table's)."""
    if isinstance(value, dict):
        bad = {k: v for k, v in value.items() if not (v is None or v == "human" or _positive(v))}
        if not bad:
            return dict(value)
    elif value == "human" or _positive(value):
        return value if value == "human" else float(value)
    raise DataError(
        None,
        "config.physics_overrides.finger_effort_limit",
        f"needs N·m > 0, 'human', or {{protocol: N·m, 'human' or None}}, got {value!r}",
    )


def _positive(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
