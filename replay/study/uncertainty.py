"""The sampled verdict's variables: each names its physics table row (or, for data, the recording's own accuracy)
and carries its own ``apply`` (the world's Variant fields).

Units: friction dimensionless (sliding) or m (torsional), solref (s, 1), solimp (1, 1, m), offsets m, sigmas mm
where named, grip force N, pad depth mm, mass scale 1."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np


@dataclass(frozen=True)
class Variable:
    """One sampled variable. ``kind``: ``uniform`` on [low, high], ``choice`` among ``levels`` (equal weight),
    ``normal`` (``dims``, per-recording sigma: the :func:`data_sigmas` key ``sigma``) or ``object`` (uniform on the
    recording's own range); ``centre``: the single run's value; ``apply(var, value, fields)``: the world's Variant
    fields with the value; ``driver(var, value)``: the number the verdict's driver reads (None: the value, or a
    vector's length)."""

    name: str
    kind: str
    distribution: str
    source: str
    low: float = 0.0
    high: float = 0.0
    levels: tuple = ()
    dims: int = 1
    centre: float | None = None
    apply: Callable | None = None
    driver: Callable | None = None
    sigma: str | None = None
    values: dict | None = None

    def record(self) -> dict:
        """``{name, distribution, source}`` (the study's ``sampling.variables``)."""
        return {"name": self.name, "distribution": self.distribution, "source": self.source}

    def keys(self, values: list) -> np.ndarray:
        """(n,) the numbers the driver reads of one value per sample."""
        if self.driver is not None:
            return np.array([self.driver(self, v) for v in values], float)
        if isinstance(values[0], tuple):
            return np.linalg.norm(np.asarray(values, float), axis=1)
        return np.asarray(values, float)


def _set(field: str, conv=float) -> Callable:
    """``apply`` of a data variable: sets Variant field ``field`` to the value (through ``conv``)."""
    return lambda var, value, fields: {**fields, field: conv(value)}


@cache
def _row(row: str) -> Callable:
    """``apply`` of a physics variable: the world takes table row ``row`` at the sample's value (a named level's
    value where the variable has ``values``)."""
    from replay.sim.engine.variants import row_fields

    def apply(var, value, fields: dict) -> dict:
        v = var.values[value] if var.values else value
        return {**fields, **row_fields({row: v}, {"grip_force_n": var.centre})}

    return apply


@dataclass(frozen=True)
class RowVariable:
    """A physics variable declared by its table row (a physics choice with a spread or levels); ``kind``
    ``object``: the object's own mass range."""

    name: str
    row: str
    what: str
    driver: Callable | None = None
    kind: str | None = None
    human_strength_only: bool = False  # drawn only where the fingers' strength is human

    @property
    def apply(self) -> Callable:
        """``apply`` of its :class:`Variable`."""
        return _row(self.row)


def _g(x) -> str:
    return f"{x:g}"


def _pair_text(i: int, solref, solimp) -> str:
    ref, imp = " ".join(map(_g, solref)), " ".join(map(_g, solimp))
    return f"solref {ref}, solimp {imp}" if i == 0 else f"{ref}, {imp}"


#: the physics variables, in sampling order (each drawn where its row in the config's physics has a spread or levels)
PHYSICS_VARIABLES = (
    RowVariable("friction", "hand_object_friction", "sliding friction of every hand-object contact"),
    RowVariable(
        "softness",
        "hand_object_softness",
        "equal weight, hand-object pairs",
        driver=lambda var, level: var.values[level][0][0],  # the solref time constant, s: larger is softer
    ),
    RowVariable(
        "torsional_friction",
        "hand_object_torsional_friction",
        "equal weight, hand and object geoms (MuJoCo takes the pair's maximum; condim 4 on the object)",
    ),
    RowVariable(
        "object_mass_scale",
        "object_mass_model",
        "uniform on the object's own mass range over its single-run mass (replay.sim.made_mass: a print's shell "
        "+ infill, a stated mass, or the asset's times object_mass_unstated_spread), inertia scaled with it",
        kind="object",
    ),
    RowVariable(
        "grip_force_n", "grip_force_n", "the fingers' maximal grip force together, N", human_strength_only=True
    ),
    RowVariable("pad_compression_mm", "pad_compression", "the finger pad compression depth, mm"),
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
        apply=_set("wrist_offset", tuple),
        sigma="wrist_mm",
    ),
    Variable(
        "object_offset",
        "normal",
        "normal on the two horizontal axes, world, sigma = the recording's object "
        "track noise (mm); vertical 0 (the object settles on the support)",
        "the recording's object track noise over the approach (replay.checks.object_track noise_rms_mm)",
        dims=2,
        apply=_set("object_offset", tuple),
        sigma="object_mm",
    ),
)


def physics_variables(cfg) -> tuple:
    """The physics variables ``cfg``'s physics samples: rows with a spread or levels, not overridden; the object's
    mass always; the grip force only where the fingers' strength is human."""
    from replay.sim import finger_strength, physics

    tab, over = physics.table(cfg.physics), cfg.physics_overrides or {}
    out = []
    for rv in PHYSICS_VARIABLES:
        row = tab[rv.row]
        if rv.kind == "object":
            source = f"physics {cfg.physics!r}, object_mass_model {physics.choice_value(cfg, rv.row)!r}: {row.source}"
            out.append(Variable(rv.name, "object", rv.what, source, centre=1.0, apply=rv.apply))
            continue
        if rv.row in over or not (row.spread or row.levels):
            continue
        if rv.human_strength_only and finger_strength.profile(cfg) != "human":
            continue
        out.append(_from_row(rv, row))
    return tuple(out)


def _from_row(rv: RowVariable, row) -> Variable:
    """The :class:`Variable` of ``rv`` drawn as its table ``row`` declares."""
    source = row.spread_source or row.source
    common = dict(apply=rv.apply, driver=rv.driver)
    if row.spread:
        lo, hi = (float(x) for x in row.spread)
        if row.value is None:  # as built: the range alone
            text = f"uniform on [{lo!r}, {hi!r}], {rv.what}"
            return Variable(rv.name, "uniform", text, source, low=lo, high=hi, **common)
        text = f"uniform on [{lo:g}, {hi:g}]: {rv.what} (physics choice {row.name}, centre {row.value:g})"
        return Variable(rv.name, "uniform", text, source, low=lo, high=hi, centre=float(row.value), **common)
    if isinstance(row.levels, dict):
        sets = ", ".join(f"{k} ({_pair_text(i, *v)})" for i, (k, v) in enumerate(row.levels.items()))
        text = f"one of {sets}, {rv.what}"
        return Variable(rv.name, "choice", text, source, levels=tuple(row.levels), values=dict(row.levels), **common)
    text = " or ".join(_g(x) for x in row.levels) + f" m, {rv.what}"
    return Variable(rv.name, "choice", text, source, levels=tuple(row.levels), **common)


def variables(cfg) -> tuple:
    """Every sampled variable of ``cfg``'s physics, in sampling order."""
    return physics_variables(cfg) + DATA_VARIABLES


def sample_fields(sample: dict, variables: tuple) -> dict:
    """The Variant fields of one joint sample ``{variable: value}`` (each variable's ``apply``, in order)."""
    fields: dict = {}
    for v in variables:
        if v.name in sample:
            fields = v.apply(v, sample[v.name], fields)
    return fields


def object_ranges(rec, cfg) -> dict:
    """``{object_mass_scale: (low, high), object_mass: MadeMass record}`` of ``rec``'s object under ``cfg``. Raises
    DataError: a mesh missing or unreadable."""
    from replay.sim.made_mass import made_mass

    mm = made_mass(rec.target_object.asset, cfg)
    return {"object_mass_scale": mm.scale_range(), "object_mass": mm.record()}


#: sigma floor, mm: a recording whose residual cannot be read gets this (stated in its record)
SIGMA_FALLBACK_MM = 2.0


def data_sigmas(rec) -> dict:
    """``{wrist_mm, object_mm, source}``: the data variables' sigmas, mm, of recording ``rec`` (cropped as
    replayed); ``source``: ``measured``, ``fallback`` (:data:`SIGMA_FALLBACK_MM`: no IK fit) or ``unreadable``."""
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
