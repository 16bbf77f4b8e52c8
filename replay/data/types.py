"""The canonical recording and object-asset forms every adapter produces.

Whatever the dataset (HUG-Bench, GRAB, TACO), an adapter returns a
:class:`Recording` holding :class:`ObjectTrack` s whose geometry is an
:class:`ObjectAsset`. Everything downstream (validation, kinematics, scene,
rollout, render) reads only these types.

Conventions (checked by :meth:`Recording.validate`):

* World frame: Z up, metres. Times in seconds.
* Quaternions are **xyzw** (Newton's order). Datasets that store wxyz (GRAB,
  MuJoCo) are converted by their adapter.
* ``wrist_pos`` / ``wrist_quat`` are the world pose of the simulated hand's root
  body (manosim ``mano_body_0``), not of a dataset-specific wrist frame; the
  adapter (or the landmark IK in :mod:`replay.kinematics`) does the conversion.
* ``finger_quat`` are the local rotations of manosim's 15 ball joints
  (``mano_joint_1..15``, MANO bone order: 1-3 index, 4-6 middle, 7-9 pinky,
  10-12 ring, 13-15 thumb) relative to the MJCF reference pose, xyzw.
* ``landmarks`` are the 21 MANO landmarks in manopth order (0 wrist; 1-4 thumb;
  5-8 index; 9-12 middle; 13-16 ring; 17-20 pinky), world frame, metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from replay.errors import DataError

#: manopth landmark names, index = landmark id.
LANDMARK_NAMES = (
    "wrist",
    "thumb_cmc",
    "thumb_mcp",
    "thumb_ip",
    "thumb_tip",
    "index_mcp",
    "index_pip",
    "index_dip",
    "index_tip",
    "middle_mcp",
    "middle_pip",
    "middle_dip",
    "middle_tip",
    "ring_mcp",
    "ring_pip",
    "ring_dip",
    "ring_tip",
    "pinky_mcp",
    "pinky_pip",
    "pinky_dip",
    "pinky_tip",
)

#: finger of each landmark (``wrist`` for landmark 0).
LANDMARK_FINGER = ("wrist",) + ("thumb",) * 4 + ("index",) * 4 + ("middle",) * 4 + ("ring",) * 4 + ("pinky",) * 4

#: finger of each manosim ball joint ``mano_joint_{i+1}`` (MANO 16-bone order, bone 0 = palm).
JOINT_FINGER = ("index",) * 3 + ("middle",) * 3 + ("pinky",) * 3 + ("ring",) * 3 + ("thumb",) * 3


@dataclass
class ObjectAsset:
    """Geometry and mass properties of one rigid object.

    Attributes:
        name: object name (e.g. ``"mug"``).
        visual_mesh: path of the visual surface mesh (rendering, surface-gap checks),
            in the object frame, metres.
        collision_meshes: paths of convex collision parts, same frame. Only these
            take part in contact.
        density: kg/m^3, used when ``mass`` is None.
        mass: kg, or None to derive from ``density`` and the collision volume.
        friction: MuJoCo-style (sliding, torsional, rolling) coefficients.
        condim: MuJoCo contact dimensionality for this object's geoms.
        margin: MuJoCo geom ``margin`` of the collision parts as the asset writes it, m (MuJoCo's
            default 0); used as written under the physics choice ``object_margin`` ``asset``.
        source: file the asset was described in (for error messages and provenance).
        density_source: where ``density`` came from (``"file: ..."``, ``"dataset: ..."``, or
            ``"default: ..."`` when the asset states none and a simulator default applies).
        made: how the dataset says the object was made: ``"printed"`` (a 3D print of this mesh:
            GRAB) or ``"unstated"``; the mass model of :mod:`replay.sim.made_mass` reads it.
    """

    name: str
    visual_mesh: Path
    collision_meshes: list[Path]
    density: float = 1250.0
    mass: float | None = None
    friction: tuple[float, float, float] = (1.0, 0.5, 0.01)
    condim: int = 4
    margin: float = 0.0
    source: Path | None = None
    density_source: str = ""
    made: str = "unstated"


@dataclass
class ObjectTrack:
    """One object in a recording and its world pose over time.

    Attributes:
        asset: the object's geometry.
        pos: (T, 3) world position of the object frame, m. For datasets without
            object tracking (HUG-Bench) every row is the single resting pose.
        quat: (T, 4) world orientation of the object frame, **xyzw**.
        tracked: True when ``pos``/``quat`` are measured per frame.
    """

    asset: ObjectAsset
    pos: np.ndarray
    quat: np.ndarray
    tracked: bool = True

    @property
    def name(self) -> str:
        return self.asset.name


@dataclass
class MANOParams:
    """MANO hand parameters as a dataset stores them (before mapping to manosim joints).

    :mod:`replay.kinematics` converts these to the canonical wrist pose and
    ``finger_quat``; adapters only read and check them.

    Attributes:
        finger_pose: (T, 15, 3) per-joint axis-angle, rad, in MANO's joint order
            (index 1-3, middle 4-6, pinky 7-9, ring 10-12, thumb 13-15, as in the
            MANO model's kinematic tree), in MANO's template-aligned frames.
        global_orient: (T, 3) axis-angle of MANO's root (world from MANO frame), or None
            when the wrist pose is given as a full transform (HUG-Bench).
        trans: (T, 3) MANO translation, m, or None.
        T_world_wrist: (T, 4, 4) world-from-wrist transform when the dataset gives it
            directly (HUG-Bench: T_world_device @ T_device_wrist), else None.
        betas: (T, 10) or (10,) shape coefficients (not applied: manosim has its own shape).
        flat_hand_mean: True if ``finger_pose`` is relative to the flat hand, False if
            relative to MANO's mean pose, None if the dataset does not say.
        vertices: (T, 778, 3) posed MANO mesh vertices in the world, m, when given (TACO).
    """

    finger_pose: np.ndarray
    global_orient: np.ndarray | None = None
    trans: np.ndarray | None = None
    T_world_wrist: np.ndarray | None = None
    betas: np.ndarray | None = None
    flat_hand_mean: bool | None = None
    vertices: np.ndarray | None = None


@dataclass
class Recording:
    """One recorded human hand-object interaction in canonical form.

    Attributes:
        name: sequence id (e.g. ``"mug_lift"``).
        dataset: ``"hug-bench"``, ``"grab"`` or ``"taco"``.
        source: the file it was read from.
        fps: capture rate, Hz.
        time: (T,) seconds from the first frame.
        hand_side: ``"right"`` or ``"left"``.
        valid: (T,) bool, False where the hand was not tracked in that frame.
        wrist_pos: (T, 3) world position of the simulated hand's root body, m, or
            None until landmark IK has fitted it (GRAB).
        wrist_quat: (T, 4) world orientation of that body, xyzw, or None likewise.
        finger_quat: (T, 15, 4) manosim ball-joint rotations, xyzw, or None when the
            dataset stores only landmarks (GRAB) until IK fills them.
        landmarks: (T, 21, 3) world landmark positions, m, or None.
        objects: the objects in the scene; ``objects[target]`` is the one grasped.
        target: index in ``objects`` of the grasped object.
        support_height: z of the support surface (table top or ground), m.
        grasp_frame: frame index where the grasp is complete and lifting starts
            (lift onset for tracked objects; first grasp for HUG-Bench).
        mano: the dataset's own MANO parameters when it has them (HUG-Bench, TACO).
        meta: free-form provenance (adapter notes, conventions chosen and why).
    """

    name: str
    dataset: str
    source: Path
    fps: float
    time: np.ndarray
    hand_side: str
    valid: np.ndarray
    wrist_pos: np.ndarray | None
    wrist_quat: np.ndarray | None
    finger_quat: np.ndarray | None
    landmarks: np.ndarray | None
    objects: list[ObjectTrack]
    target: int
    support_height: float
    grasp_frame: int
    mano: MANOParams | None = None
    meta: dict = field(default_factory=dict)

    @property
    def num_frames(self) -> int:
        return int(self.time.shape[0])

    @property
    def target_object(self) -> ObjectTrack:
        return self.objects[self.target]

    def validate(self) -> Recording:
        """Check shapes, finiteness and unit quaternions; return self.

        Raises:
            DataError: naming ``self.source`` and the offending field.
        """
        T = self.num_frames
        if T < 2:
            raise DataError(self.source, "time", f"need at least 2 frames, got {T}")
        if not np.all(np.diff(self.time) > 0):
            raise DataError(self.source, "time", "timestamps are not strictly increasing")
        if self.hand_side not in ("right", "left"):
            raise DataError(self.source, "hand_side", f"expected 'right' or 'left', got {self.hand_side!r}")
        _check(self.source, "valid", self.valid, (T,))
        checks = {
            "wrist_pos": (self.wrist_pos, (T, 3), False),
            "wrist_quat": (self.wrist_quat, (T, 4), True),
            "finger_quat": (self.finger_quat, (T, 15, 4), True),
            "landmarks": (self.landmarks, (T, 21, 3), False),
        }
        for name, (arr, shape, is_quat) in checks.items():
            if arr is None:
                continue
            _check(self.source, name, arr, shape)
            sel = arr[self.valid]
            if not np.all(np.isfinite(sel)):
                bad = int(np.flatnonzero(~np.all(np.isfinite(arr.reshape(T, -1)), axis=1) & self.valid)[0])
                raise DataError(self.source, name, f"non-finite values at frame {bad} (marked valid)")
            if is_quat:
                norm = np.linalg.norm(sel, axis=-1)
                if sel.size and np.max(np.abs(norm - 1.0)) > 1e-3:
                    raise DataError(self.source, name, "quaternions are not unit length (max |n-1| > 1e-3)")
        if not self.objects:
            raise DataError(self.source, "objects", "recording has no object")
        if not 0 <= self.target < len(self.objects):
            raise DataError(self.source, "target", f"index {self.target} out of range")
        for obj in self.objects:
            _check(self.source, f"objects[{obj.name}].pos", obj.pos, (T, 3))
            _check(self.source, f"objects[{obj.name}].quat", obj.quat, (T, 4))
        if not 0 <= self.grasp_frame < T:
            raise DataError(self.source, "grasp_frame", f"{self.grasp_frame} outside [0, {T})")
        if not np.isfinite(self.support_height):
            raise DataError(self.source, "support_height", "not finite")
        return self


def _check(source: Path, name: str, arr: np.ndarray, shape: tuple[int, ...]) -> None:
    if not isinstance(arr, np.ndarray):
        raise DataError(source, name, f"expected a numpy array, got {type(arr).__name__}")
    if arr.shape != shape:
        raise DataError(source, name, f"expected shape {shape}, got {arr.shape}")
