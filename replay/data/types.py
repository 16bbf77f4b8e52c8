"""The canonical recording and object-asset forms every adapter produces. World frame Z up, m, s; quaternions xyzw
(adapters convert wxyz); landmarks in manopth order (:data:`LANDMARK_NAMES`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from replay.errors import DataError

#: manopth landmark names, index = landmark id (0 wrist; 1-4 thumb; 5-8 index; 9-12 middle; 13-16 ring; ...)
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

#: landmark ids of the five fingertips (thumb, index, middle, ring, pinky)
TIP_LANDMARKS = (4, 8, 12, 16, 20)

LANDMARK_FINGER = ("wrist",) + ("thumb",) * 4 + ("index",) * 4 + ("middle",) * 4 + ("ring",) * 4 + ("pinky",) * 4


#: TACO and HUG state no material: object_sim's values for every GRAB object (common.xml, class object_col),
#: kg/m^3, (sliding, torsional, rolling), condim
DEFAULT_DENSITY = 1250.0
DEFAULT_FRICTION = (1.0, 0.5, 0.01)
DEFAULT_CONDIM = 4


@dataclass
class ObjectAsset:
    """One rigid object; meshes in the object frame, m; ``collision_meshes`` convex, the only ones in contact.

    Attributes:
        density: kg/m^3, used when ``mass`` (kg) is None. friction: MuJoCo (sliding, torsional, rolling); condim.
        margin: m, MuJoCo geom ``margin`` as the asset writes it (physics choice ``object_margin`` ``asset``).
        density_source: ``"file: ..."``, ``"dataset: ..."`` or ``"default: ..."``.
        made: ``"printed"`` (GRAB) or ``"unstated"``."""

    name: str
    visual_mesh: Path
    collision_meshes: list[Path]
    density: float = DEFAULT_DENSITY
    mass: float | None = None
    friction: tuple[float, float, float] = DEFAULT_FRICTION
    condim: int = DEFAULT_CONDIM
    margin: float = 0.0
    source: Path | None = None
    density_source: str = ""
    made: str = "unstated"


@dataclass
class ObjectTrack:
    """One object in a recording: ``pos`` (T, 3) world m and ``quat`` (T, 4) xyzw of its object frame; ``tracked``
    False when they repeat one resting pose (HUG-Bench)."""

    asset: ObjectAsset
    pos: np.ndarray
    quat: np.ndarray
    tracked: bool = True

    @property
    def name(self) -> str:
        return self.asset.name


@dataclass
class MANOParams:
    """MANO hand parameters as a dataset stores them.

    Attributes:
        finger_pose: (T, 15, 3) axis-angle, rad, MANO joint order (index 1-3, middle 4-6, pinky 7-9, ring 10-12,
            thumb 13-15), MANO's template-aligned frames.
        global_orient: (T, 3) axis-angle of MANO's root (world from MANO), or None (HUG-Bench). trans: (T, 3) m or None.
        T_world_wrist: (T, 4, 4) world-from-wrist when given (HUG-Bench: ``T_world_device @ T_device_wrist``).
        betas: (T, 10) or (10,), not applied. flat_hand_mean: ``finger_pose`` relative to the flat hand (True), to
            MANO's mean pose (False), unknown (None). vertices: (T, 778, 3) world m when given (TACO)."""

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
        dataset: ``"hug-bench"``, ``"grab"`` or ``"taco"``. fps: Hz; ``time``: (T,) s from the first frame.
        valid: (T,) bool, False where the hand was not tracked.
        wrist_pos: (T, 3) world m of manosim's root body ``mano_body_0``, or None until landmark IK fits it (GRAB).
        wrist_quat: (T, 4) xyzw of that body, or None likewise.
        finger_quat: (T, 15, 4) xyzw local rotations of ``mano_joint_1..15`` (1-3 index, 4-6 middle, 7-9 pinky, 10-12
            ring, 13-15 thumb) from the MJCF reference pose, or None until IK.
        landmarks: (T, 21, 3) world m, manopth order, or None. objects: ``objects[target]`` is the one grasped.
        support_height: z of the support surface, m. grasp_frame: the lift onset (HUG-Bench: the first grasp).
        mano: the dataset's own MANO parameters (HUG-Bench, TACO). meta: provenance."""

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
        """Check shapes, finiteness and unit quaternions; return self. Raises DataError naming ``source`` and field."""
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
