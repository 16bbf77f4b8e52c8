"""The sampled verdict's declared distributions (issue #46), each with its source.

Physics uncertainty (:func:`physics_variables`: the contact variables of :data:`CONTACT_VARIABLES`, and
those the config's physics declares with a spread in its table: the object's mass over its own range,
the fingers' strength, the pad compression) and data uncertainty (:data:`DATA_VARIABLES`, scaled per
recording by its own measured accuracy, :func:`data_sigmas`) are sampled jointly
(:mod:`replay.study.sampler`); a variable of kind ``object`` takes its range per recording
(:func:`object_ranges`). Conditions are not here: they are assumptions, reported apart
(:mod:`replay.study.verdict_conditions`).

Units: friction coefficients dimensionless (sliding) or m (torsional), solref (s, 1), solimp
(1, 1, m), offsets m, sigmas mm where named, grip force N, pad depth mm, mass scale 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Variable:
    """One sampled variable: ``name``, ``kind`` (``uniform`` on [low, high], ``choice`` among
    ``levels`` with equal weight, ``normal`` (dims, per-recording sigma), ``object`` (uniform on the
    recording's own range, :func:`object_ranges`)), its ``distribution`` in words and ``source``;
    ``centre``: the single run's value (uniform kinds)."""

    name: str
    kind: str
    distribution: str
    source: str
    low: float = 0.0
    high: float = 0.0
    levels: tuple = ()
    dims: int = 1
    centre: float | None = None

    def record(self) -> dict:
        """``{name, distribution, source}`` (the study's ``sampling.variables``)."""
        return {"name": self.name, "distribution": self.distribution, "source": self.source}


#: contact softness sets: name -> (solref (timeconst s, dampratio), solimp (dmin, dmax, width m))
SOFTNESS = {
    "mujoco_default": ((0.02, 1.0), (0.9, 0.95, 0.001)),
    "manosim_soft": ((0.04, 1.0), (0.5, 0.95, 0.001)),
    "manosim_stiff": ((0.004, 1.0), (0.99, 0.9999, 0.0005)),
}

CONTACT_VARIABLES = (
    Variable(
        "friction",
        "uniform",
        "uniform on [0.3, 1.0], sliding friction of every hand-object contact",
        "Derler & Gerhardt 2012, Tribology of skin: review and analysis of experimental results for the friction "
        "coefficient of human skin, Tribol. Lett. 45:1-27 (dry finger pad on polymers, metals, wood and glass: "
        "mostly 0.3-1.0; moist skin higher, not sampled)",
        low=0.3,
        high=1.0,
    ),
    Variable(
        "softness",
        "choice",
        "one of mujoco_default (solref 0.02 1, solimp 0.9 0.95 0.001), manosim_soft "
        "(0.04 1, 0.5 0.95 0.001), manosim_stiff (0.004 1, 0.99 0.9999 0.0005), equal weight, hand-object pairs",
        "MuJoCo XML reference (geom solref/solimp defaults); manosim README (the soft set HUG chose by replaying "
        "human grasps, and the stiff set it names: ~45 % vs >90 % of recorded grasps succeed)",
        levels=tuple(SOFTNESS),
    ),
    Variable(
        "torsional_friction",
        "choice",
        "0.005 or 0.5 m, equal weight, hand and object geoms (MuJoCo takes the pair's maximum; condim 4 on the object)",
        "MuJoCo XML reference geom friction default (1, 0.005, 0.0001); "
        "GRAB object_sim common.xml object_col friction 1 0.5 0.01 (as authored)",
        levels=(0.005, 0.5),
    ),
)


DATA_VARIABLES = (
    Variable(
        "wrist_offset",
        "normal",
        "isotropic normal, 3 axes, world, sigma = sqrt(ik_residual_median^2 + "
        "object_track_noise^2) of the recording (mm)",
        "the recording's own landmark IK fit residual "
        "(meta kinematics.ik_residual_mm.median, replay.kinematics.coords) and its mocap's tracking noise as "
        "measured on its object track (replay.checks.object_track noise_rms_mm)",
        dims=3,
    ),
    Variable(
        "object_offset",
        "normal",
        "normal on the two horizontal axes, world, sigma = the recording's object "
        "track noise (mm); vertical 0 (the object settles on the support)",
        "the recording's object track noise over the approach (replay.checks.object_track noise_rms_mm)",
        dims=2,
    ),
)


def physics_variables(cfg) -> tuple:
    """The physics variables ``cfg``'s physics samples: :data:`CONTACT_VARIABLES`, the object's mass
    (``object_mass_scale``, kind ``object``), and, where the physics' table declares a spread and no config
    field or override departs from it, the grip force (``grip_force_n``, N: each finger's capacity scales with it) and the
    pad compression (``pad_compression_mm``)."""
    from replay.sim import finger_strength, physics

    tab = physics.table(cfg.physics)
    out = list(CONTACT_VARIABLES)
    model = tab["object_mass_model"]
    out.append(
        Variable(
            "object_mass_scale",
            "object",
            "uniform on the object's own mass range over its single-run mass (replay.sim.made_mass: a print's shell "
            "+ infill, a stated mass, or the asset's times object_mass_unstated_spread), inertia scaled with it",
            f"physics {cfg.physics!r}, object_mass_model {physics.choice_value(cfg, 'object_mass_model')!r}: "
            f"{model.source}",
            centre=1.0,
        )
    )
    grip = tab["grip_force_n"]
    if finger_strength.profile(cfg) == "human" and grip.spread and "grip_force_n" not in (cfg.physics_overrides or {}):
        out.append(_spread_variable("grip_force_n", grip, "the fingers' maximal grip force together, N"))
    pad = tab["pad_compression"]
    if pad.spread and cfg.pad_compression_mm is None and "pad_compression" not in (cfg.physics_overrides or {}):
        out.append(_spread_variable("pad_compression_mm", pad, "the finger pad compression depth, mm"))
    return tuple(out)


def _spread_variable(name: str, choice, what: str) -> Variable:
    lo, hi = (float(x) for x in choice.spread)
    return Variable(
        name,
        "uniform",
        f"uniform on [{lo:g}, {hi:g}]: {what} (physics choice {choice.name}, centre {choice.value:g})",
        choice.source,
        low=lo,
        high=hi,
        centre=float(choice.value),
    )


def variables(cfg) -> tuple:
    """Every sampled variable of ``cfg``'s physics, in sampling order: :func:`physics_variables`, then
    :data:`DATA_VARIABLES`."""
    return physics_variables(cfg) + DATA_VARIABLES


def object_ranges(rec, cfg) -> dict:
    """``{object_mass_scale: (low, high), object_mass: MadeMass record}`` of recording ``rec``'s object under
    ``cfg`` (:func:`replay.sim.made_mass.made_mass`).

    Raises:
        DataError: a mesh missing or unreadable."""
    from replay.sim.made_mass import made_mass

    mm = made_mass(rec.target_object.asset, cfg)
    return {"object_mass_scale": mm.scale_range(), "object_mass": mm.record()}


#: sigma floor, mm: a recording whose residual cannot be read gets this (stated in its record)
SIGMA_FALLBACK_MM = 2.0


def data_sigmas(rec) -> dict:
    """``{wrist_mm, object_mm, source}``: the data variables' sigmas of recording ``rec``
    (:class:`replay.data.types.Recording`, cropped as replayed), mm. ``source`` says where each came
    from (``measured`` or ``fallback``: a recording without an IK fit, e.g. a recorded hand pose,
    gets :data:`SIGMA_FALLBACK_MM` for the IK part)."""
    from replay.checks.object_track import check_object_track

    kin = (rec.meta or {}).get("kinematics") or {}
    ik = (kin.get("ik_residual_mm") or {}).get("median")
    src = {"ik": "measured" if ik is not None else "fallback"}
    try:
        figs = check_object_track(rec)[1]
        noise = max((f.get("noise_rms_mm") or 0.0) for f in figs.values()) if figs else 0.0
        src["track"] = "measured"
    except Exception:  # noqa: BLE001 (a track the check cannot read: no noise term, said in the source)
        noise, src["track"] = 0.0, "unreadable"
    ik = SIGMA_FALLBACK_MM if ik is None else float(ik)
    return {"wrist_mm": float(np.hypot(ik, noise)), "object_mm": float(noise), "source": src}
