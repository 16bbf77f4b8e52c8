"""The contact parameters MuJoCo uses for every colliding geom pair, by pair class: a geom's ``friction`` reaches every
pair it is in, so an edit for hand-object contacts may change others (:func:`changed_classes`)."""

from __future__ import annotations

from functools import lru_cache

import mujoco
import numpy as np

from importer_patches.contact_params import GeomParams, combine, pair_params

#: pair classes, by the sides of the two geoms (H hand, O object, S support and everything else)
CLASS_NAMES = {
    frozenset("HO"): "hand-object",
    frozenset("OS"): "object-support",
    frozenset("HS"): "hand-support",
    frozenset("H"): "hand-hand",
    frozenset("S"): "support-support",
    frozenset("O"): "object-object",
}


def _side(layout, g: int) -> str:
    return "H" if layout.hand_geoms[g] else ("O" if layout.object_geoms[g] else "S")


def colliding_pairs(m: mujoco.MjModel) -> list[tuple[int, int]]:
    """Geom pairs (a < b) MuJoCo's collision filter admits (contype/conaffinity, bodies, static, exclude, parent)."""
    ct, ca = m.geom_contype.astype(np.int64), m.geom_conaffinity.astype(np.int64)
    ok = ((ct[:, None] & ca[None, :]) != 0) | ((ct[None, :] & ca[:, None]) != 0)
    body = np.asarray(m.geom_bodyid)
    excl = {int(s) for s in np.asarray(m.exclude_signature).ravel()}
    filter_parent = not (int(m.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_FILTERPARENT))
    out = []
    for a, b in zip(*np.nonzero(np.triu(ok, 1))):
        ba, bb = int(body[a]), int(body[b])
        if ba == bb or (ba == 0 and bb == 0):
            continue
        lo, hi = min(ba, bb), max(ba, bb)
        if (lo << 16) + hi in excl:
            continue
        wa, wb = int(m.body_weldid[ba]), int(m.body_weldid[bb])
        if (
            filter_parent
            and (int(m.body_weldid[m.body_parentid[wa]]) == wb or int(m.body_weldid[m.body_parentid[wb]]) == wa)
            and wa != 0
            and wb != 0
        ):
            continue
        out.append((int(a), int(b)))
    return out


def pair_classes(m: mujoco.MjModel, layout, pairs: list[tuple[int, int]] | None = None) -> dict:
    """``{(a, b): (class, (condim, friction (3,), solref (2,), solimp (5,), margin m, gap m))}`` for every colliding
    pair (:func:`importer_patches.contact_params.pair_params`)."""
    out = {}
    geoms: dict = {}
    for a, b in pairs if pairs is not None else colliding_pairs(m):
        cls = CLASS_NAMES[frozenset(_side(layout, a) + _side(layout, b))]
        if int(m.npair):  # an explicit <pair> may name these two: MuJoCo's rules pair by pair
            out[(a, b)] = (cls, _as_tuple(pair_params(m, a, b)))
            continue
        for g in (a, b):  # each geom's attributes read once per call, each distinct two combined once
            if g not in geoms:
                geoms[g] = GeomParams.of(m, g)
        out[(a, b)] = (cls, _combined(geoms[a], geoms[b]))
    return out


def _as_tuple(p) -> tuple:
    return (
        p.condim,
        tuple(np.float32(p.friction)),
        tuple(np.float32(p.solref)),
        tuple(np.float32(p.solimp)),
        np.float32(p.margin),
        np.float32(p.gap),
    )


@lru_cache(maxsize=8192)
def _combined(a: GeomParams, b: GeomParams) -> tuple:
    """The parameters of two geoms without an explicit pair (:func:`importer_patches.contact_params.combine`)."""
    return _as_tuple(combine(a, b))


def changed_classes(before: dict, after: dict) -> dict:
    """``{class: pairs whose parameters differ}`` between two :func:`pair_classes` results of one model."""
    out: dict = {}
    for k, (cls, p) in before.items():
        if after[k][1] != p:
            out[cls] = out.get(cls, 0) + 1
    return out


def set_hand_object_friction(m: mujoco.MjModel, layout, mu: float) -> dict:
    """Set every hand-object contact's sliding friction to ``mu`` in place, on the hand's geoms, else the object's, else
    both: the first that changes no other pair class, else the fewest.

    Returns ``{"contact_friction" (NaN if the pairs differ), "friction_geoms": "hand" | "object" | "hand+object",
    "friction_side_effects": {class: pairs changed}}``."""
    pairs = colliding_pairs(m)
    hg, og = np.flatnonzero(layout.hand_geoms), np.flatnonzero(layout.object_geoms)
    before = pair_classes(m, layout, pairs)
    if not any(c == "hand-object" for c, _ in before.values()):
        # a prebuilt contact ablation: judge the pairs its contact run has, so both runs edit the same geoms
        pairs = pairs + [(int(min(a, b)), int(max(a, b))) for a in hg for b in og]
        before = pair_classes(m, layout, pairs)
    orig = m.geom_friction[:, 0].copy()
    best = None
    for name, geoms in (("hand", hg), ("object", og), ("hand+object", np.concatenate([hg, og]))):
        m.geom_friction[:, 0] = orig
        m.geom_friction[geoms, 0] = mu
        after = pair_classes(m, layout, pairs)
        ho = [p[1][1][0] for p in after.values() if p[0] == "hand-object"]
        if not ho or not np.allclose(ho, mu, rtol=1e-6):
            continue
        side = {c: n for c, n in changed_classes(before, after).items() if c != "hand-object"}
        if best is None or sum(side.values()) < sum(best[2].values()):
            best = (name, geoms, side, float(ho[0]))
        if not side:
            break
    if best is None:  # no geom set reaches every hand-object pair (an explicit <pair> would be needed)
        m.geom_friction[:, 0] = orig
        return {"contact_friction": float("nan"), "friction_geoms": "none", "friction_side_effects": {}}
    name, geoms, side, got = best
    m.geom_friction[:, 0] = orig
    m.geom_friction[geoms, 0] = mu
    return {"contact_friction": got, "friction_geoms": name, "friction_side_effects": side}
