"""Load an MJCF file into an in-memory XML tree and resolve MuJoCo default classes.

The file on disk is never modified. Loading goes through Newton 1.8.0's own
``_load_and_expand_mjcf`` so that ``<include>`` expansion and asset-path
resolution (``compiler meshdir/assetdir``, relative to the *original* file) are
exactly Newton's; the returned tree holds absolute asset paths and can be
serialized and handed to ``ModelBuilder.add_mjcf`` as an XML string.

Default classes follow MuJoCo's rules (XML reference, "default"): the top-level
``<default>`` is class ``main``; a nested ``<default class="c">`` inherits its
parent's attributes; an element uses its own ``class`` attribute, else the
nearest ancestor body's ``childclass``, else ``main``; attributes written on the
element win.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .errors import MJCFError

ASSET_TAGS = ("mesh", "hfield", "texture", "skin")


def load_tree(path: str | os.PathLike) -> ET.Element:
    """Parse ``path`` (MJCF), expand includes, resolve asset paths, check assets exist.

    Returns:
        The root ``<mujoco>`` element, asset ``file`` attributes made absolute.

    Raises:
        MJCFError: file missing (field ``file``), malformed XML (field ``xml``), not an
            MJCF document (field ``mujoco``), an include missing, or an asset file
            missing (field ``mesh '<name>'`` etc., naming the file it looked for).
    """
    from newton._src.utils.import_mjcf import _load_and_expand_mjcf

    p = Path(path)
    if not p.is_file():
        raise MJCFError(p, "file", "MJCF file not found")
    try:
        ET.parse(p)
    except ET.ParseError as exc:
        raise MJCFError(p, "xml", f"malformed XML: {exc}") from None
    try:
        root, _ = _load_and_expand_mjcf(str(p))
    except (OSError, ET.ParseError, ValueError) as exc:
        raise MJCFError(p, "include", f"cannot expand <include>: {exc}") from None
    if root.tag != "mujoco":
        raise MJCFError(p, "mujoco", f"root element is <{root.tag}>, not <mujoco>: not an MJCF file")
    for elem in root.iter():
        if elem.tag in ASSET_TAGS and elem.get("file"):
            file = elem.get("file")
            if not os.path.isfile(file):
                name = elem.get("name") or Path(file).stem
                raise MJCFError(p, f"{elem.tag} '{name}'", f"asset file not found: {file}")
    return root


class Defaults:
    """MuJoCo default classes of one MJCF tree: ``resolve(elem, tag, childclass)``."""

    def __init__(self, root: ET.Element):
        self.classes: dict[str, dict[str, dict[str, str]]] = {}
        for top in root.findall("default"):
            self._walk(top, None, "main")

    def _walk(self, node: ET.Element, parent: str | None, fallback: str | None) -> None:
        name = node.get("class", fallback)
        if name is None:
            return
        merged = {tag: dict(a) for tag, a in self.classes.get(parent, {}).items()} if parent else {}
        existing = self.classes.get(name)
        if existing:
            for tag, attrib in existing.items():
                merged.setdefault(tag, {}).update(attrib)
        for child in node:
            if child.tag != "default":
                merged.setdefault(child.tag, {}).update(child.attrib)
        self.classes[name] = merged
        for child in node.findall("default"):
            self._walk(child, name, None)

    def resolve(self, elem: ET.Element, tag: str | None = None, childclass: str | None = None) -> dict[str, str]:
        """Attributes of ``elem`` after applying its default class (element attributes win)."""
        tag = tag or elem.tag
        cls = elem.get("class") or childclass or "main"
        out = dict(self.classes.get(cls, {}).get(tag, {}))
        out.update(elem.attrib)
        return out


def parse_floats(text: str | None, default: list[float]) -> np.ndarray:
    """Whitespace-separated floats of an attribute, or ``default`` when absent."""
    if text is None:
        return np.asarray(default, dtype=float)
    return np.asarray([float(v) for v in text.split()], dtype=float)


def body_quat_wxyz(attrib: dict[str, str]) -> np.ndarray | None:
    """A body's authored orientation as a MuJoCo (w, x, y, z) quaternion when given by ``quat``.

    Returns ``None`` when another orientation attribute (axisangle, euler, xyaxes,
    zaxis) is used; callers then read the orientation from the builder instead.
    """
    if any(k in attrib for k in ("axisangle", "euler", "xyaxes", "zaxis")):
        return None
    q = parse_floats(attrib.get("quat"), [1.0, 0.0, 0.0, 0.0])
    return q / np.linalg.norm(q)


def iter_bodies(root: ET.Element):
    """Yield ``(body, parent_body_or_None, childclass)`` for every ``<body>`` in document order.

    ``parent`` is ``None`` for bodies directly under ``<worldbody>`` (also through ``<frame>``).
    """
    worldbody = root.find("worldbody")
    if worldbody is None:
        return

    def walk(node, parent, childclass):
        for child in node:
            if child.tag == "body":
                cc = child.get("childclass") or childclass
                yield child, parent, cc
                yield from walk(child, child, cc)
            elif child.tag == "frame":
                yield from walk(child, parent, child.get("childclass") or childclass)

    yield from walk(worldbody, None, None)
