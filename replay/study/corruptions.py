"""Declared corruptions of a recording (``run_study.py --corruptions``, issue #46), each with its
source: does the lift verdict tell a real grasp from a broken one?

:data:`CORRUPTIONS` is the one table. ``variant`` corruptions are worlds of the recording's own
batch (a Variant field added to every sample: the wrist offset, the fingers' opening);
``scene`` corruptions need a scene of their own (the object model scaled: its collision and
visual meshes rewritten scaled about the object frame's origin, :func:`scaled_recording`).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.errors import DataError

#: the wrist offset of the HUG test, m (horizontal, a random direction per sample)
WRIST_OFFSET_M = 0.02
#: the fingers' opening toward the rest pose, deg (every finger, from the approach's last part on)
FINGERS_OPEN_DEG = 20.0
#: the object model's scale factor (collision and visual meshes, about the object frame's origin)
OBJECT_SCALE = 0.8

_HUG = "HUG (Human Universal Grasping, arXiv:2606.17054): a 2 cm wrist offset roughly halves the oracle's success"


@dataclass(frozen=True)
class Corruption:
    """One corruption: ``name``, ``kind`` (``variant`` or ``scene``), ``source`` and its HUG
    ``reference`` ratio (success corrupted / real) where the paper gives one, else None."""

    name: str
    kind: str
    source: str
    reference: float | None = None


CORRUPTIONS = (
    Corruption(
        "wrist_offset_2cm",
        "variant",
        _HUG + " (the paper's test: 2 cm in a random horizontal direction); added to every wrist target of the sample",
        reference=0.5,
    ),
    Corruption(
        f"fingers_open_{FINGERS_OPEN_DEG:g}deg",
        "variant",
        f"our choice: every finger turned {FINGERS_OPEN_DEG:g} deg back toward extension (the rest pose) about "
        "its joints' flexion axes from the approach's last part on (Variant.finger_closure negative, "
        "replay.protocol.finger_closure): a grasp that never closes as the person's did",
    ),
    Corruption(
        f"object_scale_{OBJECT_SCALE:g}",
        "scene",
        f"our choice: the object's meshes scaled by {OBJECT_SCALE:g} about its frame's origin (mass from the "
        "scaled volume at the asset's density, or the asset's mass where it states one): the hand replayed "
        "on an object that is not the one recorded",
    ),
)

#: corruption name -> Corruption
BY_NAME = {c.name: c for c in CORRUPTIONS}


def parse_corruptions(text: str | bool | None) -> list[str]:
    """``--corruptions`` (``all`` / True: every one; ``a,b``: those) as names; [] for None / False / ''.

    Raises:
        DataError: an unknown name (the known ones listed)."""
    if not text:
        return []
    if text is True or str(text).strip() == "all":
        return [c.name for c in CORRUPTIONS]
    names = list(dict.fromkeys(x.strip() for x in str(text).split(",") if x.strip()))
    bad = [n for n in names if n not in BY_NAME]
    if bad:
        raise DataError(None, "--corruptions", f"unknown corruption(s) {bad}; choose from all, {', '.join(BY_NAME)}")
    return names


def variant_extra(name: str, direction: float) -> dict:
    """The Variant fields corruption ``name`` (``variant`` kind) adds to a sample: ``wrist_offset`` (3,) m
    along the horizontal ``direction`` (rad), or ``finger_closure`` (5,) rad."""
    if name == "wrist_offset_2cm":
        return {
            "wrist_offset": (WRIST_OFFSET_M * float(np.cos(direction)), WRIST_OFFSET_M * float(np.sin(direction)), 0.0)
        }
    if name.startswith("fingers_open_"):
        return {"finger_closure": (-float(np.radians(FINGERS_OPEN_DEG)),) * 5}
    raise ValueError(f"{name!r} is not a variant corruption")


def scaled_recording(rec, factor: float, folder: Path):
    """A copy of ``rec`` whose target object's collision and visual meshes are scaled by ``factor``
    about the object frame's origin, written as STL under ``folder``; an asset ``mass`` is kept,
    else the mass follows the scaled volume at the asset's density.

    Raises:
        DataError: a mesh cannot be read (names the file)."""
    import trimesh

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    track = rec.target_object
    asset = track.asset

    def scaled(p: Path, i: int) -> Path:
        try:
            m = trimesh.load(p, force="mesh")
        except Exception as e:  # trimesh raises many types
            raise DataError(p, None, f"cannot read mesh to scale: {e}") from None
        m.apply_scale(float(factor))
        out = folder / f"{i:03d}_{Path(p).stem}.stl"
        m.export(out)
        return out

    cols = [scaled(p, i) for i, p in enumerate(asset.collision_meshes)]
    vis = scaled(asset.visual_mesh, len(cols))
    out = copy.copy(rec)
    out.objects = list(rec.objects)
    out.objects[rec.target] = dataclasses.replace(
        track, asset=dataclasses.replace(asset, name=asset.name, collision_meshes=cols, visual_mesh=vis)
    )
    out.meta = dict(rec.meta, object_scale=float(factor))
    return out
