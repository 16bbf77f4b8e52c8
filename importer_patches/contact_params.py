"""The contact parameters MuJoCo will actually use for a pair of geoms.

A value set on one geom does not reach a contact as set: MuJoCo combines the two geoms'
values when it makes the contact (``mj_contactParam`` in MuJoCo's
``engine_collision_driver.c``; the rules are in the MuJoCo documentation, "Contact
parameters" under Computation / Modeling):

* different ``priority``: the higher-priority geom's ``condim``, ``friction``, ``solref``
  and ``solimp`` are used outright, the other's are ignored;
* equal priority: ``condim`` and each ``friction`` coefficient are the maximum of the
  two; ``solref`` and ``solimp`` are mixed with the weight
  ``mix = solmix1 / (solmix1 + solmix2)`` (0.5 when both ``solmix`` are 0, 0 or 1 when only
  one is), ``solref`` as a weighted average when both are in the standard
  (time constant, damping ratio) form, else element by element the minimum;
* ``margin`` and ``gap`` are the maximum of the two, whatever the priority.

An explicit ``<pair>`` replaces all of this for its two geoms; :func:`pair_params`
reads those from ``m.pair_*`` first. Tested against the solver's own contact rows
(``d.contact``) in ``tests/test_contact_params.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: MuJoCo's mjMINVAL (mjmodel.h): a solmix below it counts as zero
MJ_MINVAL = 1e-15


@dataclass(frozen=True)
class PairParams:
    """What MuJoCo uses for contacts between two geoms.

    Attributes:
        condim: contact dimensionality (1, 3, 4 or 6).
        friction: (3,) sliding (-), torsional (m), rolling (m) coefficients, as MuJoCo's
            ``geom_friction`` (its 5-vector ``contact.friction`` is (s, s, t, r, r)).
        solref: (2,) (time constant s, damping ratio) or, negative, (-stiffness, -damping).
        solimp: (5,) (dmin, dmax, width m, midpoint, power).
        margin: m. gap: m.
        rule: ``"pair"`` (an explicit <pair>), ``"priority"`` (one geom's values taken
            outright) or ``"mixed"`` (equal priority: max and solmix average).
        winner: index of the geom whose values were taken under ``"priority"``, else -1.
    """

    condim: int
    friction: tuple
    solref: tuple
    solimp: tuple
    margin: float
    gap: float
    rule: str
    winner: int = -1

    def as_dict(self) -> dict:
        """JSON-ready copy (lists of floats), fields in declaration order (as ``dataclasses.asdict``, without
        its recursive deep copy: a scene's read-back makes one per hand-object geom pair)."""
        return {"condim": self.condim, "friction": [float(x) for x in self.friction],
                "solref": [float(x) for x in self.solref], "solimp": [float(x) for x in self.solimp],
                "margin": self.margin, "gap": self.gap, "rule": self.rule, "winner": self.winner}


def _explicit_pair(m, g1: int, g2: int) -> PairParams | None:
    for p in range(int(m.npair)):
        a, b = int(m.pair_geom1[p]), int(m.pair_geom2[p])
        if {a, b} == {g1, g2}:
            fr = m.pair_friction[p]  # (5,): s1 s2 t r1 r2
            return PairParams(int(m.pair_dim[p]), (float(fr[0]), float(fr[2]), float(fr[3])),
                              tuple(float(x) for x in m.pair_solref[p]), tuple(float(x) for x in m.pair_solimp[p]),
                              float(m.pair_margin[p]), float(m.pair_gap[p]), "pair")
    return None


def solmix_weight(s1: float, s2: float) -> float:
    """Weight of geom 1's solref/solimp in an equal-priority pair (MuJoCo's rule)."""
    if s1 >= MJ_MINVAL and s2 >= MJ_MINVAL:
        return s1 / (s1 + s2)
    if s1 < MJ_MINVAL and s2 < MJ_MINVAL:
        return 0.5
    return 0.0 if s1 < MJ_MINVAL else 1.0


@dataclass(frozen=True)
class GeomParams:
    """One geom's own contact attributes, as compiled (``m.geom_*``): condim, priority,
    solmix, friction (3,), solref (2,), solimp (5,), margin m, gap m."""

    condim: int
    priority: int
    solmix: float
    friction: tuple
    solref: tuple
    solimp: tuple
    margin: float = 0.0
    gap: float = 0.0

    @classmethod
    def of(cls, m, g: int) -> "GeomParams":
        """Geom ``g`` of the compiled ``mujoco.MjModel`` ``m``.

        Raises:
            IndexError: ``g`` outside ``0..m.ngeom-1``.
        """
        if not 0 <= g < m.ngeom:
            raise IndexError(f"geom {g} not in 0..{m.ngeom - 1}")
        return cls(int(m.geom_condim[g]), int(m.geom_priority[g]), float(m.geom_solmix[g]),
                   tuple(float(x) for x in m.geom_friction[g]), tuple(float(x) for x in m.geom_solref[g]),
                   tuple(float(x) for x in m.geom_solimp[g]), float(m.geom_margin[g]), float(m.geom_gap[g]))


#: a geom that sets nothing: MuJoCo's defaults (MJCF reference, <geom>): condim 3,
#: friction "1 0.005 0.0001", solref "0.02 1", solimp "0.9 0.95 0.001 0.5 2", solmix 1
MUJOCO_DEFAULT_GEOM = GeomParams(3, 0, 1.0, (1.0, 0.005, 0.0001), (0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0))


def combine(a: GeomParams, b: GeomParams) -> PairParams:
    """What MuJoCo uses for contacts between geoms with attributes ``a`` and ``b`` (no
    explicit <pair>; the module docstring gives the rules). ``winner`` is 0 when ``a``'s
    values were taken outright, 1 for ``b``'s, -1 when mixed."""
    margin, gap = max(a.margin, b.margin), max(a.gap, b.gap)
    if a.priority != b.priority:
        w, k = (a, 0) if a.priority > b.priority else (b, 1)
        return PairParams(w.condim, w.friction, w.solref, w.solimp, margin, gap, "priority", k)
    mix = solmix_weight(a.solmix, b.solmix)
    r1, r2 = np.asarray(a.solref, float), np.asarray(b.solref, float)
    solref = mix * r1 + (1 - mix) * r2 if (r1[0] > 0 and r2[0] > 0) else np.minimum(r1, r2)
    solimp = mix * np.asarray(a.solimp, float) + (1 - mix) * np.asarray(b.solimp, float)
    friction = np.maximum(a.friction, b.friction)
    return PairParams(max(a.condim, b.condim), tuple(float(x) for x in friction), tuple(float(x) for x in solref),
                      tuple(float(x) for x in solimp), margin, gap, "mixed")


def pair_params(m, g1: int, g2: int) -> PairParams:
    """The parameters MuJoCo uses for contacts between geoms ``g1`` and ``g2`` of the
    compiled ``mujoco.MjModel`` ``m``: an explicit <pair> if one names them, else
    :func:`combine` of their attributes (``winner`` then is the geom index taken outright,
    -1 when mixed).

    Raises:
        IndexError: a geom index outside ``0..m.ngeom-1``.
    """
    a, b = GeomParams.of(m, g1), GeomParams.of(m, g2)
    explicit = _explicit_pair(m, g1, g2)
    if explicit is not None:
        return explicit
    p = combine(a, b)
    if p.winner >= 0:
        p = PairParams(*[getattr(p, f) for f in ("condim", "friction", "solref", "solimp", "margin", "gap", "rule")],
                       winner=(g1, g2)[p.winner])
    return p


def contact_row_params(d, i: int) -> dict:
    """What the solver holds for contact row ``i`` of ``mujoco.MjData`` ``d``: geoms,
    condim, friction (3,) as (sliding, torsional, rolling), solref (2,), solimp (5,)."""
    c = d.contact[i]
    fr = np.asarray(c.friction, float)
    return {"geom1": int(c.geom1), "geom2": int(c.geom2), "condim": int(c.dim),
            "friction": [float(fr[0]), float(fr[2]), float(fr[3])],
            "solref": [float(x) for x in c.solref], "solimp": [float(x) for x in c.solimp]}
