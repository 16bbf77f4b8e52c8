"""MuJoCo as authored: one GRAB replay scene compiled by the ``mujoco`` package from the files
as shipped, with no Newton in between (the yardstick of issue 39's ``--physics authored``).

The scene, composed with :class:`mujoco.MjSpec` (``frame.attach_body``):

* the manosim hand MJCF as its parent spec, unchanged: its ``<compiler>``, its ``<default>``
  (solref 0.04 1, solimp 0.5 0.95 0.001), the priority-1 palm, the wrist's slide x3 + ball
  joints (damping 5, ball armature 0.01), its position actuators (wrist kp 300 N/m dampratio 1,
  kp 50 N·m/rad dampratio 1.5; fingers kp 30 dampratio 1), no gravity compensation;
* the GRAB object (``grab/objects/<name>/object.xml`` with its includes, ``common.xml``'s
  classes ``grab`` / ``object_col``: density 1250, friction 1 0.5 0.01, margin 0.0005, condim 4)
  as a free body: its ``object`` body attached at the recording's object pose with a free joint
  of class ``grab`` added (the class's joint defaults apply: armature 0.001, frictionloss 0.001,
  damping 0), named ``object``;
* the GRAB table (``grab/objects/table``, its meshes as shipped) as a static body ``table`` at
  the recording's table pose (``rec.meta["table"]``);
* no ``<option>``: MuJoCo's defaults (Euler, pyramidal cone, impratio 1, timestep 0.002 s,
  gravity -9.81 m/s^2 along Z).

Three things are not taken from the files, each for a stated reason:

* object_sim's mesh paths (``../object_sim/<name>/x.stl`` under ``meshdir=".."``) do not exist
  in the GRAB release; each resolves to the file of the same name beside ``object.xml``, as
  :mod:`replay.data.object_mjcf` does;
* upstream's ``<body pos="0 0 0.05">`` and its stand-alone scene (``common.xml``'s floor plane and
  light) are not attached: the recording poses the object and the table stands on nothing;
* a mesh geom's own pose (toothpaste's ``euler="1.57 0 0"``) is removed: the recordings pose the
  mesh files' frame (:mod:`replay.data.object_mjcf`, measured there).

``visual`` chooses what the objects' non-collision mesh geoms (class ``grab``, ``*_visual``) are:
``"shipped"`` exactly as written (MuJoCo's default contype/conaffinity 1 and density 1000: they
collide, as their convex hull, and weigh), or ``"inert"`` (contype 0, conaffinity 0, no mass:
what object_sim's ``group 3`` collision class suggests and what the project simulates). Either way
the compiled values are what MuJoCo makes of the spec, read back by the caller.

Units SI; quaternions in: xyzw (Newton, scipy), in MuJoCo: wxyz.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from replay.errors import DataError
from replay.kinematics.hand_layout import MANOSIM_HAND

#: the element switches :func:`authored_spec` knows (``--set name=value`` in the crosscheck)
SWITCHES = {
    "gravcomp": "hand bodies' gravcomp (0 as authored; 1 cancels the hand's weight)",
    "cone": "pyramidal (MuJoCo default) or elliptic",
    "impratio": "1 (MuJoCo default)",
    "integrator": "euler (MuJoCo default), implicitfast, implicit, rk4",
    "hand_contact": "mixed (MuJoCo's solmix rule, as authored) or hand (object solmix 0: the hand's solref/solimp)",
    "object_margin": "the object's geom margin, m (0.0005 as authored)",
    "visual": "shipped (the *_visual mesh geoms collide and weigh, as written) or inert",
    "object_joint": "grab (a free joint of class grab: its armature/frictionloss) or plain (<freejoint>: none)",
}


@dataclass(frozen=True)
class AuthoredSettings:
    """One point of the authored scene's element switches (:data:`SWITCHES`); defaults: as authored."""

    gravcomp: float = 0.0
    cone: str = "pyramidal"
    impratio: float = 1.0
    integrator: str = "euler"
    hand_contact: str = "mixed"
    object_margin: float | None = None
    visual: str = "shipped"
    object_joint: str = "grab"

    def changed(self) -> dict:
        """The switches set away from the authored defaults, name -> value."""
        base = AuthoredSettings()
        return {k: getattr(self, k) for k in SWITCHES if getattr(self, k) != getattr(base, k)}


_CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
_INTEGRATORS = {
    "euler": mujoco.mjtIntegrator.mjINT_EULER,
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
    "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
    "rk4": mujoco.mjtIntegrator.mjINT_RK4,
}


def parse_setting(settings: AuthoredSettings, text: str) -> AuthoredSettings:
    """``settings`` with one ``name=value`` switch applied (``--set``).

    Raises:
        DataError: unknown name, or a value out of its choices / not a number.
    """
    name, _, value = text.partition("=")
    name = name.strip()
    if name not in SWITCHES or not value:
        raise DataError(None, f"--set {text}", f"expected name=value with name in {sorted(SWITCHES)}")
    choices = {
        "cone": _CONES,
        "integrator": _INTEGRATORS,
        "hand_contact": ("mixed", "hand"),
        "visual": ("shipped", "inert"),
        "object_joint": ("grab", "plain"),
    }
    if name in choices:
        if value not in choices[name]:
            raise DataError(None, f"--set {name}", f"{value!r} not in {sorted(choices[name])}")
        return dataclasses.replace(settings, **{name: value})
    try:
        return dataclasses.replace(settings, **{name: float(value)})
    except ValueError:
        raise DataError(None, f"--set {name}", f"{value!r} is not a number") from None


def _xyzw_to_wxyz(q) -> list[float]:
    q = np.asarray(q, float)
    return [float(q[3]), float(q[0]), float(q[1]), float(q[2])]


def object_spec(object_dir: str | Path) -> mujoco.MjSpec:
    """The spec of ``<object_dir>/object.xml`` as MuJoCo parses it (includes resolved), each mesh
    file pointed at the file of the same name beside ``object.xml`` (module doc).

    Raises:
        DataError: the file is missing or does not parse, a mesh file is not beside it, or the model
            has no body named ``object``.
    """
    xml = Path(object_dir) / "object.xml"
    if not xml.is_file():
        raise DataError(xml, None, "object MJCF not found")
    try:
        spec = mujoco.MjSpec.from_file(str(xml))
    except Exception as exc:  # mujoco raises ValueError with the parser's message
        raise DataError(xml, None, f"MuJoCo cannot parse it: {str(exc).splitlines()[0]}") from None
    for mesh in spec.meshes:
        local = xml.parent / Path(mesh.file).name
        if not local.is_file():
            raise DataError(xml, f"mesh[{mesh.name}].file", f"{mesh.file!r}: no {local.name} beside object.xml")
        mesh.file = str(local.resolve())
    if spec.body("object") is None:
        raise DataError(xml, "worldbody.body", "no body named 'object'")
    return spec


def _attach(parent: mujoco.MjSpec, child: mujoco.MjSpec, name: str, pos, quat_xyzw) -> mujoco.MjsBody:
    """Attach ``child``'s ``object`` body at ``pos`` (3,) m / ``quat_xyzw`` in ``parent``'s world,
    names prefixed ``<name>/``; the body renamed ``name``, at the frame's origin, its geoms' own poses
    removed (module doc)."""
    body = child.body("object")
    body.pos = [0.0, 0.0, 0.0]
    body.quat = [1.0, 0.0, 0.0, 0.0]
    for g in body.geoms:
        g.pos = [0.0, 0.0, 0.0]
        g.quat = [1.0, 0.0, 0.0, 0.0]
        g.alt.euler = [0.0, 0.0, 0.0]
    child.visual.map.znear = parent.visual.map.znear  # a render setting; the attach would warn of the conflict
    frame = parent.worldbody.add_frame(pos=[float(x) for x in pos], quat=_xyzw_to_wxyz(quat_xyzw))
    attached = frame.attach_body(body, f"{name}/", "")
    attached.name = name
    return attached


def _make_inert(body: mujoco.MjsBody) -> None:
    """The body's non-``object_col`` mesh geoms: no contact, no mass (``visual="inert"``)."""
    for g in body.geoms:
        if not g.classname.name.endswith("object_col"):
            g.contype = 0
            g.conaffinity = 0
            g.density = 0.0
            g.mass = 0.0


def authored_spec(
    hand_mjcf: str | Path,
    object_dir: str | Path,
    table_dir: str | Path,
    object_pos,
    object_quat,
    table_pos,
    table_quat,
    settings: AuthoredSettings = AuthoredSettings(),
) -> mujoco.MjSpec:
    """The authored scene's :class:`mujoco.MjSpec` (module doc) with ``settings``' switches.

    Args:
        hand_mjcf: manosim ``capsule_hand.xml`` / ``mesh_hand.xml``.
        object_dir / table_dir: ``grab/objects/<name>`` and ``grab/objects/table``.
        object_pos, table_pos: (3,) m, world; object_quat, table_quat: (4,) xyzw, world (the mesh files' frame).

    Raises:
        DataError: a file missing or not parsed (names it), or a setting out of range.
    """
    hand_mjcf = Path(hand_mjcf)
    if not hand_mjcf.is_file():
        raise DataError(hand_mjcf, None, "manosim hand MJCF not found")
    spec = mujoco.MjSpec.from_file(str(hand_mjcf))
    obj = _attach(spec, object_spec(object_dir), "object", object_pos, object_quat)
    table = _attach(spec, object_spec(table_dir), "table", table_pos, table_quat)
    grab_class = spec.find_default("object/grab")
    if settings.object_joint == "grab":
        obj.add_joint(grab_class, name="object/free", type=mujoco.mjtJoint.mjJNT_FREE)
    else:
        obj.add_freejoint(name="object/free")
    if settings.visual == "inert":
        _make_inert(obj)
        _make_inert(table)
    for b in spec.bodies:
        if b.name.startswith("mano_body_"):
            b.gravcomp = float(settings.gravcomp)
    spec.option.cone = _CONES[settings.cone]
    spec.option.integrator = _INTEGRATORS[settings.integrator]
    spec.option.impratio = float(settings.impratio)
    for g in obj.geoms:
        if settings.hand_contact == "hand":
            g.solmix = 0.0
        if settings.object_margin is not None:
            g.margin = float(settings.object_margin)
    return spec


def compile_spec(spec: mujoco.MjSpec, source) -> mujoco.MjModel:
    """``spec.compile()``; a compile error as :class:`DataError` naming ``source``."""
    try:
        return spec.compile()
    except Exception as exc:
        raise DataError(source, None, f"MuJoCo cannot compile the authored scene: {str(exc).splitlines()[0]}") from None


def hand_qpos(model: mujoco.MjModel, coords: np.ndarray) -> np.ndarray:
    """``model.qpos0`` with the hand set from (67,) Newton coords (wrist pos m + quat xyzw, then
    the 15 finger quats xyzw of ``mano_joint_1..15``), mapped by joint name; MuJoCo wxyz inside."""
    coords = np.asarray(coords, float)
    if coords.shape != (MANOSIM_HAND.coords,):
        raise DataError(None, "hand_coords", f"expected ({MANOSIM_HAND.coords},), got {coords.shape}")
    qpos = np.array(model.qpos0, float)
    for k, axis in enumerate("xyz"):
        qpos[model.joint(f"wrist_t{axis}").qposadr[0]] = coords[k]
    a = model.joint("wrist_rot").qposadr[0]
    qpos[a : a + 4] = _xyzw_to_wxyz(coords[3:7])
    fs = MANOSIM_HAND.finger_coord_start
    for j in range(MANOSIM_HAND.finger_joints):
        a = model.joint(f"mano_joint_{j + 1}").qposadr[0]
        qpos[a : a + 4] = _xyzw_to_wxyz(coords[fs + 4 * j : fs + 4 * j + 4])
    return qpos


def object_qpos_adr(model: mujoco.MjModel) -> int:
    """qpos address of the object's free joint (pos m, quat wxyz)."""
    return int(model.joint("object/free").qposadr[0])
