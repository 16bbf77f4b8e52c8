"""One built scene per object (its content, the hand and the structural config) in a worker, reset and
placed between uses.

Building a replay scene (:func:`replay.sim.scene.compile_scene`: Newton's ``finalize``, the conversion
to an ``MjModel`` whose compile rebuilds every mesh hull; then :func:`replay.sim.scene.finish_scene`:
the contact probe, the flutter damping, the read-back) costs a worker about as much as stepping a
default rollout (issue 47: 0.50 s against 0.29 s on mug_lift). A recording's settings, samples and
ablation groups ask for the same scene again, and so does every other recording of the same object
(GRAB: 1,335 sequences of 51 objects; HUG-Bench: 900 grasps of 90). :func:`cached_scene` compiles a
scene once per object and process and hands it back, reset, for every use:

* the key (:func:`scene_key`) is everything the compile reads but the recording's placement: the
  :class:`~replay.sim.scene_spec.SceneSpec`'s object by content (every mesh's bytes by SHA-256, the
  asset's scalar fields), the hand MJCF's bytes and path (the meshes it names lie beside it), the
  ablation, whether the support is a table top or a plane, and the config's fields except
  :data:`PROTOCOL_FIELDS`, which no scene builder reads (``tests/test_scene_cache.py`` greps the
  sim layer for each);
* the placement (:func:`placement_key`): the object's and the hand's first poses, the support's
  height and extent, the grasp pose the probe counts contacts at and the finger targets the flutter
  bound reads. The same placement again (a recording's settings and samples): every array and
  option of the compiled ``MjModel`` is copied back from a snapshot taken when the scene was
  finished (``mj_copyModel``), so an edit of any field by anyone (a
  :class:`~replay.sim.engine.variants.Variant` of any kind, today's or a later one's) never leaks
  into the next use. Another placement (another recording of the object): the model is copied back
  from its snapshot as compiled (before the probe and every edit), Newton's finger damping as
  compiled, the new placement written in (:func:`replay.sim.scene_placement.place_scene`: what a
  fresh build of that recording compiles, bit for bit), and the scene finished again
  (:func:`replay.sim.scene.finish_scene`, ~0.03 s against the compile's ~0.1 s); either way the
  solver's ``MjData`` is ``mj_resetData`` and the scene's ``config`` is the caller's.

``tests/test_scene_placement.py`` compares a placed scene with a fresh build of the same recording
field by field (every ``MjModel`` and Newton array) and their trajectories bit for bit.

Only scenes of the MuJoCo C engine (``engine="mujoco-c"``) are kept: the mujoco-warp, Newton-step and SolverSteel engines hold device buffers that this reset does
not cover, so their scenes are built every time, as before. ``REPLAY_SCENE_CACHE=0`` turns the cache
off (every scene built afresh); :data:`MAX_SCENES` objects are kept, least recently used dropped first.
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
from replay.results.engine_choice import EngineChoice

#: config fields no scene builder reads (the lift protocol's part: its plan's timing and shape, its verdict's
#: thresholds, the diagnosis; what every protocol replays; the runaway limits): settings that differ only in these
#: share one built scene. Checked by ``tests/test_scene_cache.py`` (no module of ``replay/sim`` reads them).
PROTOCOL_FIELDS = frozenset(
    {
        "lift",
        "ablation_clean_mm",
        "max_linear_speed",
        "max_angular_speed",
        "replay_speed",
        "approach_window_s",
        "recording_fps",
        "object_time_offset_s",
    }
)
#: objects kept per process (each a Newton model, its solver and three compiled MjModels: the stepped one and
#: its snapshots as compiled and as finished; measured 1-25 MB of resident memory each on GRAB lifts)
MAX_SCENES = 4

_SCENES: OrderedDict = OrderedDict()
#: since the process started (benchmarks, tests): ``builds`` (compiles), ``hits`` (a kept object, any
#: placement) and, of those, ``placements`` (a kept object moved to another recording's placement)
STATS = {"hits": 0, "builds": 0, "placements": 0}


@dataclasses.dataclass
class _Entry:
    """A kept object: its probe-stage scene, the compiled model as compiled and Newton's finger damping then
    (what :func:`replay.sim.scene.finish_scene` edits); the finished scene of the last placement and its
    model's snapshot."""

    compiled: object
    as_compiled: mujoco.MjModel
    damping: np.ndarray
    arrays: tuple[str, ...]
    placed: str = ""
    scene: object = None
    pristine: mujoco.MjModel | None = None


def enabled() -> bool:
    """False when ``REPLAY_SCENE_CACHE=0`` (every scene built afresh)."""
    return os.environ.get("REPLAY_SCENE_CACHE", "1") != "0"


def cacheable(cfg) -> bool:
    """True when scenes of ``cfg`` are kept (the direct MuJoCo C engine; module doc)."""
    return cfg.engine is EngineChoice.MUJOCO_C


def _digest_array(h, a) -> None:
    a = np.ascontiguousarray(np.asarray(a, float))
    h.update(repr(a.shape).encode())
    h.update(a.tobytes())


def scene_key(spec, cfg) -> str:
    """Hex SHA-256 of what the compile of a scene of ``spec`` under ``cfg`` reads, its placement left out
    (module doc).

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
    h.update(json.dumps([fields, c, spec.ablation, spec.support_extent is None], sort_keys=True, default=str).encode())
    return h.hexdigest()


def placement_key(spec) -> str:
    """Hex SHA-256 of ``spec``'s placement: the first poses, the support, the grasp pose and the finger
    targets (module doc)."""
    h = hashlib.sha256()
    h.update(json.dumps([spec.support_height, spec.support_extent], default=str).encode())
    for arr in (spec.object_pos, spec.object_quat, spec.hand_coords0, spec.grasp_coords, spec.commanded_finger_quats):
        h.update(b"none" if arr is None else b"arr")
        if arr is not None:
            _digest_array(h, arr)
    return h.hexdigest()


def model_arrays(m: mujoco.MjModel) -> tuple[str, ...]:
    """The names of every numpy array field of ``m`` (``geom_friction``, ``body_mass``, ...): what
    :func:`reset_model` copies back."""
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


def reset_model(solver, snapshot: mujoco.MjModel, arrays: tuple[str, ...]) -> None:
    """Copy every array (``arrays``) and option of ``snapshot`` back into ``solver.mj_model``, and
    ``mj_resetData`` its data (module doc)."""
    m = solver.mj_model
    for name in arrays:
        np.copyto(getattr(m, name), getattr(snapshot, name))
    for f in _options(snapshot):
        v = getattr(snapshot.opt, f)
        if isinstance(v, np.ndarray):
            getattr(m.opt, f)[...] = v
        else:
            setattr(m.opt, f, v)
    mujoco.mj_resetData(m, solver.mj_data)


def _finish(entry: _Entry, spec, cfg, place: str) -> None:
    """Finish ``entry``'s probe-stage scene for ``spec``'s placement under ``cfg`` and snapshot the result."""
    from replay.sim.scene import finish_scene

    entry.scene = finish_scene(dataclasses.replace(entry.compiled, config=cfg), spec)
    entry.pristine, entry.placed = copy.copy(entry.scene.solver.mj_model), place


def _place(entry: _Entry, spec, cfg, place: str) -> None:
    """Move a kept object to another recording: the model and Newton's damping as compiled, the placement
    written in, finished again (module doc)."""
    from replay.sim.scene_placement import place_scene

    solver = entry.compiled.solver
    reset_model(solver, entry.as_compiled, entry.arrays)
    entry.compiled.model.joint_damping.assign(entry.damping)
    entry.compiled = place_scene(entry.compiled, spec)
    _finish(entry, spec, cfg, place)


def _compile(spec, cfg) -> _Entry:
    from replay.sim.physics import refuse_unsupported
    from replay.sim.scene import compile_scene

    refuse_unsupported(cfg)
    compiled = compile_scene(spec, cfg)
    m = compiled.solver.mj_model
    return _Entry(compiled, copy.copy(m), compiled.model.joint_damping.numpy().copy(), model_arrays(m))


def cached_scene(spec, cfg, build):
    """The scene of ``spec`` under ``cfg`` (module doc): compiled the first time its object is asked for,
    else the kept one, reset (and placed, for another recording); either way a copy of the kept
    :class:`~replay.sim.scene.Scene` with ``cfg`` as its config and its own read-back figures, sharing the
    kept model and solver.

    Args:
        spec: a :class:`replay.sim.scene_spec.SceneSpec`. cfg: a :class:`replay.config.ReplayConfig`.
        build: the builder of a scene that is not kept (:func:`replay.sim.engine.factory.build_engine_scene`).

    Raises:
        as ``build``: DataError, SceneError, ReadbackError.
    """
    if not (enabled() and cacheable(cfg)):
        return build(spec, cfg)
    key, place = scene_key(spec, cfg), placement_key(spec)
    entry = _SCENES.get(key)
    if entry is None:
        entry = _compile(spec, cfg)
        _finish(entry, spec, cfg, place)
        _SCENES[key] = entry
        while len(_SCENES) > MAX_SCENES:
            _SCENES.popitem(last=False)
        STATS["builds"] += 1
    else:
        _SCENES.move_to_end(key)
        STATS["hits"] += 1
        if entry.placed == place:
            reset_model(entry.scene.solver, entry.pristine, entry.arrays)
        else:
            STATS["placements"] += 1
            _place(entry, spec, cfg, place)
    # the figures a rollout copies into its results are this use's own (a results dict edited later
    # must not reach another use's); the model, the solver and their arrays are the kept scene's
    s = entry.scene
    return dataclasses.replace(
        s,
        config=cfg,
        readback=copy.deepcopy(s.readback),
        probe_contacts=list(s.probe_contacts),
        flutter=copy.deepcopy(s.flutter),
    )


def clear() -> None:
    """Drop every kept scene (tests, benchmarks: a cold start)."""
    _SCENES.clear()
