"""A HUG-Bench fixture whose hand data are consistent with manosim FK.

``tests/hug_fixture.py`` (the adapter's fixture) writes landmarks and MANO poses
that are independent of each other. For the pose-mapping validation we need a
recording whose landmarks are what the recorded pose produces: this module takes
that scene, fits the manosim hand to its landmarks (landmark IK), and rewrites
every valid right-hand frame with the fitted ``T_device_wrist`` and ``pose``
(flat-hand axis-angle) and the landmarks FK gives for them, in the device frame,
float32 as in the real files. The layout is then moved to ``<root>/hug-bench`` (recordings under
``scenes/``, as ``scripts/fetch_data.py`` stages them) as :func:`replay.data.locate.dataset_dir` expects.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
from hug_fixture import HugFixture, make_hug_scene
from mano_inverse import finger_quat_to_mano
from scipy.spatial.transform import Rotation

from replay.kinematics.ik import IKOptions, fit_landmarks
from replay.kinematics.model import HandKinematics


def make_fk_consistent_hug(root: Path, mjcf: Path) -> tuple[Path, HugFixture]:
    """Write the scene under ``root``; return (data_dir for load_recording, adapter fixture truth)."""
    scene = make_hug_scene(root)
    # The adapter fixture's landmarks are straight chains no hand can match (a few cm
    # off): the IK only has to give some hand pose near them, so no restarts.
    kin = HandKinematics.from_mjcf(mjcf)
    res = fit_landmarks(kin, np.nan_to_num(scene.landmarks_world), scene.valid, options=IKOptions(stride=1, restart_m=np.inf), cache=False)
    with open(scene.aria_pkl, "rb") as f:
        data = pickle.load(f)
    L = kin.fk_landmarks(res.wrist_pos, res.wrist_quat, res.finger_quat)
    pose = finger_quat_to_mano(res.finger_quat)
    for i, t in enumerate(res.frames):
        frame = data["frame_data"][t]
        hand = frame["mano_hand_tracking"]["right"]
        T_wd = np.asarray(frame["T_world_device"], dtype=np.float64)
        T_ww = np.eye(4)
        T_ww[:3, :3] = Rotation.from_quat(res.wrist_quat[i]).as_matrix()
        T_ww[:3, 3] = res.wrist_pos[i]
        hand["T_device_wrist"] = np.linalg.inv(T_wd) @ T_ww
        hand["pose"] = pose[i][None].astype(np.float32)
        hand["landmarks"] = ((L[i] - T_wd[:3, 3]) @ T_wd[:3, :3]).astype(np.float32)
    with open(scene.aria_pkl, "wb") as f:
        pickle.dump(data, f, protocol=4)
    (root / "hug-bench" / "scenes").mkdir(parents=True)
    (root / "1m-hugs" / "test").rename(root / "hug-bench" / "scenes" / "test")
    (root / "hug_bench").rename(root / "hug-bench" / "hug_bench")
    return root, scene


if __name__ == "__main__":  # python tests/kin_hug_fixture.py OUT_DIR MJCF
    import sys

    print(make_fk_consistent_hug(Path(sys.argv[1]), Path(sys.argv[2]))[0])
