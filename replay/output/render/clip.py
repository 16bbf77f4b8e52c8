"""A study rollout's saved poses (``docs/results.md``), hand MJCF, object mesh and support, read and checked."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from replay.errors import DataError
from replay.output.render.poses import PoseTrack, load_poses_npz
from replay.output.render.style import GHOST_RGBA, OBJECT_RGBA
from replay.results.config_parts import LiftSettings
from replay.results.convert import upgrade_study
from replay.results.legacy_physics import legacy_config
from replay.results.outcomes import OUTCOMES
from replay.results.records import Phase, RolloutRecord
from replay.results.study_rows import StudyRow

#: phase codes in the saved ``phase`` array
PHASE_NAMES = {int(p): p.name.lower() for p in Phase}

#: shake slip limit in the wrist frame, m, when the study does not say
DEFAULT_SHAKE_MAX_SLIP = LiftSettings.shake_max_slip

#: table-top box thickness, m, when neither rollout nor study says (``ReplayConfig.support_thickness``'s default)
DEFAULT_SUPPORT_THICKNESS = 0.05

#: the floor under a table top: z = 0 (GRAB's ground), or this far below a lower support, m
FLOOR_DROP_M = 0.5


@dataclass(frozen=True)
class Support:
    """What the object rests on (``replay.sim.scene.build_model``): top ``height`` (world z, m), table-top box
    ``table_top_xy`` ``(xmin, ymin, xmax, ymax)`` (m; None: a ground plane) and its ``thickness`` (m)."""

    height: float
    table_top_xy: tuple[float, float, float, float] | None = None
    thickness: float = DEFAULT_SUPPORT_THICKNESS

    @property
    def floor_z(self) -> float | None:
        """z of the floor drawn under a table top (see :data:`FLOOR_DROP_M`), None for a plane."""
        if self.table_top_xy is None:
            return None
        return min(0.0, self.height - FLOOR_DROP_M)


def parse_support(
    rollout: dict, where: Path | None, field_prefix: str = "", *, thickness: float | None = None
) -> Support:
    """The :class:`Support` of a rollout entry: ``support_height`` (m) and ``support`` (``"plane"``, missing, or
    ``{"table_top_xy": [xmin, ymin, xmax, ymax]}``). Raises DataError: bad height, thickness or extent."""
    try:
        height = float(rollout.get("support_height", 0.0))
        if not math.isfinite(height):
            raise ValueError
    except (TypeError, ValueError):
        raise DataError(where, field_prefix + "support_height", "not a finite number") from None
    th = DEFAULT_SUPPORT_THICKNESS if thickness is None else thickness
    try:
        th = float(th)
        if not (math.isfinite(th) and th > 0):
            raise ValueError
    except (TypeError, ValueError):
        raise DataError(where, "config.support_thickness", f"expected a positive number, got {th!r}") from None
    sup = rollout.get("support", "plane")
    if sup is None or sup == "plane":
        return Support(height, None, th)
    xy = sup.get("table_top_xy") if isinstance(sup, dict) else None
    try:
        ext = tuple(float(v) for v in xy)
        ok = len(ext) == 4 and all(math.isfinite(v) for v in ext) and ext[0] < ext[2] and ext[1] < ext[3]
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DataError(
            where,
            field_prefix + "support",
            f'expected "plane" or {{"table_top_xy": [xmin, ymin, xmax, ymax]}} with min < max, got {sup!r}',
        )
    return Support(height, ext, th)


@lru_cache(maxsize=16)
def _study_config(path: str) -> dict:
    """``config`` of a study JSON in today's layout (empty when it has none or cannot be read)."""
    try:
        doc = json.loads(Path(path).read_text())
        cfg = doc.get("config") if isinstance(doc, dict) else None
        return legacy_config(cfg) if isinstance(cfg, dict) else {}
    except (OSError, ValueError, DataError):
        return {}


def _study_setting(source, key: str, part: str | None = None):
    """``config[key]`` (``config[part][key]`` with ``part``) of the study JSON ``source`` (None: no such file or
    setting)."""
    if source is None or not Path(source).is_file():
        return None
    cfg = _study_config(str(Path(source).resolve()))
    return (cfg.get(part) or {}).get(key) if part else cfg.get(key)


@dataclass
class SceneObject:
    """An object to draw: ``body`` in the :class:`PoseTrack`, overlay ``label``, visual ``mesh`` (any trimesh
    format, object frame, m), ``rgba`` 0-1."""

    body: str
    label: str
    mesh: Path
    rgba: tuple[float, float, float, float] = OBJECT_RGBA[0]


@dataclass
class Clip:
    """One study rollout, loaded and checked, ready to render.

    Attributes:
        track: saved body poses (hand bodies + ``object``).
        contact_count, phase: (F,) hand-object contacts and phase code (:data:`PHASE_NAMES`) per frame.
        hand_mjcf: the manosim MJCF that was simulated.
        objects: what to draw besides the hand.
        support_height: z of the support's top surface, m.
        outcome: one of :data:`replay.results.outcomes.OUTCOMES`.
        title: first overlay line.
        meta: the rollout JSON entry.
        shake_max_slip: the study's shake slip limit in the wrist frame, m.
    """

    track: PoseTrack
    contact_count: np.ndarray
    phase: np.ndarray
    hand_mjcf: Path
    objects: list[SceneObject]
    support_height: float
    outcome: str
    title: str
    meta: dict = field(default_factory=dict)
    support: Support | None = None
    shake_max_slip: float = DEFAULT_SHAKE_MAX_SLIP

    def __post_init__(self):
        if self.support is None:
            self.support = Support(float(self.support_height))

    @property
    def row(self) -> StudyRow:
        """``meta`` read as a study row (verdict, shake_held, sequence, ...)."""
        return StudyRow.from_dict(self.meta or {})


def load_study(study_path: str | Path) -> tuple[dict, Path]:
    """(study dict, its folder: the base of relative ``poses`` paths). Raises DataError: missing, not JSON, or no
    ``rollouts`` list."""
    path = Path(study_path)
    if not path.is_file():
        raise DataError(path, None, "study JSON not found; run scripts/run_study.py first")
    try:
        study = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(path, None, f"not a readable JSON file: {exc}") from None
    if not isinstance(study, dict) or not isinstance(study.get("rollouts"), list):
        raise DataError(path, "rollouts", "study JSON has no 'rollouts' list")
    return upgrade_study(study, path), path.parent.resolve()


def _resolve(path_str, base: Path, where: Path | None, fld: str, what: str) -> Path:
    """A rollout entry's path: absolute, else relative to ``base``, else to the current folder."""
    if not path_str:
        raise DataError(where, fld, f"missing ({what})")
    p = Path(str(path_str)).expanduser()
    candidates = [p] if p.is_absolute() else [base / p, Path.cwd() / p]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    raise DataError(where, fld, f"{what} not found: {path_str} (looked in {', '.join(str(c) for c in candidates)})")


def expand_rollout(
    rollout: dict, study_dir: str | Path, source: str | Path | None = None, *, field_prefix: str = ""
) -> dict:
    """The full rollout entry: the per-rollout JSON named by ``"json"`` (relative to the study folder) merged over
    the summary (an entry with ``poses`` as it is). Raises DataError: that JSON missing or unreadable."""
    if not isinstance(rollout, dict):
        raise DataError(source, field_prefix.rstrip(".") or "rollouts", "rollout entry is not a JSON object")
    if "poses" in rollout or not rollout.get("json"):
        return rollout
    path = Path(study_dir) / str(rollout["json"])
    try:
        full = json.loads(path.read_text())
    except FileNotFoundError:
        raise DataError(source, field_prefix + "json", f"per-rollout JSON not found: {path}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(path, None, f"not a readable JSON file: {exc}") from None
    if not isinstance(full, dict):
        raise DataError(path, None, "per-rollout JSON is not an object")
    rec = RolloutRecord.from_dict(full, path)  # every field by name (format 6 nests them in parts)
    flat = {k: v for k, v in rec.flat().items() if v is not None and k != "ablation"}
    ab = None if rec.ablation is None else {k: v for k, v in rec.ablation.flat().items() if v is not None}
    return {**rollout, **flat, "ablation": None if ab is None else dict(ab, ablation=True)}


def load_clip(
    rollout: dict,
    study_dir: str | Path,
    variant: str = "main",
    *,
    source: str | Path | None = None,
    field_prefix: str = "",
    support_thickness: float | None = None,
) -> Clip:
    """One rollout's saved poses and assets, checked against the contract.

    Args:
        rollout: a ``rollouts`` entry of the study JSON ``source`` (or a per-rollout JSON); ``poses`` relative to
            ``study_dir``.
        variant: ``"main"`` or ``"ablation"`` (the contact-ablation re-run under ``rollout["ablation"]``).
        field_prefix: e.g. ``"rollouts[3]."``, so errors name the field.
        support_thickness: m; default the rollout's, else the study's, else :data:`DEFAULT_SUPPORT_THICKNESS`.

    Raises:
        DataError: no saved poses, a malformed npz, a missing hand MJCF or mesh, an unknown outcome.
    """
    study_dir = Path(study_dir)
    where = Path(source) if source is not None else study_dir
    rollout = expand_rollout(rollout, study_dir, where, field_prefix=field_prefix)
    entry, pre = _variant_entry(rollout, variant, where, field_prefix)
    if not entry.get("poses"):
        raise DataError(
            where,
            pre + "poses",
            "rollout has no saved poses; rerun the study with pose saving on (the renderer never re-simulates)",
        )
    poses_path = study_dir / str(entry["poses"])
    if not poses_path.is_file():
        raise DataError(where, pre + "poses", f"saved poses file not found: {poses_path}")
    outcome = entry.get("outcome")
    if outcome not in OUTCOMES:
        raise DataError(where, pre + "outcome", f"expected one of {OUTCOMES}, got {outcome!r}")
    track, contact, phase = load_poses_npz(poses_path, truncate_nonfinite=(outcome == "unstable"))

    hand_mjcf = _resolve(rollout.get("hand_mjcf"), study_dir, where, field_prefix + "hand_mjcf", "hand MJCF")
    mesh = _resolve(
        rollout.get("object_visual_mesh"), study_dir, where, field_prefix + "object_visual_mesh", "object visual mesh"
    )
    if support_thickness is None:
        support_thickness = rollout.get("support_thickness")
    if support_thickness is None:
        support_thickness = _study_setting(source, "support_thickness")
    support = parse_support(rollout, where, field_prefix, thickness=support_thickness)
    name = str(rollout.get("object") or "object")
    track.index("object")
    title = name if variant == "main" else f"{name} (contact ablation)"
    objects = [SceneObject("object", name, mesh)]
    track, ghost = add_recorded_ghost(track, poses_path, mesh, name=name)
    if ghost is not None:
        objects.append(ghost)
    return Clip(
        track=track,
        contact_count=contact,
        phase=phase,
        hand_mjcf=hand_mjcf,
        objects=objects,
        support_height=support.height,
        outcome=outcome,
        title=title,
        meta=rollout,
        support=support,
        shake_max_slip=float(_study_setting(source, "shake_max_slip", "lift") or DEFAULT_SHAKE_MAX_SLIP),
    )


def _variant_entry(rollout: dict, variant: str, where: Path, field_prefix: str) -> tuple[dict, str]:
    """(the entry of ``variant``: the rollout, or its ablation's fields over it; its field prefix). Raises
    DataError: no ablation run; ValueError: an unknown variant."""
    if variant == "ablation":
        abl = rollout.get("ablation")
        if not isinstance(abl, dict):
            raise DataError(where, field_prefix + "ablation", "rollout has no contact-ablation run")
        return {**rollout, **abl}, field_prefix + "ablation."
    if variant != "main":
        raise ValueError(f"variant must be 'main' or 'ablation', got {variant!r}")
    return rollout, field_prefix


#: body name of the recorded object (the ghost) in the pose track and the render model
GHOST_BODY = "recorded_object"


def add_recorded_ghost(
    track: PoseTrack, poses_path: Path, mesh: Path, *, name: str
) -> tuple[PoseTrack, SceneObject | None]:
    """The recorded object pose (the npz's ``recorded_object_pos`` (F, 3) world m, ``recorded_object_quat`` (F, 4)
    xyzw; first ``len(track.time)`` frames) as an extra body of ``track`` and its translucent object; ``(track,
    None)`` without them (a lift rollout). Raises DataError: wrong shape or non-finite."""
    with np.load(poses_path, allow_pickle=False) as z:
        if "recorded_object_pos" not in z.files or "recorded_object_quat" not in z.files:
            return track, None
        rpos = np.asarray(z["recorded_object_pos"], np.float64)
        rquat = np.asarray(z["recorded_object_quat"], np.float64)
    F = len(track.time)
    for key, arr, w in (("recorded_object_pos", rpos, 3), ("recorded_object_quat", rquat, 4)):
        if arr.ndim != 2 or arr.shape[1] != w or arr.shape[0] < F or not np.all(np.isfinite(arr[:F])):
            raise DataError(poses_path, key, f"expected finite (>= {F}, {w}), got shape {arr.shape}")
    rquat = rquat[:F] / np.linalg.norm(rquat[:F], axis=1, keepdims=True)
    ghost_track = PoseTrack(
        time=track.time,
        body_names=[*track.body_names, GHOST_BODY],
        body_pos=np.concatenate([track.body_pos, rpos[:F, None]], axis=1),
        body_quat=np.concatenate([track.body_quat, rquat[:, None]], axis=1),
        source=track.source,
    )
    return ghost_track, SceneObject(GHOST_BODY, f"{name} (recorded)", mesh, GHOST_RGBA)
