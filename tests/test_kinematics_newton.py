"""hand_coords layout against Newton itself: the imported hand's eval_fk equals our FK.

Uses the in-repo importer (``importer_patches.add_mjcf``, which folds the wrist's slides +
ball into one FREE joint) and Newton, both required dependencies: an import error fails.
"""

from __future__ import annotations

import newton
import numpy as np
import pytest
import warp as wp
from scipy.spatial.transform import Rotation

import importer_patches as importer
from replay.kinematics.model import HandKinematics

pytestmark = pytest.mark.needs_data


def test_newton_eval_fk_matches_hand_coords_layout(capsule_rhand):
    kin = HandKinematics.from_mjcf(capsule_rhand)
    builder = newton.ModelBuilder()
    importer.add_mjcf(builder, capsule_rhand)
    model = builder.finalize(device="cpu")
    types = model.joint_type.numpy()
    assert int(types[0]) == int(newton.JointType.FREE) and all(int(t) == int(newton.JointType.BALL) for t in types[1:])
    assert list(model.joint_q_start.numpy()) == [0] + [7 + 4 * i for i in range(16)]
    labels = [str(x).rsplit("/", 1)[-1] for x in model.joint_label]
    assert labels[1:] == [f"mano_joint_{i}" for i in range(1, 16)]

    rng = np.random.default_rng(0)
    for trial in range(3):
        wpos = rng.normal(size=3)
        wq = Rotation.random(random_state=trial).as_quat()
        fq = Rotation.random(15, random_state=10 + trial).as_quat()
        q = np.concatenate([wpos, wq, fq.ravel()])  # hand_coords layout
        state = model.state()
        newton.eval_fk(model, wp.array(q.astype(np.float32), device="cpu"), model.joint_qd, state)
        body_q = state.body_q.numpy()
        X, G, _ = kin.fk_frames(wpos[None], Rotation.from_quat(wq).as_matrix()[None], Rotation.from_quat(fq).as_matrix()[None])
        np.testing.assert_allclose(body_q[:16, :3], X[0], atol=2e-6)  # float32
        ang = (Rotation.from_quat(body_q[:16, 3:7]).inv() * Rotation.from_matrix(G[0])).magnitude()
        assert ang.max() < 1e-5
