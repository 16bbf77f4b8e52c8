"""What may differ between the worlds of one batch; the default :class:`Variant` is the recording as replayed."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy.spatial.transform import Rotation


def _pair(v, base) -> dict:
    solref, solimp = v
    return {"solref": tuple(solref), "solimp": tuple(solimp)}


#: physics table rows a world may take: row -> (value, base) -> {Variant field: value}; ``base``: what a relative row
#: departs from (``grip_force_n`` N, ``object_mass`` kg)
ROWS = {
    "hand_object_friction": lambda v, base: {"friction": float(v)},
    "hand_object_torsional_friction": lambda v, base: {"torsional_friction": float(v)},
    "hand_object_softness": _pair,
    "finger_effort_limit": lambda v, base: {"effort_limit": float(v)},
    "grip_force_n": lambda v, base: {"effort_scale": float(v) / float(base["grip_force_n"])},
    "object_mass_model": lambda v, base: {"object_mass_scale": float(v)},
    "object_density_scale": lambda v, base: {"object_mass": float(v) * float(base["object_mass"])},
    "pad_compression": lambda v, base: {"pad_depth_mm": float(v)},
}


def row_fields(rows: dict, base: dict | None = None) -> dict:
    """The Variant fields of ``rows`` ({physics table row: value}). Raises KeyError: a row no world takes, or ``base``
    lacking what a relative row needs."""
    out: dict = {}
    for row, value in rows.items():
        if value is not None:
            out.update(ROWS[row](value, base or {}))
    return out


#: the fields only the direct MuJoCo C engine applies (:mod:`replay.sim.engine.mujoco_c.model_edits`)
_CONTACT_FIELDS = ("solref", "solimp", "torsional_friction", "object_mass_scale")


@dataclass(frozen=True)
class Variant:
    """One world's differences from the scene as built (None / zeros / empty: as built; a physics field names its table
    row, :data:`ROWS`).

    Attributes:
        friction: ``hand_object_friction`` on the hand's and object's geoms (support contacts: ``max(friction,
            support's)``). effort_limit: N·m. effort_scale: ``grip_force_n`` over the scene's.
        object_mass: kg (inertia scaled). object_mass_scale: ``object_mass_model``'s scale (times ``object_mass``).
        wrist_offset: (3,) m, world, added to every wrist target. wrist_rotvec: (3,) rad, world, turning every wrist
            target about the wrist at the grasp frame.
        finger_closure: (5,) rad per finger (index, middle, pinky, ring, thumb) toward flexion (negative: opened).
        solref / solimp: (2,) (timeconst s, dampratio) and (3,) (dmin, dmax, width m) on the hand's and object's geoms.
        torsional_friction: m (``geom_friction[:, 1]``). object_offset: (3,) m, world. pad_depth_mm: mm.
        options: ``((name, value), ...)`` scalar ``mjOption`` fields (``("cone", 1)``, ``("impratio", 10.0)``)."""

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

    @classmethod
    def of_rows(cls, rows: dict, base: dict | None = None, **fields) -> Variant:
        """A world departing by ``rows`` ({physics table row: value}) and ``fields``."""
        return cls(**row_fields(rows, base), **fields)

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
        """True when an extra closure or its own pad depth moves the finger targets."""
        return self.closes_fingers or self.pad_depth_mm is not None

    @property
    def edits_contact(self) -> bool:
        """A parameter only MuJoCo C edits differs (solref, solimp, torsional friction, mass scale, object offset)."""
        return any(getattr(self, n) is not None for n in _CONTACT_FIELDS) or any(self.object_offset)

    @property
    def edits_params(self) -> bool:
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

    def transform_targets(self, pos, quat_xyzw, *, vel, omega, acc, center):
        """Wrist targets moved by the rigid perturbation about ``center`` (3,) m, the wrist at the grasp frame: ``(pos,
        quat_xyzw, vel, omega, acc)``, new arrays (world; m, xyzw, m/s, rad/s, m/s^2; each (F, 3) or (F, 4))."""
        if not self.perturbs_wrist:
            return pos.copy(), quat_xyzw.copy(), vel.copy(), omega.copy(), acc.copy()
        r = Rotation.from_rotvec(self.wrist_rotvec)
        c = np.asarray(center, float)
        pos2 = r.apply(np.asarray(pos, float) - c) + c + np.asarray(self.wrist_offset)
        quat2 = (r * Rotation.from_quat(quat_xyzw)).as_quat()
        return pos2, quat2, r.apply(vel), r.apply(omega), r.apply(acc)
