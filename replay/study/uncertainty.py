"""The sampled verdict's declared distributions (issue #46), each with its source.

Physics uncertainty (:data:`PHYSICS_VARIABLES`, the same for every recording) and data uncertainty
(:data:`DATA_VARIABLES`, scaled per recording by its own measured accuracy,
:func:`data_sigmas`) are sampled jointly (:mod:`replay.study.sampler`). Conditions are not here:
they are assumptions, reported apart (:mod:`replay.study.verdict_conditions`).

Units: friction coefficients dimensionless (sliding) or m (torsional), solref (s, 1), solimp
(1, 1, m), offsets m, sigmas mm where named.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Variable:
    """One sampled variable: ``name``, ``kind`` (``uniform`` on [low, high], ``choice`` among
    ``levels`` with equal weight, ``normal`` (dims, per-recording sigma)), its ``distribution`` in
    words and ``source``."""

    name: str
    kind: str
    distribution: str
    source: str
    low: float = 0.0
    high: float = 0.0
    levels: tuple = ()
    dims: int = 1

    def record(self) -> dict:
        """``{name, distribution, source}`` (the study's ``sampling.variables``)."""
        return {"name": self.name, "distribution": self.distribution, "source": self.source}


#: contact softness sets: name -> (solref (timeconst s, dampratio), solimp (dmin, dmax, width m))
SOFTNESS = {
    "mujoco_default": ((0.02, 1.0), (0.9, 0.95, 0.001)),
    "manosim_soft": ((0.04, 1.0), (0.5, 0.95, 0.001)),
    "manosim_stiff": ((0.004, 1.0), (0.99, 0.9999, 0.0005)),
}

PHYSICS_VARIABLES = (
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
    Variable(
        "object_mass_scale",
        "uniform",
        "uniform on [0.8, 1.2] times the asset's mass (inertia scaled with it)",
        "object_sim's 1250 kg/m^3 for every GRAB object is a solid-plastic density (PLA 1.21-1.25 g/cm^3, Farah, "
        "Anderson & Langer 2016, Adv. Drug Deliv. Rev. 107:367-392); the printed objects' infill and hollowness "
        "are unstated: +-20 % declared (our choice)",
        low=0.8,
        high=1.2,
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

#: every sampled variable, in sampling order
VARIABLES = PHYSICS_VARIABLES + DATA_VARIABLES

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
