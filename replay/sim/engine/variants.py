"""What may differ between the worlds of one batch: model parameters, a rigid
perturbation of the wrist targets, an extra closure of the finger targets and a shift of the
object's initial position.

A :class:`Variant` is dataset- and protocol-agnostic: the engine applies its
parameters to a world's compiled model, and :meth:`Variant.transform_targets`
moves a world's wrist targets; the protocol turns a world's finger targets by
``finger_closure`` (:mod:`replay.protocol.finger_closure`). The default variant is the recording as replayed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy.spatial.transform import Rotation

#: the fields only the direct MuJoCo C engine applies (:mod:`replay.sim.engine.mujoco_c.model_edits`)
_CONTACT_FIELDS = ("solref", "solimp", "torsional_friction", "object_mass_scale")


@dataclass(frozen=True)
class Variant:
    """One world's differences from the scene as built.

    Attributes:
        ablation: hand-object contact filtered out (the contact ablation).
        friction: sliding friction coefficient of every hand-object contact (None: as
            built, MuJoCo's maximum of the pair's, 1.0 for GRAB assets and the manosim
            hand); set on the hand's and the object's geoms, so contacts with the support
            get ``max(friction, support's)``.
        effort_limit: finger actuator force range +-this at every finger joint, N·m (None: the scene's).
        effort_scale: every finger actuator's force range times this (None: the scene's per-joint limits).
        object_mass: object mass, kg, inertia scaled with it (None: the asset's).
        wrist_offset: (3,) m, world: added to every wrist position target.
        wrist_rotvec: (3,) rad, world rotation vector: every wrist target is turned
            by it about the wrist's position at the grasp frame (the recorded hand
            approaches and closes at a displaced pose).
        finger_closure: (5,) rad, one per finger (index, middle, pinky, ring, thumb): each
            finger's joint targets turned that much further toward flexion from the
            approach's last part on (:mod:`replay.protocol.finger_closure`; negative: opened toward
            extension, the fingers-open corruption of :mod:`replay.study.corruptions`); zeros: as
            recorded (then left out of :meth:`to_dict`, so results without it read as before).
        solref: (2,) MuJoCo ``solref`` (timeconst s, dampratio) of every hand-object contact (None: as
            built): set on the hand's and the object's geoms, so the pair gets it whatever the mixing
            or priority (MuJoCo mj_contactParam); object-support contacts mix it with the support's.
        solimp: (3,) MuJoCo ``solimp`` (dmin, dmax, width m) of the same geoms (None: as built); the
            midpoint and power stay as built.
        torsional_friction: torsional friction coefficient, m, ``geom_friction[:, 1]`` of the hand's
            and the object's geoms (None: as built; MuJoCo takes the pair's maximum, and the object's
            condim 4 makes it act on every hand-object pair).
        object_mass_scale: the object's mass and inertia times this (None: as built); with
            ``object_mass`` both, the scale multiplies ``object_mass``.
        object_offset: (3,) m, world: added to the object's initial position (the object track's
            uncertainty); zeros: as built.
        pad_depth_mm: the finger pad compression depth of this world's finger targets, mm
            (:mod:`replay.protocol.pad_compression`, solved on the world's own finger pose; None: the plan's).
        options: ``((name, value), ...)``: scalar ``mjOption`` fields of the world's compiled model,
            MuJoCo's names and values (``("cone", 1)`` elliptic, ``("impratio", 10.0)``): what MuJoCo
            allows to change without a recompile (its docs, "mjModel changes");
            :func:`replay.sim.runtime_settings.setting_variant` turns a setting's config into them.
            Empty: as built (then left out of :meth:`to_dict`).
        label: free text for reports.
    """

    ablation: bool = False
    friction: float | None = None
    effort_limit: float | None = None
    effort_scale: float | None = None
    object_mass: float | None = None
    wrist_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    wrist_rotvec: tuple[float, float, float] = (0.0, 0.0, 0.0)
    finger_closure: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    solref: tuple[float, float] | None = None
    solimp: tuple[float, float, float] | None = None
    torsional_friction: float | None = None
    object_mass_scale: float | None = None
    object_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    pad_depth_mm: float | None = None
    options: tuple = ()
    label: str = ""

    def __post_init__(self):
        for name in (
            "friction",
            "effort_limit",
            "effort_scale",
            "object_mass",
            "torsional_friction",
            "object_mass_scale",
        ):
            v = getattr(self, name)
            if v is not None and not (np.isfinite(v) and v > 0):
                raise ValueError(f"Variant.{name} must be a finite number > 0, got {v!r}")
        if self.pad_depth_mm is not None and not (np.isfinite(self.pad_depth_mm) and self.pad_depth_mm >= 0):
            raise ValueError(f"Variant.pad_depth_mm must be a finite number >= 0, got {self.pad_depth_mm!r}")
        for name, n in (("wrist_offset", 3), ("wrist_rotvec", 3), ("finger_closure", 5), ("object_offset", 3)):
            v = np.asarray(getattr(self, name), float)
            if v.shape != (n,) or not np.all(np.isfinite(v)):
                raise ValueError(f"Variant.{name} must be {n} finite numbers, got {getattr(self, name)!r}")
            object.__setattr__(self, name, tuple(float(x) for x in v))
        for name, n in (("solref", 2), ("solimp", 3)):
            if getattr(self, name) is None:
                continue
            v = np.asarray(getattr(self, name), float)
            if v.shape != (n,) or not np.all(np.isfinite(v)) or not np.all(v > 0):
                raise ValueError(f"Variant.{name} must be {n} finite numbers > 0, got {getattr(self, name)!r}")
            object.__setattr__(self, name, tuple(float(x) for x in v))
        opts = tuple((str(k), float(x)) for k, x in dict(self.options).items())
        for k, x in opts:
            if not np.isfinite(x):
                raise ValueError(f"Variant.options[{k!r}] must be finite, got {x!r}")
        object.__setattr__(self, "options", opts)

    @property
    def perturbs_wrist(self) -> bool:
        return any(self.wrist_offset) or any(self.wrist_rotvec)

    @property
    def closes_fingers(self) -> bool:
        return any(self.finger_closure)

    @property
    def moves_fingers(self) -> bool:
        """True when the world's finger targets are not the plan's: an extra closure or its own pad depth."""
        return self.closes_fingers or self.pad_depth_mm is not None

    @property
    def edits_contact(self) -> bool:
        """True when a parameter only the direct MuJoCo C engine edits differs from the scene's
        (solref, solimp, torsional friction, mass scale, object offset)."""
        return any(getattr(self, n) is not None for n in _CONTACT_FIELDS) or any(self.object_offset)

    @property
    def edits_params(self) -> bool:
        """True when a physical parameter (friction, effort, mass, contact softness, torsional
        friction, object offset, an option) differs from the scene's."""
        return (
            any(getattr(self, n) is not None for n in ("friction", "effort_limit", "effort_scale", "object_mass"))
            or self.edits_contact
            or bool(self.options)
        )

    @property
    def edits_model(self) -> bool:
        """True when the world needs its own copy of the compiled model."""
        return self.ablation or self.edits_params

    def to_dict(self) -> dict:
        d = asdict(self)
        if not self.closes_fingers:
            del d["finger_closure"]
        for n in _CONTACT_FIELDS:  # left out as built: results without them read as before
            if d[n] is None:
                del d[n]
        if not any(self.object_offset):
            del d["object_offset"]
        for n in ("effort_scale", "pad_depth_mm"):  # left out as built: results without them read as before
            if d[n] is None:
                del d[n]
        if self.options:
            d["options"] = dict(self.options)
        else:
            del d["options"]
        return d

    def transform_targets(self, pos, quat_xyzw, vel, omega, acc, center):
        """Wrist targets moved by this variant's rigid perturbation.

        Args:
            pos, vel, acc: (F, 3) world, m, m/s, m/s^2. quat_xyzw: (F, 4) world, Newton xyzw.
            omega: (F, 3) rad/s. center: (3,) rotation centre (wrist at the grasp frame), m.

        Returns:
            (pos, quat_xyzw, vel, omega, acc), new arrays.
        """
        if not self.perturbs_wrist:
            return pos.copy(), quat_xyzw.copy(), vel.copy(), omega.copy(), acc.copy()
        r = Rotation.from_rotvec(self.wrist_rotvec)
        c = np.asarray(center, float)
        pos2 = r.apply(np.asarray(pos, float) - c) + c + np.asarray(self.wrist_offset)
        quat2 = (r * Rotation.from_quat(quat_xyzw)).as_quat()
        return pos2, quat2, r.apply(vel), r.apply(omega), r.apply(acc)
