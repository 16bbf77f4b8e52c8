"""Edits of a world's compiled ``MjModel`` for its :class:`~replay.sim.engine.variants.Variant`, each read back; every
field one MuJoCo lists as changeable (MuJoCo docs, Programming > Simulation, "mjModel changes")."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np

from importer_patches.contact_params import pair_params
from replay.errors import AblationMaskError, EngineError
from replay.sim.engine import pair_audit
from replay.sim.engine.layout import MjLayout
from replay.sim.engine.variants import Variant


def _collides(ct: np.ndarray, ca: np.ndarray) -> np.ndarray:
    """(ngeom, ngeom) bool: MuJoCo's contype/conaffinity test for every geom pair."""
    return ((ct[:, None] & ca[None, :]) != 0) | ((ct[None, :] & ca[:, None]) != 0)


def ablate_hand_object(m: mujoco.MjModel, layout: MjLayout) -> int:
    """Give the object's geoms, and every non-hand geom colliding with it, a contype/conaffinity bit no hand geom uses;
    only hand-object pairs may change. Returns the bit. Raises AblationMaskError: no usable bit."""
    ct, ca = m.geom_contype.astype(np.int64), m.geom_conaffinity.astype(np.int64)
    hand, obj = layout.hand_geoms, layout.object_geoms
    body = np.asarray(m.geom_bodyid)
    # pairs MuJoCo can collide at all: different bodies, not both static (world body 0)
    live = (body[:, None] != body[None, :]) & ~((body[:, None] == 0) & (body[None, :] == 0))
    before = _collides(ct, ca)
    partners = np.flatnonzero(~hand & ~obj & before[:, obj].any(axis=1))
    hand_bits = int(np.bitwise_or.reduce(ct[hand]) | np.bitwise_or.reduce(ca[hand]))
    ho = hand[:, None] & obj[None, :]
    ho = ho | ho.T
    for k in range(31):
        bit = 1 << k
        if hand_bits & bit:
            continue
        ct2, ca2 = ct.copy(), ca.copy()
        ct2[obj] = bit
        ca2[obj] = bit
        ct2[partners] |= bit
        ca2[partners] |= bit
        after = _collides(ct2, ca2)
        keep = live & ~ho
        if not (after & ho & live).any() and np.array_equal(after[keep], before[keep]):
            m.geom_contype[:] = ct2
            m.geom_conaffinity[:] = ca2
            return bit
    raise AblationMaskError("no contype/conaffinity bit filters hand-object pairs alone")


def set_options(m: mujoco.MjModel, options) -> dict:
    """Set ``m``'s scalar ``mjOption`` fields ``((name, value), ...)``, read back. Raises EngineError: an unknown or
    non-scalar field, or a value that did not take."""
    got = {}
    for name, value in options:
        cur = getattr(m.opt, name, None)
        if cur is None or isinstance(cur, np.ndarray) or callable(cur):
            raise EngineError(f"variant option {name!r} is not a scalar mjOption field")
        setattr(m.opt, name, type(cur)(value))
        got[name] = float(getattr(m.opt, name))
        if got[name] != float(value):
            raise EngineError(f"variant option {name} = {value} did not take: the model holds {got[name]}")
    return got


def apply_variant(m: mujoco.MjModel, layout: MjLayout, v: Variant, *, prebuilt_ablation: bool = False) -> dict:
    """Edit a world's compiled model for ``v`` and read every edited value back (for the results). Ablation:
    :func:`ablate_hand_object` unless ``prebuilt_ablation``. Friction: the fewest geoms' ``geom_friction[:, 0]`` giving
    every hand-object contact the value (:func:`replay.sim.engine.pair_audit.set_hand_object_friction`; other pair
    classes changed: ``friction_side_effects``). Effort: the finger actuators' ``actuator_forcerange``. Mass:
    ``body_mass`` and ``body_inertia`` scaled, then ``mj_setConst``. Values rounded to float32 first, as Newton stores
    them.

    Raises:
        EngineError: a value did not take. AblationMaskError: :func:`ablate_hand_object`."""
    out: dict = {}
    f32 = lambda x: None if x is None else float(np.float32(x))  # noqa: E731 (Newton's model parameters are float32)
    v = dataclasses.replace(
        v,
        friction=f32(v.friction),
        effort_limit=f32(v.effort_limit),
        object_mass=f32(v.object_mass),
        torsional_friction=f32(v.torsional_friction),
    )
    if v.friction is not None:  # on as few geoms as reach every hand-object pair (pair_audit)
        out.update(pair_audit.set_hand_object_friction(m, layout, v.friction))
    fa = layout.finger_act
    want_range = None
    if v.effort_limit is not None:
        want_range = np.full(len(fa), v.effort_limit)
    if v.effort_scale is not None:
        base = m.actuator_forcerange[fa, 1] if want_range is None else want_range
        want_range = np.float32(np.asarray(base, np.float64) * v.effort_scale).astype(np.float64)
    if want_range is not None:
        m.actuator_forcerange[fa, 0] = -want_range
        m.actuator_forcerange[fa, 1] = want_range
        m.actuator_forcelimited[fa] = 1
        got = np.asarray(m.actuator_forcerange[fa, 1], np.float64)
        if not np.allclose(got, want_range, rtol=1e-6):
            raise EngineError(f"variant finger force range {want_range} did not take: the model holds {got}")
        out["finger_forcerange"] = float(got[0])
        out["finger_forcerange_per_joint"] = [float(got[layout.finger_joint == j].max()) for j in range(15)]
    want_mass = _object_mass(m, layout, v)
    if want_mass is not None:
        b = layout.object_body
        scale = want_mass / float(m.body_mass[b])
        m.body_mass[b] = want_mass
        m.body_inertia[b] = m.body_inertia[b] * scale
        d = mujoco.MjData(m)
        mujoco.mj_setConst(m, d)
        out["object_mass"] = float(m.body_mass[b])
    out.update(_contact_edits(m, layout, v))
    if v.options:  # mjOption scalars: MuJoCo reads them every step (no recompile)
        out["options"] = set_options(m, v.options)
    if v.ablation and not prebuilt_ablation:
        out["ablation_bit"] = ablate_hand_object(m, layout)
    checks = [
        ("contact_friction", v.friction),
        ("object_mass", want_mass),
        ("torsional_friction", v.torsional_friction),
        ("contact_solref", v.solref),
        ("contact_solimp", v.solimp),
    ]
    for key, want in checks:
        if want is not None and not np.allclose(out[key], want, rtol=1e-6):
            raise EngineError(f"variant {key} = {want} did not take: the model holds {out[key]}")
    return out


def _object_mass(m: mujoco.MjModel, layout: MjLayout, v: Variant) -> float | None:
    """The object mass ``v`` asks for, kg, float32-rounded, or None when it sets none."""
    if v.object_mass is None and v.object_mass_scale is None:
        return None
    base = v.object_mass if v.object_mass is not None else float(m.body_mass[layout.object_body])
    return float(np.float32(base * (1.0 if v.object_mass_scale is None else v.object_mass_scale)))


def _contact_edits(m: mujoco.MjModel, layout: MjLayout, v: Variant) -> dict:
    """``v``'s solref / solimp / torsional friction on hand and object geoms; one pair's values read back."""
    out: dict = {}
    geoms = np.flatnonzero(layout.hand_geoms | layout.object_geoms)
    if v.solref is not None:
        m.geom_solref[geoms] = np.asarray(v.solref, np.float64)
    if v.solimp is not None:
        m.geom_solimp[geoms, :3] = np.asarray(v.solimp, np.float64)
    if v.torsional_friction is not None:
        m.geom_friction[geoms, 1] = v.torsional_friction
    if v.solref is None and v.solimp is None and v.torsional_friction is None:
        return out
    h, o = int(np.flatnonzero(layout.hand_geoms)[0]), int(np.flatnonzero(layout.object_geoms)[0])
    p = pair_params(m, h, o)  # MuJoCo's own mixing (or the explicit <pair>) of a hand-object pair
    if v.solref is not None:
        out["contact_solref"] = [float(x) for x in p.solref[:2]]
    if v.solimp is not None:
        out["contact_solimp"] = [float(x) for x in p.solimp[:3]]
    if v.torsional_friction is not None:
        out["torsional_friction"] = float(p.friction[1])
    return out


def initial_state_edits(d: mujoco.MjData, layout: MjLayout, v: Variant) -> dict:
    """Shift the object in ``d.qpos`` by ``v.object_offset`` (m, world); ``{"object_initial_pos": (3,) m}`` or {}."""
    if not any(v.object_offset):
        return {}
    q = layout.object_qadr
    d.qpos[q : q + 3] += np.asarray(v.object_offset)
    return {"object_initial_pos": [float(x) for x in d.qpos[q : q + 3]]}
