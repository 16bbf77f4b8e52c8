"""A study rollout's saved poses (``docs/results.md``), hand MJCF, object mesh and support, read and checked."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.output.render.poses import PoseTrack, load_poses_npz
from replay.output.render.style import GHOST_RGBA, OBJECT_RGBA
from replay.results.config_parts import LiftSettings
from replay.results.files import read_study
from replay.results.json_record import JsonRecord, read_as
from replay.results.legacy_physics import legacy_config
from replay.results.outcomes import OUTCOMES, UNSTABLE
from replay.results.records import Phase, RolloutRecord, StudyRecord
from replay.results.study_rows import StudyRow

#: phase codes in the saved ``phase`` array
PHASE_NAMES = {int(p): p.name.lower() for p in Phase}

#: the floor under a table top: z = 0 (GRAB's ground), or this far below a lower support, m
FLOOR_DROP_M = 0.5


@dataclass(frozen=True)
class _LiftDrawn(JsonRecord):
    shake_max_slip: float = LiftSettings.shake_max_slip


@dataclass(frozen=True)
class DrawSettings(JsonRecord):
    """The study config's values a drawing uses: ``support_thickness`` m, ``lift.shake_max_slip`` m (wrist frame);
    defaults :class:`~replay.config.ReplayConfig`'s."""

    support_thickness: float = ReplayConfig.support_thickness
    lift: _LiftDrawn = read_as(_LiftDrawn.from_dict, factory=_LiftDrawn)

    @classmethod
    def of(cls, study: StudyRecord | None) -> DrawSettings:
        """A study's settings (defaults without one)."""
        cfg = study.config if study is not None and isinstance(study.config, dict) else {}
        return cls.from_dict(legacy_config(cfg))

    @classmethod
    def read(cls, path: str | Path | None) -> DrawSettings:
        """The settings of the study JSON at ``path``; defaults where it is none or unreadable."""
        try:
            return cls.of(read_study(path)) if path is not None and Path(path).is_file() else cls()
        except DataError:
            return cls()


@dataclass(frozen=True)
class Support:
    """What the object rests on (``replay.sim.scene.build_model``): top ``height`` (world z, m), table-top box
    ``table_top_xy`` ``(xmin, ymin, xmax, ymax)`` (m; None: a ground plane) and its ``thickness`` (m)."""

    height: float
    table_top_xy: tuple[float, float, float, float] | None = None
    thickness: float = ReplayConfig.support_thickness

    @property
    def floor_z(self) -> float | None:
        """z of the floor drawn under a table top (see :data:`FLOOR_DROP_M`), None for a plane."""
        if self.table_top_xy is None:
            return None
        return min(0.0, self.height - FLOOR_DROP_M)


def parse_support(rec: RolloutRecord, where: Path | None, field_prefix: str = "", *, thickness) -> Support:
    """The :class:`Support` of a record: ``support_height`` (m, missing: 0) and ``support`` (``"plane"``, missing, or
    ``{"table_top_xy": [xmin, ymin, xmax, ymax]}``), ``thickness`` m. Raises DataError: bad height, thickness or
    extent."""
    try:
        height = float(0.0 if rec.support_height is None else rec.support_height)
        if not math.isfinite(height):
            raise ValueError
    except (TypeError, ValueError):
        raise DataError(where, field_prefix + "support_height", "not a finite number") from None
    th = positive(thickness, where, "config.support_thickness")
    sup = rec.support
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


def positive(value, where: Path | None, fld: str) -> float:
    """``value`` as a finite float > 0. Raises DataError naming ``fld``: anything else."""
    try:
        v = float(value)
        if math.isfinite(v) and v > 0:
            return v
    except (TypeError, ValueError):
        pass
    raise DataError(where, fld, f"expected a positive number, got {value!r}")


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
        support: what the object rests on.
        outcome: one of :data:`replay.results.outcomes.OUTCOMES`.
        title: first overlay line.
        row: the rollout's study row (verdict, shake_held, sequence, ...).
        shake_max_slip: the study's shake slip limit in the wrist frame, m.
    """

    track: PoseTrack
    contact_count: np.ndarray
    phase: np.ndarray
    hand_mjcf: Path
    objects: list[SceneObject]
    support: Support
    outcome: str
    title: str
    row: StudyRow = field(default_factory=StudyRow)
    shake_max_slip: float = LiftSettings.shake_max_slip


@dataclass(frozen=True)
class StudyRollout:
    """A study's row of one rollout (``field``: where, e.g. ``rollouts[3]``) and its full record."""

    field: str
    row: StudyRow
    record: RolloutRecord

    @property
    def name(self) -> str:
        """Its sequence, else object, else ``field``."""
        return str(self.row.sequence or self.record.sequence or self.record.object or self.field)


def load_study(study_path: str | Path) -> tuple[StudyRecord, Path]:
    """(the study, its folder: the base of relative ``poses`` paths). Raises DataError: missing, not JSON, another
    format, or no ``rollouts`` list."""
    path = Path(study_path)
    if not path.is_file():
        raise DataError(path, None, "study JSON not found; run scripts/run_study.py first")
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(path, None, f"not a readable JSON file: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rollouts"), list):
        raise DataError(path, "rollouts", "study JSON has no 'rollouts' list")
    return StudyRecord.from_dict(doc, path), path.parent.resolve()


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


def study_rollout(
    row: dict, study_dir: str | Path, *, source: str | Path | None = None, where: str = "rollouts"
) -> StudyRollout:
    """A row of a study's rows list (``where``, e.g. ``rollouts[3]``) with its record: the per-rollout JSON its
    ``json`` names (relative to ``study_dir``), else the row itself (one with ``poses``). Raises DataError: the row
    not an object, that JSON missing, unreadable or of another format."""
    if isinstance(row, StudyRollout):
        return row
    if not isinstance(row, dict):
        raise DataError(source, where, "rollout entry is not a JSON object")
    srow = StudyRow.from_dict(row)
    if "poses" in row or not srow.json:
        return StudyRollout(where, srow, RolloutRecord.from_metrics(row))
    path = Path(study_dir) / str(srow.json)
    try:
        full = json.loads(path.read_text())
    except FileNotFoundError:
        raise DataError(source, f"{where}.json", f"per-rollout JSON not found: {path}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(path, None, f"not a readable JSON file: {exc}") from None
    return StudyRollout(where, srow, RolloutRecord.from_dict(full, path))


def load_clip(
    rollout: dict | StudyRollout,
    study_dir: str | Path,
    variant: str = "main",
    *,
    source: str | Path | None = None,
    field_prefix: str = "",
    settings: DrawSettings | None = None,
) -> Clip:
    """One rollout's saved poses and assets, checked against the contract.

    Args:
        rollout: a row of the study JSON ``source`` (:func:`study_rollout`); ``poses`` relative to ``study_dir``.
        variant: ``"main"`` or ``"ablation"`` (the contact-ablation re-run).
        field_prefix: e.g. ``"rollouts[3]."``, so errors name the field.
        settings: default the study's at ``source`` (:meth:`DrawSettings.read`).

    Raises:
        DataError: no saved poses, a malformed npz, a missing hand MJCF or mesh, an unknown outcome.
    """
    study_dir = Path(study_dir)
    where = Path(source) if source is not None else study_dir
    entry = study_rollout(rollout, study_dir, source=where, where=field_prefix.rstrip(".") or "rollouts")
    rec = entry.record
    if variant == "ablation":
        if rec.ablation is None:
            raise DataError(where, field_prefix + "ablation", "rollout has no contact-ablation run")
        run, pre = rec.ablation, field_prefix + "ablation."
    elif variant == "main":
        run, pre = rec, field_prefix
    else:
        raise ValueError(f"variant must be 'main' or 'ablation', got {variant!r}")
    if not run.poses:
        raise DataError(
            where,
            pre + "poses",
            "rollout has no saved poses; rerun the study with pose saving on (the renderer never re-simulates)",
        )
    poses_path = study_dir / str(run.poses)
    if not poses_path.is_file():
        raise DataError(where, pre + "poses", f"saved poses file not found: {poses_path}")
    if run.outcome not in OUTCOMES:
        raise DataError(where, pre + "outcome", f"expected one of {OUTCOMES}, got {run.outcome!r}")
    track, contact, phase = load_poses_npz(poses_path, truncate_nonfinite=(run.outcome == UNSTABLE))

    hand_mjcf = _resolve(rec.hand_mjcf, study_dir, where, field_prefix + "hand_mjcf", "hand MJCF")
    mesh = _resolve(rec.object_visual_mesh, study_dir, where, field_prefix + "object_visual_mesh", "object visual mesh")
    settings = settings or DrawSettings.read(source)
    support = parse_support(rec, where, field_prefix, thickness=settings.support_thickness)
    name = str(rec.object or "object")
    track.index("object")
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
        support=support,
        outcome=run.outcome,
        title=name if variant == "main" else f"{name} (contact ablation)",
        row=entry.row,
        shake_max_slip=positive(settings.lift.shake_max_slip, where, "config.lift.shake_max_slip"),
    )


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
