"""Declared corruptions of a recording (``run_study.py --corruptions``, docs/verdict.md), each registered with its
own edit: of a sample's Variant (:class:`WorldCorruption`) or of the recording (:class:`SceneCorruption`)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.errors import DataError

_HUG = "HUG (Human Universal Grasping, arXiv:2606.17054): a 2 cm wrist offset roughly halves the oracle's success"


@dataclass(frozen=True)
class Corruption:
    """One corruption; ``reference``: HUG's ratio of success corrupted / real, None where the paper gives none."""

    name: str
    source: str
    reference: float | None = None


@dataclass(frozen=True)
class WorldCorruption(Corruption):
    """A world of the recording's batch: ``apply(variant, direction rad)`` -> the sample's Variant corrupted."""

    apply: Callable = None


@dataclass(frozen=True)
class SceneCorruption(Corruption):
    """A scene of its own: ``apply(rec, folder)`` -> a copy of the recording corrupted (files under ``folder``)."""

    apply: Callable = None


_REGISTRY: dict[str, Corruption] = {}


def register(c: Corruption) -> Corruption:
    """Add corruption ``c`` (returned). Raises ValueError: a name registered already, or no ``apply``."""
    if c.name in _REGISTRY:
        raise ValueError(f"corruption {c.name!r} is registered already")
    if not callable(getattr(c, "apply", None)):
        raise ValueError(f"corruption {c.name!r} has no apply")
    _REGISTRY[c.name] = c
    return c


def unregister(name: str) -> None:
    """Remove a registered corruption (tests)."""
    _REGISTRY.pop(name, None)


def corruption_named(name: str) -> Corruption:
    """The registered corruption ``name``. Raises KeyError."""
    return _REGISTRY[name]


def corruption_names() -> tuple[str, ...]:
    """Every registered corruption's name, in registration order."""
    return tuple(_REGISTRY)


def parse_corruptions(text: str | bool | None) -> list[str]:
    """``--corruptions`` (``all`` / True: every one; ``a,b``: those) as names; [] for None / False / ''. Raises
    DataError: an unknown name (the known ones listed)."""
    if not text:
        return []
    if text is True or str(text).strip() == "all":
        return list(_REGISTRY)
    names = list(dict.fromkeys(x.strip() for x in str(text).split(",") if x.strip()))
    bad = [n for n in names if n not in _REGISTRY]
    if bad:
        raise DataError(None, "--corruptions", f"unknown corruption(s) {bad}; choose from all, {', '.join(_REGISTRY)}")
    return names


def offset_wrist(metres: float) -> Callable:
    """``apply`` of a wrist offset of ``metres`` along the sample's horizontal direction, added to its own."""

    def apply(v, direction: float):
        off = (metres * float(np.cos(direction)), metres * float(np.sin(direction)), 0.0)
        return dataclasses.replace(v, wrist_offset=tuple(np.asarray(v.wrist_offset, float) + np.asarray(off, float)))

    return apply


def open_fingers(deg: float) -> Callable:
    """``apply`` of every finger turned ``deg`` back toward extension (Variant.finger_closure negative)."""
    return lambda v, direction: dataclasses.replace(v, finger_closure=(-float(np.radians(deg)),) * 5)


def scale_object(factor: float) -> Callable:
    """``apply`` of the object's meshes scaled by ``factor`` (:func:`scaled_recording`)."""
    return lambda rec, folder: scaled_recording(rec, factor, folder)


register(
    WorldCorruption(
        "wrist_offset_2cm",
        _HUG + " (the paper's test: 2 cm in a random horizontal direction); added to every wrist target of the sample",
        reference=0.5,
        apply=offset_wrist(0.02),
    )
)
register(
    WorldCorruption(
        "fingers_open_20deg",
        "our choice: every finger turned 20 deg back toward extension (the rest pose) about its joints' flexion axes "
        "from the approach's last part on (Variant.finger_closure negative, replay.protocol.finger_closure): a grasp "
        "that never closes as the person's did",
        apply=open_fingers(20.0),
    )
)
register(
    SceneCorruption(
        "object_scale_0.8",
        "our choice: the object's meshes scaled by 0.8 about its frame's origin (mass from the scaled volume at the "
        "asset's density, or the asset's mass where it states one): the hand replayed on an object that is not the "
        "one recorded",
        apply=scale_object(0.8),
    )
)


def scaled_recording(rec, factor: float, folder: Path):
    """A copy of ``rec`` whose target object's meshes are scaled by ``factor`` about the object frame's origin, written
    as STL under ``folder``. Raises DataError: a mesh cannot be read (names the file)."""
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
