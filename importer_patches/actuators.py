"""Authored MJCF actuators, read independently of Newton (shared by the actuator patches)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from .mjcf_tree import Defaults, parse_floats


@dataclass
class ActuatorSpec:
    """One ``<actuator>`` child as authored (after default classes).

    Attributes:
        index: position among all actuator elements of the file (MJCF order).
        name: ``name`` attribute (or ``<tag>_<joint>``).
        tag: ``position``, ``velocity``, ``motor``, ``general``, ...
        joint: target of a ``joint``/``jointinparent`` transmission, else ``None``.
        gear: 6 gear values (MuJoCo default ``1 0 0 0 0 0``).
        kp: position gain [N/m or N·m/rad] (``position``/``intvelocity``; else 0).
        kv: authored velocity gain [N·s/m or N·m·s/rad] (0 when not given).
        dampratio: authored damping ratio (0 when not given).
        kv_resolved: ``kv``, or the value MuJoCo's compiler derives from ``dampratio``
            (filled by the ``dampratio`` patch; ``None`` until then).
        dofs: builder DOF indices the actuator drives (filled after import).
        imported: whether Newton received the actuator (False when removed by a patch).
        newton_index: its index in the builder's ``mujoco:actuator`` custom frequency.
    """

    index: int
    name: str
    tag: str
    joint: str | None
    gear: np.ndarray
    kp: float
    kv: float
    dampratio: float
    kv_resolved: float | None = None
    dofs: list[int] = field(default_factory=list)
    imported: bool = True
    newton_index: int | None = None
    element: ET.Element | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "type": self.tag,
            "joint": self.joint,
            "gear": [float(g) for g in self.gear],
            "kp": self.kp,
            "kv": self.kv,
            "dampratio": self.dampratio,
            "kv_resolved": self.kv_resolved,
            "dofs": list(self.dofs),
            "imported": self.imported,
            "newton_index": self.newton_index,
        }


def read_actuators(root: ET.Element) -> list[ActuatorSpec]:
    """All actuator elements of ``root`` in MJCF order."""
    defaults = Defaults(root)
    out: list[ActuatorSpec] = []
    for section in root.findall("actuator"):
        for elem in section:
            if not isinstance(elem.tag, str):
                continue
            a = defaults.resolve(elem, elem.tag)
            joint = a.get("joint") or a.get("jointinparent")
            kp_default = 1.0 if elem.tag in ("position", "intvelocity") else 0.0
            kv_default = 1.0 if elem.tag == "velocity" else 0.0
            out.append(
                ActuatorSpec(
                    index=len(out),
                    name=a.get("name") or f"{elem.tag}_{joint}",
                    tag=elem.tag,
                    joint=joint,
                    gear=parse_floats(a.get("gear"), [1.0, 0, 0, 0, 0, 0]),
                    kp=float(a.get("kp", kp_default)),
                    kv=float(a.get("kv", kv_default)),
                    dampratio=float(a.get("dampratio", 0.0)),
                    element=elem,
                )
            )
    for act in out:
        g = np.zeros(6)
        g[: len(act.gear)] = act.gear
        act.gear = g
    return out


def remove_from_xml(root: ET.Element, acts: list[ActuatorSpec]) -> None:
    """Remove the given actuators' elements from the in-memory tree."""
    drop = {id(a.element) for a in acts}
    for section in root.findall("actuator"):
        for elem in list(section):
            if id(elem) in drop:
                section.remove(elem)


def unit_axis(gear: np.ndarray, n: int) -> int | None:
    """Index ``i`` when ``gear[:n]`` is exactly the unit vector e_i, else ``None``."""
    g = np.asarray(gear[:n], dtype=float)
    nz = np.flatnonzero(g)
    if len(nz) == 1 and g[nz[0]] == 1.0 and not np.any(gear[n:]):
        return int(nz[0])
    return None
