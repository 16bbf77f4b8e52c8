"""One built scene per object in a worker, reset and placed between uses (docs/engine.md, "Where a worker's time
goes"). MuJoCo C only; ``REPLAY_SCENE_CACHE=0`` turns it off; least recently used dropped first."""

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

#: config fields no scene builder reads (``tests/test_scene_cache.py``): settings differing only in these share a scene
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
#: objects kept per process (each a Newton model, its solver and three compiled MjModels)
MAX_SCENES = 4

_SCENES: OrderedDict = OrderedDict()
#: since the process started: ``builds``, ``hits`` (a kept object) and ``placements`` (hits moved to a new placement)
STATS = {"hits": 0, "builds": 0, "placements": 0}


@dataclasses.dataclass
class _Entry:
    """A kept object: probe-stage scene, compiled model and finger damping; the last placement's scene and snapshot."""

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
    """True when scenes of ``cfg`` are kept (MuJoCo C)."""
    return cfg.engine is EngineChoice.MUJOCO_C


def _digest_array(h, a) -> None:
    a = np.ascontiguousarray(np.asarray(a, float))
    h.update(repr(a.shape).encode())
    h.update(a.tobytes())


def scene_key(spec, cfg) -> str:
    """Hex SHA-256 of what compiling ``spec`` under ``cfg`` reads, less the placement. Raises OSError."""
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
    """Hex SHA-256 of ``spec``'s placement: the first poses, the support, the grasp pose and the finger targets."""
    h = hashlib.sha256()
    h.update(json.dumps([spec.support_height, spec.support_extent], default=str).encode())
    for arr in (spec.object_pos, spec.object_quat, spec.hand_coords0, spec.grasp_coords, spec.commanded_finger_quats):
        h.update(b"none" if arr is None else b"arr")
        if arr is not None:
            _digest_array(h, arr)
    return h.hexdigest()


def model_arrays(m: mujoco.MjModel) -> tuple[str, ...]:
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
    """Copy every array (``arrays``) and option of ``snapshot`` into ``solver.mj_model``; ``mj_resetData`` its data."""
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
    from replay.sim.scene import finish_scene

    entry.scene = finish_scene(dataclasses.replace(entry.compiled, config=cfg), spec)
    entry.pristine, entry.placed = copy.copy(entry.scene.solver.mj_model), place


def _place(entry: _Entry, spec, cfg, place: str) -> None:
    """Move a kept object to another recording's placement and finish it again."""
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
    """The scene of ``spec``: the object's kept scene reset (and placed), else compiled by ``build``; a copy with
    ``cfg`` and its own read-back, sharing model and solver. Raises what ``build`` raises."""
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
    # figures are this use's own (a later edit must not reach another use); model, solver, arrays are shared
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
