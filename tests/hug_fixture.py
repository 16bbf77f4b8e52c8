"""Generate a HUG-Bench scene in the documented layout from a known hand motion.

No real HUG-Bench copy is reachable, so the adapter is tested against files
written here in the layout of the mirror README ("HUG-Bench layout"):

```
<root>/1m-hugs/test/small_9/aria_data.pkl
<root>/hug_bench/test/small_9/<object>/sim_assets/{visual.obj, coacd/part_XX.obj, properties.json}
```

or, with ``staged=True``, as :func:`replay.checks.load_recording` finds it under a
data folder: ``<root>/hug-bench/scenes/test/small_9/aria_data.pkl`` and
``<root>/hug-bench/hug_bench/test/small_9/<object>/sim_assets/``.
Run as a script (``python tests/hug_fixture.py DATA_DIR``) to stage one for
``scripts/validate_object_frame.py --dataset hug-bench --data-dir DATA_DIR``.

The scene: a table top at z = 0.75 m holding a box (6 x 4 x 10 cm) and a can
(r 3 cm, h 12 cm), both meshes centred on their origin, ``world_position`` =
their centre. The right hand approaches the box along -x at 1 cm per frame
(10 fps) with the thumb and index tips 5 mm outside the box's +-y faces at the
box's mid-height, then holds still; the head (device) moves and yaws the whole
time. Frames 2-4 have no right hand (key absent, None, NaN pose); the left hand
is present only in some frames and never comes near an object.

Truth (in :class:`HugFixture`): world landmarks, T_world_wrist, finger poses,
and the expected grasp frame computed analytically from the geometry.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

FPS = 10
TABLE_Z = 0.75
BOX_HALF = np.array([0.03, 0.02, 0.05])
BOX_CENTRE = np.array([0.40, 0.05, TABLE_Z + 0.05])
CAN_R, CAN_HALF_H = 0.03, 0.06
CAN_CENTRE = np.array([0.20, -0.25, TABLE_Z + CAN_HALF_H])
TIP_GAP = 0.005  # thumb/index tips sit 5 mm outside the box's y faces
X0, V = 0.60, 0.01  # tip x at frame 0 (m) and approach speed (m per frame)
STOP_X = BOX_CENTRE[0]
MISSING_RIGHT = (2, 3, 4)


@dataclass
class HugFixture:
    root: Path
    aria_pkl: Path
    scene_dir: Path
    landmarks_world: np.ndarray  # (T, 21, 3) truth, NaN where the right hand is missing
    T_world_wrist: np.ndarray  # (T, 4, 4)
    pose: np.ndarray  # (T, 15, 3)
    betas: np.ndarray  # (T, 10)
    valid: np.ndarray  # (T,)
    grasp_frame: int
    objects: dict = field(default_factory=dict)  # name -> world centre


def _template_world() -> np.ndarray:
    """21 landmarks (manopth order) relative to the wrist, world-aligned, m.

    Index (5-8) and thumb (1-4) chains end at tips placed +-(BOX_HALF_y + TIP_GAP)
    in y from the wrist line; the other fingers end 6 cm above the tips.
    """
    tip_dx = -0.17  # wrist is 17 cm behind the tips (+x side, approaching along -x)
    L = np.zeros((21, 3))
    y_in = BOX_HALF[1] + TIP_GAP
    chains = {
        1: (np.array([-0.04, -0.03, 0.0]), np.array([tip_dx, -y_in, 0.0])),  # thumb: -y side
        5: (np.array([-0.09, 0.02, 0.0]), np.array([tip_dx, y_in, 0.0])),  # index: +y side
        9: (np.array([-0.09, 0.0, 0.03]), np.array([tip_dx + 0.02, 0.0, 0.09])),  # middle: above
        13: (np.array([-0.085, -0.01, 0.035]), np.array([tip_dx + 0.03, -0.01, 0.09])),
        17: (np.array([-0.08, -0.02, 0.04]), np.array([tip_dx + 0.04, -0.02, 0.09])),
    }
    for start, (base, tip) in chains.items():
        for k in range(4):
            L[start + k] = base + (tip - base) * k / 3.0
    return L


def _box_parts() -> list[trimesh.Trimesh]:
    lo = trimesh.creation.box(extents=[2 * BOX_HALF[0], 2 * BOX_HALF[1], BOX_HALF[2]])
    hi = lo.copy()
    lo.apply_translation([0, 0, -BOX_HALF[2] / 2])
    hi.apply_translation([0, 0, BOX_HALF[2] / 2])
    return [lo, hi]


def _write_object(scene_dir: Path, name: str, visual: trimesh.Trimesh, parts, centre: np.ndarray, extra=None) -> None:
    sa = scene_dir / name / "sim_assets"
    (sa / "coacd").mkdir(parents=True)
    visual.export(sa / "visual.obj")
    for i, p in enumerate(parts):
        p.export(sa / "coacd" / f"part_{i:02d}.obj")
    props = {"world_position": [float(x) for x in centre]}
    props.update(extra or {})
    (sa / "properties.json").write_text(json.dumps(props))


def expected_grasp_frame() -> int:
    """First frame the thumb and index tips are within GRASP_DIST_M of the box surface.

    Tip at (x, +-(half_y + gap), z_mid): inside the box's x-range the distance is
    the gap; beyond it, hypot(x - x_max, gap). Touch when that < 1.5 cm, and the
    hand keeps approaching/holding, so the run starts at the first such frame.
    """
    from replay.data.hug import GRASP_DIST_M

    x_max = BOX_CENTRE[0] + BOX_HALF[0]
    dx = np.sqrt(GRASP_DIST_M**2 - TIP_GAP**2)
    t = 0
    while max(X0 - V * t, STOP_X) - x_max >= dx:
        t += 1
    return t


def make_hug_scene(root: Path, T: int = 40, seed: int = 0, staged: bool = False) -> HugFixture:
    """Write the scene under ``root`` (layout in the module doc) and return the truth."""
    rng = np.random.default_rng(seed)
    base = root / "hug-bench" if staged else root
    scene_dir = base / "hug_bench" / "test" / "small_9"
    rec_dir = (base / "scenes" if staged else root / "1m-hugs") / "test" / "small_9"
    rec_dir.mkdir(parents=True)

    _write_object(scene_dir, "box", trimesh.creation.box(extents=2 * BOX_HALF), _box_parts(), BOX_CENTRE)
    can = trimesh.creation.cylinder(radius=CAN_R, height=2 * CAN_HALF_H, sections=48)
    _write_object(scene_dir, "can", can, [can.convex_hull], CAN_CENTRE)

    tmpl = _template_world()
    R_ww = Rotation.from_euler("xyz", [0.3, -0.2, 0.5])  # wrist orientation (any fixed one)
    tmpl_wrist = R_ww.inv().apply(tmpl)  # template in the wrist frame
    lm_world = np.full((T, 21, 3), np.nan)
    T_ww = np.full((T, 4, 4), np.nan)
    pose = rng.normal(0, 0.3, size=(T, 15, 3))
    betas = rng.normal(0, 1, size=(T, 10))
    valid = np.ones(T, bool)
    valid[list(MISSING_RIGHT)] = False
    frames = []
    for t in range(T):
        tip_x = max(X0 - V * t, STOP_X)
        wrist = np.array([tip_x + 0.17, BOX_CENTRE[1], BOX_CENTRE[2]])
        Tw = np.eye(4)
        Tw[:3, :3] = R_ww.as_matrix()
        Tw[:3, 3] = wrist
        T_wd = np.eye(4)
        T_wd[:3, :3] = Rotation.from_euler("z", 0.02 * t).as_matrix() @ Rotation.from_euler("x", -0.6).as_matrix()
        T_wd[:3, 3] = [0.05 * np.sin(0.2 * t), -0.4, 1.55 + 0.01 * np.cos(0.3 * t)]
        T_dw = np.linalg.inv(T_wd) @ Tw
        world = R_ww.apply(tmpl_wrist) + wrist
        dev = (world - T_wd[:3, 3]) @ T_wd[:3, :3]  # inverse transform, row vectors
        right = {
            "T_device_wrist": T_dw,
            "pose": pose[t][None].astype(np.float32),  # first element of a batch
            "landmarks": dev.astype(np.float32),
            "betas": betas[t][None].astype(np.float32),
        }
        tracking = {}
        if t == 4:
            right = dict(right, pose=np.full((1, 15, 3), np.nan, np.float32))
        if t not in (2, 3):
            tracking["right"] = right if t != 3 else None
        if t % 3 == 0:  # left hand: far away to the left, never near an object
            left_world = tmpl + np.array([0.0, 0.6, 0.3])
            tracking["left"] = {
                "T_device_wrist": np.linalg.inv(T_wd) @ np.eye(4),
                "pose": np.zeros((1, 15, 3), np.float32),
                "landmarks": ((left_world - T_wd[:3, 3]) @ T_wd[:3, :3]).astype(np.float32),
            }
        frames.append({"index": 1000 + 3 * t, "T_world_device": T_wd, "mano_hand_tracking": tracking})
        if valid[t]:
            lm_world[t] = world
            T_ww[t] = Tw
    if 2 in MISSING_RIGHT:
        frames[2]["mano_hand_tracking"].pop("right", None)
    aria = rec_dir / "aria_data.pkl"
    with open(aria, "wb") as f:
        pickle.dump({"fps": FPS, "frame_data": frames}, f, protocol=4)
    return HugFixture(
        root=root, aria_pkl=aria, scene_dir=scene_dir, landmarks_world=lm_world, T_world_wrist=T_ww,
        pose=np.where(valid[:, None, None], pose, np.nan), betas=betas, valid=valid,
        grasp_frame=expected_grasp_frame(), objects={"box": BOX_CENTRE, "can": CAN_CENTRE},
    )


if __name__ == "__main__":
    import sys

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/hug_fixture")
    fx = make_hug_scene(out, staged=True)
    print(f"wrote {fx.aria_pkl} (grasp frame {fx.grasp_frame}) and assets in {fx.scene_dir}")
