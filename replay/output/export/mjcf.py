"""MJCF export of one rollout: ``model.mjb``, ``scene.xml``, ``inputs.npz``, ``replay_export.py`` and
``export.json`` (docs/results.md, exports)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import mujoco
import numpy as np

from replay.fileio import atomic_write_bytes, atomic_write_text
from replay.output.export import standalone
from replay.protocol.input_log import InputLog

#: the study's outcome fields the standalone script prints under the same meaning (its names)
STUDY_FIGURES = {
    "rise": "rise_m",
    "clearance": "clearance_m",
    "separation_mm": "separation_mm",
    "contacts_at_lift": "contacts_at_lift",
    "max_hand_object_contacts": "max_hand_object_contacts",
}


def inputs_arrays(log: InputLog, contact_force_min: float) -> dict:
    """The ``inputs.npz`` arrays of ``log`` (module doc); key frames -1 where there is none."""
    keys = log.key_frames()
    d = mujoco.MjData(log.model)
    mujoco.mj_setState(log.model, d, log.state0, mujoco.mjtState.mjSTATE_INTEGRATION)
    return dict(
        state0=log.state0,
        qpos0=d.qpos.copy(),
        qvel0=d.qvel.copy(),
        ctrl=log.ctrl,
        xfrc_applied=log.xfrc_applied,
        qfrc_applied=log.qfrc_applied,
        frame_steps=log.frame_steps,
        bodies=log.bodies,
        hand_geoms=log.hand_geoms,
        object_geoms=log.object_geoms,
        object_vertices=np.asarray(log.scene.object_vertices, float),
        support_height=np.float64(log.scene.support_height),
        contact_force_min=np.float64(contact_force_min),
        lift_start=np.int64(-1 if keys["lift_start"] is None else keys["lift_start"]),
        judge=np.int64(keys["judge"]),
        phase=np.asarray(log.plan.phase[: log.trace.done], np.int32),
        rollout_object_pos=np.asarray(log.trace.body_pos[: log.trace.done, -1], float),
        mujoco_version=np.str_(mujoco.__version__),
        **standalone.model_fields(log.model),
    )


def export_mjcf(log: InputLog, out: str | Path, cfg, *, meta: dict) -> dict:
    """Write the MJCF export of ``log`` into ``out`` (``meta`` into ``export.json``); returns its dict. OSError."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    mujoco.mj_saveModel(log.model, str(out / "model.mjb"), None)
    arrays = inputs_arrays(log, cfg.contact_force_min)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    atomic_write_bytes(out / "inputs.npz", buf.getvalue())
    script = Path(standalone.__file__).read_text()
    atomic_write_text(
        out / "replay_export.py", script.replace("\nMADE_WITH = None\n", f"\nMADE_WITH = {mujoco.__version__!r}\n", 1)
    )
    z = {k: np.asarray(v) for k, v in arrays.items()}
    figures = standalone.outcome(*standalone.replay(mujoco.MjModel.from_binary_path(str(out / "model.mjb")), z), z=z)
    from replay.sim.scene import make_solver  # scene.xml as Newton writes it, without the compiled-model edits

    make_solver(log.scene.model, cfg, log.scene.contact_capacity, save_to_mjcf=str(out / "scene.xml"))
    xml = mujoco.MjModel.from_xml_path(str(out / "scene.xml"))
    copied, left = standalone.apply_model_fields(xml, z)
    scene_xml = dict(
        standalone.differs_from_rollout(standalone.replay(xml, z)[0], z), fields_copied=copied, fields_left=left
    )
    doc = dict(
        meta,
        files=["model.mjb", "inputs.npz", "replay_export.py", "scene.xml", "export.json"],
        mujoco=mujoco.__version__,
        steps=int(log.frame_steps.sum()),
        frames=int(len(log.frame_steps)),
        replay_figures=figures,
        rerun_final_object_pos_m=log.final_body_pos[-1].tolist(),
    )
    doc["scene_xml"] = (
        "Newton's MJCF of the scene before the edits made on the compiled model; replay_export.py "
        "replays it under another MuJoCo version, the compiled model's fields applied; model.mjb is "
        "what ran (README, 'Check a rollout yourself')"
    )
    doc["scene_xml_replay"] = scene_xml  # under this MuJoCo: how far the scene.xml replay lands from the rollout
    atomic_write_text(out / "export.json", json.dumps(doc, indent=1, default=float))
    return doc
