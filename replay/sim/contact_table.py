"""The contact parameters MuJoCo uses between hand bone and object part, read from the compiled model
(:mod:`importer_patches.contact_params`), flagging a configured value no pair uses."""

from __future__ import annotations

from importer_patches.contact_params import GeomParams, pair_params
from replay.sim.solver_view import SolverView

#: MANO's 16 bones in manosim's body order (manosim README: 0 palm, 1-3 index, 4-6 middle, 7-9 pinky, 10-12 ring,
#: 13-15 thumb)
BONE_NAMES = ("palm",) + tuple(f"{f}_{k}" for f in ("index", "middle", "pinky", "ring", "thumb") for k in (1, 2, 3))


def hand_object_table(scene) -> dict:
    """Per (hand bone, object part) class, what MuJoCo uses: ``{"pairs": [{"hand", "object_part", "condim", "friction"
    (3,), "solref" (2,), "solimp" (5,), "margin" m, "gap" m, "rule", "taken_from"}], "classes", "flags"}``; ``flags``
    name each bone whose priority discards the object's values."""
    view = SolverView(scene.solver)
    m = view.mj_model
    g2s = view.to_newton("mjc_geom_to_newton_shape")[: m.ngeom]
    hand = {int(s): i for i, s in enumerate(scene.hand_shapes)}
    shape_body = scene.model.shape_body.numpy()
    body_bone = {int(b): k for k, b in enumerate(scene.hand_bodies)}
    obj = [int(s) for s in scene.object_shapes]
    hand_geoms = [g for g, s in enumerate(g2s) if int(s) in hand]
    obj_geoms = [g for g, s in enumerate(g2s) if int(s) in set(obj)]
    rows, flags = [], []
    for hg in hand_geoms:
        bone = BONE_NAMES[body_bone.get(int(shape_body[g2s[hg]]), 0)]
        for part, og in enumerate(obj_geoms):
            p = pair_params(m, hg, og)
            d = p.as_dict()
            d.pop("winner")
            taken = None if p.winner < 0 else ("hand" if p.winner == hg else "object")
            rows.append({"hand": bone, "object_part": part, **d, "taken_from": taken})
            if taken == "hand":
                flags.append(_discarded(bone, GeomParams.of(m, og), p))
    flags = sorted({f for f in flags if f})
    if rows and all(r["taken_from"] == "hand" for r in rows):
        flags.append("object friction/solref/solimp reach no hand contact: every hand geom has a higher priority")
    keys = {(r["condim"], tuple(r["friction"]), tuple(r["solref"]), tuple(r["solimp"])) for r in rows}
    return {"pairs": _merge_parts(rows), "classes": len(keys), "flags": flags}


def _discarded(bone: str, obj: GeomParams, used) -> str | None:
    """A flag naming the object values a higher-priority hand geom threw away, or None."""
    lost = []
    if obj.condim != used.condim:
        lost.append(f"condim {obj.condim} -> {used.condim}")
    if abs(obj.friction[0] - used.friction[0]) > 1e-9:
        lost.append(f"friction {obj.friction[0]:g} -> {used.friction[0]:g}")
    if any(abs(a - b) > 1e-9 for a, b in zip(obj.solref, used.solref)):
        lost.append(f"solref {' '.join(f'{x:g}' for x in obj.solref)} -> {' '.join(f'{x:g}' for x in used.solref)}")
    if not lost:
        return None
    return f"{bone} (higher contact priority) discards the object's " + ", ".join(lost) + " in its contacts"


def _merge_parts(rows: list[dict]) -> list[dict]:
    """One row per (hand bone, parameter set), equal object parts folded into ``object_parts``."""
    out: dict = {}
    for r in rows:
        key = (r["hand"], r["condim"], tuple(r["friction"]), tuple(r["solref"]), tuple(r["solimp"]), r["rule"])
        if key not in out:
            out[key] = {k: v for k, v in r.items() if k != "object_part"} | {"object_parts": []}
        out[key]["object_parts"].append(r["object_part"])
    return list(out.values())
