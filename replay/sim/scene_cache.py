"""One built scene per scene content and structural config in a worker, reset between uses.

Building a replay scene (:func:`replay.sim.engine.factory.build_engine_scene`: Newton's ``finalize``,
the conversion to an ``MjModel`` whose compile rebuilds every mesh hull, the contact probe, the
read-back) costs a worker more than stepping a default rollout (issue 47: 0.50 s against 0.29 s on
mug_lift). A recording's settings, samples and ablation groups ask for the same scene again;
:func:`cached_scene` builds it once per process and hands the same scene back, reset:

* the key is everything the build reads: the :class:`~replay.sim.scene_spec.SceneSpec` by content
  (the hand MJCF's bytes and path (the meshes it names lie beside it), every object mesh's bytes by
  SHA-256, the asset's scalar fields, every pose
  and target array by its bytes) and the config's fields except :data:`PROTOCOL_FIELDS`, which no
  scene builder reads (``tests/test_scene_cache.py`` greps the sim layer for each);
* reset (:func:`reset_scene`): every array and option of the compiled ``MjModel`` the direct engine
  steps is copied back from a snapshot taken when the scene was built (``mj_copyModel``), so an edit
  of any field by anyone (a :class:`~replay.sim.engine.variants.Variant` of any kind, today's or a
  later one's: the engine copies the model for an edited world, and the reset holds even where one
  edits the shared model) never leaks into the next use; the solver's ``MjData`` is
  ``mj_resetData``; the scene's ``config`` is the caller's (its protocol fields).

Only scenes of the direct MuJoCo C engine (``device="cpu"``, ``engine="direct"``, MuJoCo backend) are
kept: the mujoco-warp, Newton-step and SolverSteel engines hold device buffers that this reset does
not cover, so their scenes are built every time, as before. ``REPLAY_SCENE_CACHE=0`` turns the cache
off (every scene built afresh); :data:`MAX_SCENES` scenes are kept, least recently used dropped first.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
from collections import OrderedDict
from pathlib import Path

import mujoco
import numpy as np

from replay.data.asset_memo import file_sha256

#: config fields no scene builder reads (the plan's timing and shape, the verdict's thresholds, the
#: diagnosis): settings that differ only in these share one built scene. Checked by
#: ``tests/test_scene_cache.py`` (no module of ``replay/sim`` names them).
PROTOCOL_FIELDS = frozenset({
    "lift_height", "lift_s", "lift_profile", "hold_s", "shake_s", "shake_amplitude", "shake_hz", "release_s",
    "release_fall_s", "lifted_min_rise", "lifted_min_clearance", "shake_max_slip", "ablation_clean_mm",
    "diag_push_mm", "diag_grip_lever_m", "diag_never_rose_mm", "diag_slip_onset_mm", "max_linear_speed",
    "max_angular_speed", "replay_speed", "approach_window_s", "grip_overshoot", "pad_near_mm", "pad_max_deg",
    "pad_blend_s", "pad_axis", "pad_compression_mm", "recording_fps", "object_time_offset_s",
})
#: scenes kept per process (each a Newton model, its solver and two compiled MjModels: measured 1-25 MB
#: of resident memory each on GRAB lifts)
MAX_SCENES = 4

_SCENES: OrderedDict = OrderedDict()
#: hits and builds since the process started (benchmarks, tests)
STATS = {"hits": 0, "builds": 0}


@dataclasses.dataclass
class _Entry:
    scene: object
    pristine: mujoco.MjModel
    arrays: tuple[str, ...]


def enabled() -> bool:
    """False when ``REPLAY_SCENE_CACHE=0`` (every scene built afresh)."""
    return os.environ.get("REPLAY_SCENE_CACHE", "1") != "0"


def cacheable(cfg) -> bool:
    """True when scenes of ``cfg`` are kept (the direct MuJoCo C engine; module doc)."""
    return cfg.solver_backend != "steel" and cfg.device == "cpu" and cfg.engine == "direct"


def _digest_array(h, a) -> None:
    a = np.ascontiguousarray(np.asarray(a, float))
    h.update(repr(a.shape).encode())
    h.update(a.tobytes())


def scene_key(spec, cfg) -> str:
    """Hex SHA-256 of what a scene of ``spec`` under ``cfg`` is built from (module doc).

    Raises:
        OSError: the MJCF or a mesh file cannot be read.
    """
    h = hashlib.sha256()
    a = spec.asset
    h.update(file_sha256(spec.mjcf).encode())
    h.update(str(Path(spec.mjcf).resolve()).encode())  # the files it names (meshes) are found beside it
    for p in [a.visual_mesh, *a.collision_meshes]:
        h.update(file_sha256(p).encode())
    fields = {k: v for k, v in dataclasses.asdict(a).items() if k not in ("visual_mesh", "collision_meshes", "source")}
    c = {k: v for k, v in cfg.to_dict().items() if k not in PROTOCOL_FIELDS}
    h.update(json.dumps([fields, c, spec.support_height, spec.ablation, spec.support_extent], sort_keys=True,
                        default=str).encode())
    for arr in (spec.object_pos, spec.object_quat, spec.hand_coords0, spec.grasp_coords, spec.commanded_finger_quats):
        h.update(b"none" if arr is None else b"arr")
        if arr is not None:
            _digest_array(h, arr)
    return h.hexdigest()


def model_arrays(m: mujoco.MjModel) -> tuple[str, ...]:
    """The names of every numpy array field of ``m`` (``geom_friction``, ``body_mass``, ...): what
    :func:`reset_scene` copies back."""
    names = []
    for name in dir(m):
        if name.startswith("_"):
            continue
        try:
            v = getattr(m, name)
        except Exception:  # noqa: BLE001 (a binding property that cannot be read here is not a model array)
            continue
        if isinstance(v, np.ndarray) and v.flags.writeable:
            names.append(name)
    return tuple(names)


def _options(m: mujoco.MjModel) -> list[str]:
    return [f for f in dir(m.opt) if not f.startswith("_") and not callable(getattr(m.opt, f))]


def reset_scene(entry: _Entry) -> None:
    """Copy every array and option of the snapshot back into the scene's compiled model, and
    ``mj_resetData`` its data (module doc)."""
    solver = entry.scene.solver
    m, src = solver.mj_model, entry.pristine
    for name in entry.arrays:
        np.copyto(getattr(m, name), getattr(src, name))
    for f in _options(src):
        v = getattr(src.opt, f)
        if isinstance(v, np.ndarray):
            getattr(m.opt, f)[...] = v
        else:
            setattr(m.opt, f, v)
    mujoco.mj_resetData(m, solver.mj_data)


def cached_scene(spec, cfg, build):
    """The scene of ``spec`` under ``cfg``: ``build(spec, cfg)`` the first time, else the kept scene,
    reset (:func:`reset_scene`); either way a copy of the kept :class:`~replay.sim.scene.Scene` with ``cfg``
    as its config and its own read-back figures, sharing the kept model and solver.

    Args:
        spec: a :class:`replay.sim.scene_spec.SceneSpec`. cfg: a :class:`replay.config.ReplayConfig`.
        build: the builder (:func:`replay.sim.engine.factory.build_engine_scene`).

    Raises:
        as ``build``: DataError, SceneError, ReadbackError.
    """
    if not (enabled() and cacheable(cfg)):
        return build(spec, cfg)
    key = scene_key(spec, cfg)
    entry = _SCENES.get(key)
    if entry is None:
        scene = build(spec, cfg)
        m = scene.solver.mj_model
        entry = _SCENES[key] = _Entry(scene, copy.copy(m), model_arrays(m))
        while len(_SCENES) > MAX_SCENES:
            _SCENES.popitem(last=False)
        STATS["builds"] += 1
    else:
        _SCENES.move_to_end(key)
        reset_scene(entry)
        STATS["hits"] += 1
    # the figures a rollout copies into its results are this use's own (a results dict edited later
    # must not reach another use's); the model, the solver and their arrays are the kept scene's
    s = entry.scene
    return dataclasses.replace(s, config=cfg, readback=copy.deepcopy(s.readback), probe_contacts=list(s.probe_contacts),
                               flutter=copy.deepcopy(s.flutter))


def clear() -> None:
    """Drop every kept scene (tests, benchmarks: a cold start)."""
    _SCENES.clear()
