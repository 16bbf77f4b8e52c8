"""Headless videos of what the study simulated: per-clip H.264, montage tiling.

Renderer choice (hidden behind :func:`render_clip` / :func:`render_frames`):
MuJoCo's own offscreen ``mujoco.Renderer`` on an EGL context (``MUJOCO_GL=egl``),
which on a machine without GPU or display runs on Mesa llvmpipe. It was chosen
over Newton's ``ViewerGL(headless=True)`` because it needs no window system and
is several times faster on CPU, and because we only *draw saved poses*: no
Newton model or solver is needed. Measured on the 2-core dev machine (Mesa 22.3.6
llvmpipe, shared with other jobs), a GRAB mug rollout of 189 frames: 12-25 ms per
640x480 frame for scene update + GL render + readback + overlay (shadows,
reflections and MSAA off), 20-45 ms including model build and H.264 encoding;
7-10 ms per 320x240 frame. Newton's ViewerGL headless: 100-130 ms per frame. Only one GL context is alive at a time here (each
clip's renderer is closed before the next is made). ``MUJOCO_GL`` is read by
MuJoCo at import time, so this module sets it to ``egl`` unless the caller has
set it (``osmesa`` also works where libOSMesa is installed; it is not on the
dev machine).

What is drawn (never re-simulated): a render-only MuJoCo model built with
``MjSpec`` that has one mocap body per saved body:

* the hand: every *visible* geom (groups 0-2) of the manosim MJCF that was
  simulated (capsule hand: mesh palm + capsule finger bones; mesh hand: bone
  meshes), in the body frames of that MJCF, skin coloured;
* each object: its visual mesh only (never the convex collision hulls, which
  would z-fight with it), in the object frame used by the saved poses;
* the support as simulated (:class:`Support`): for GRAB the finite table-top box
  (``table_top_xy`` extent, ``support_thickness`` below ``support_height``, wood
  coloured) over a checkered floor well below it (z = 0, GRAB's ground, or 0.5 m
  under a lower support), so an object that falls off the table edge is seen
  falling; without a table (HUG-Bench) an infinite checkered plane at
  ``support_height``. Rollout and recorded renders draw it the same way;
* a fixed camera framing hand and object while they interact (:func:`frame_camera`).

Saved poses come from the study (contract, one ``.npz`` per rollout):
``time`` (F,) s, ``body_names`` (B,) str, ``body_pos`` (F, B, 3) world m Z-up,
``body_quat`` (F, B, 4) world **xyzw** (Newton order; converted to MuJoCo's wxyz
here), ``contact_count`` (F,) int, ``phase`` (F,) int (0 settle, 1 approach,
2 lift, 3 hold, 4 shake).

Output: H.264 mp4, yuv420p, through ``imageio_ffmpeg.write_frames``, written to a
temporary name in the destination folder and renamed when complete.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time as _time
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from replay.errors import DataError, OutputError, UsageError  # noqa: E402
from replay.fileio import atomic_write_text, sha256_file  # noqa: E402

#: phase codes in the saved ``phase`` array (study contract).
PHASE_NAMES = {0: "settle", 1: "approach", 2: "lift", 3: "hold", 4: "shake", 5: "recorded"}
#: outcomes a rollout may report (lift protocol; ``tracked`` / ``lost``: recorded protocol).
OUTCOMES = ("lifted", "dropped", "unstable", "tracked", "lost")
#: RGB (0-255) of each outcome's label.
OUTCOME_RGB = {"lifted": (90, 210, 120), "dropped": (240, 90, 80), "unstable": (245, 175, 40),
               "tracked": (90, 210, 120), "lost": (240, 90, 80)}

#: hand colour (light skin tone), RGBA 0-1.
SKIN_RGBA = (0.89, 0.71, 0.60, 1.0)
#: object colours, RGBA 0-1: the first is the grasped object, the others scene clutter.
OBJECT_RGBA = (
    (0.22, 0.45, 0.85, 1.0),
    (0.55, 0.75, 0.45, 1.0),
    (0.80, 0.55, 0.80, 1.0),
    (0.90, 0.80, 0.35, 1.0),
    (0.45, 0.75, 0.80, 1.0),
    (0.75, 0.50, 0.40, 1.0),
)
#: geom groups MuJoCo shows by default; groups >= 3 are collision-only by convention.
VISIBLE_GROUPS = (0, 1, 2)
#: vertical field of view of the render camera, degrees (MuJoCo's default).
FOVY_DEG = 45.0
#: table-top colour (walnut), RGBA 0-1: red-brown with green/red 0.66, so it is never
#: mistaken for the skin tone (green/red 0.80) in pixel tests.
TABLE_RGBA = (0.50, 0.33, 0.22, 1.0)
#: table-top box thickness, m, when neither the rollout nor its study says: the default
#: of ``replay.config.ReplayConfig.support_thickness`` (what the study simulates).
DEFAULT_SUPPORT_THICKNESS = 0.05
#: the floor under a table top: at z = 0 (GRAB's world ground; its tables are 0.75-1.2 m
#: high), or this far below a support lower than that, m.
FLOOR_DROP_M = 0.5
#: a study clip's camera frames the hand from where it comes this close to the object's
#: bounding sphere, m (0.25 m framed GRAB tiles about 1 m away; 0.15 m brings them ~13 %
#: closer while the hand still enters the view during the approach).
CLIP_REACH_M = 0.15
#: object positions more than this far below the support are "fallen off" and not
#: framed by the camera, m.
FALLEN_BELOW_M = 0.05


# --------------------------------------------------------------------------- data


@dataclass
class PoseTrack:
    """World poses of named rigid bodies over time (what gets drawn).

    Attributes:
        time: (F,) s, strictly increasing.
        body_names: B names, matching the render model's mocap bodies
            (``mano_body_0..15`` for the hand, object names for objects).
        body_pos: (F, B, 3) world position of each body frame, m, Z up.
        body_quat: (F, B, 4) world orientation, **xyzw**.
        source: file the poses came from (for error messages).
    """

    time: np.ndarray
    body_names: list[str]
    body_pos: np.ndarray
    body_quat: np.ndarray
    source: Path | None = None

    @property
    def num_frames(self) -> int:
        return int(self.time.shape[0])

    def index(self, name: str) -> int:
        try:
            return self.body_names.index(name)
        except ValueError:
            raise DataError(self.source, "body_names", f"no body named {name!r} in the saved poses") from None


@dataclass(frozen=True)
class Support:
    """What the object rests on, as the study simulated it (``replay.scene.build_model``).

    Attributes:
        height: z of the top surface, m (world, Z up).
        table_top_xy: ``(xmin, ymin, xmax, ymax)`` world extent of a table-top box, m,
            or None for an infinite ground plane at ``height``.
        thickness: box thickness below ``height``, m (study config ``support_thickness``).
    """

    height: float
    table_top_xy: tuple[float, float, float, float] | None = None
    thickness: float = DEFAULT_SUPPORT_THICKNESS

    @property
    def floor_z(self) -> float | None:
        """z of the floor drawn under a table top (see :data:`FLOOR_DROP_M`), None for a plane."""
        if self.table_top_xy is None:
            return None
        return min(0.0, self.height - FLOOR_DROP_M)


def parse_support(rollout: dict, where: Path | None, field_prefix: str = "",
                  thickness: float | None = None) -> Support:
    """The :class:`Support` of a rollout entry: ``support_height`` (m) and ``support``,
    either ``"plane"`` or ``{"table_top_xy": [xmin, ymin, xmax, ymax]}`` (written by
    ``replay.rollout`` from ``replay.scene.support_extent``). A missing ``support`` (studies
    older than the table-top box) is a plane.

    Raises:
        DataError: non-numeric height or thickness, malformed or empty table extent.
    """
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
        raise DataError(where, field_prefix + "support",
                        f"expected \"plane\" or {{\"table_top_xy\": [xmin, ymin, xmax, ymax]}} with min < max, got {sup!r}")
    return Support(height, ext, th)


@lru_cache(maxsize=16)
def _study_thickness(path: str) -> float | None:
    """``config.support_thickness`` of a study JSON, or None when it has none."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    cfg = doc.get("config") if isinstance(doc, dict) else None
    return cfg.get("support_thickness") if isinstance(cfg, dict) else None


@dataclass
class SceneObject:
    """An object to draw: its body name in the :class:`PoseTrack`, visual mesh, colour.

    Attributes:
        body: body name in the pose track (``"object"`` in study rollouts).
        label: human-readable name (for the overlay).
        mesh: visual surface mesh file (STL/OBJ/PLY, anything trimesh reads), in the
            object frame, metres.
        rgba: colour, 0-1.
    """

    body: str
    label: str
    mesh: Path
    rgba: tuple[float, float, float, float] = OBJECT_RGBA[0]


@dataclass
class Clip:
    """One study rollout, loaded and checked, ready to render.

    Attributes:
        track: saved body poses (hand bodies + ``object``).
        contact_count: (F,) hand-object contacts per frame.
        phase: (F,) phase code per frame (see :data:`PHASE_NAMES`).
        hand_mjcf: the manosim MJCF that was simulated.
        objects: what to draw besides the hand (one object for a study rollout).
        support_height: z of the support's top surface, m (``support.height``).
        outcome: ``lifted`` / ``dropped`` / ``unstable``.
        title: first overlay line (object name, and the variant when it is the ablation).
        meta: the rollout JSON entry (for provenance).
        support: the simulated support (table-top box or plane), see :class:`Support`.
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

    def __post_init__(self):
        if self.support is None:
            self.support = Support(float(self.support_height))


@dataclass
class RenderStats:
    """What a render produced: ``frames`` written, ``size`` (W, H) px, wall time ``seconds``,
    ``ms_per_frame`` (GL render + readback + overlay, excluding encoding) and, for a
    montage, ``left_out`` rollouts beyond its clip limit and ``skipped`` (True when an
    up-to-date montage was kept, see :func:`render_montage`)."""

    path: Path
    frames: int
    size: tuple[int, int]
    seconds: float
    ms_per_frame: float
    left_out: int = 0
    skipped: bool = False


def load_study(study_path: str | Path) -> tuple[dict, Path]:
    """Read a study JSON.

    Returns:
        (study dict, folder of the JSON file: the base of relative ``poses`` paths).

    Raises:
        DataError: file missing, not JSON, or without a ``rollouts`` list.
    """
    path = Path(study_path)
    if not path.is_file():
        raise DataError(path, None, "study JSON not found; run scripts/run_study.py first")
    try:
        study = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(path, None, f"not a readable JSON file: {exc}") from None
    if not isinstance(study, dict) or not isinstance(study.get("rollouts"), list):
        raise DataError(path, "rollouts", "study JSON has no 'rollouts' list")
    return study, path.parent.resolve()


def _resolve(path_str, base: Path, where: Path | None, fld: str, what: str) -> Path:
    """Resolve a path from a rollout entry: absolute, else relative to ``base``, else to
    the current folder (study JSONs written with cwd-relative data paths)."""
    if not path_str:
        raise DataError(where, fld, f"missing ({what})")
    p = Path(str(path_str)).expanduser()
    candidates = [p] if p.is_absolute() else [base / p, Path.cwd() / p]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    raise DataError(where, fld, f"{what} not found: {path_str} (looked in {', '.join(str(c) for c in candidates)})")


def expand_rollout(rollout: dict, study_dir: str | Path, source: str | Path | None = None,
                   field_prefix: str = "") -> dict:
    """The full rollout entry: a study JSON's ``rollouts`` item may be a summary that
    points to its per-rollout JSON with ``"json"`` (relative to the study folder); its
    fields are merged over the summary's. Entries that already hold ``poses`` are
    returned as they are.

    Raises:
        DataError: the per-rollout JSON named by ``json`` is missing or unreadable.
    """
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
    return {**rollout, **full}


def load_clip(
    rollout: dict,
    study_dir: str | Path,
    variant: str = "main",
    source: str | Path | None = None,
    field_prefix: str = "",
    support_thickness: float | None = None,
) -> Clip:
    """Load one rollout's saved poses and assets and check them against the contract.

    Args:
        rollout: one entry of the study JSON's ``rollouts`` (or a per-rollout JSON).
        study_dir: folder of the study JSON; ``poses`` is relative to it.
        variant: ``"main"`` or ``"ablation"`` (the contact-ablation re-run stored under
            ``rollout["ablation"]``, which has its own ``poses`` and ``outcome``).
        source: the JSON file, for error messages.
        field_prefix: e.g. ``"rollouts[3]."`` so errors name the exact field.
        support_thickness: table-top box thickness, m; default: the rollout's
            ``support_thickness``, else ``config.support_thickness`` of the JSON file
            ``source``, else :data:`DEFAULT_SUPPORT_THICKNESS`.

    Raises:
        DataError: no saved poses (``poses`` missing or file absent), malformed npz
            (missing key, wrong shape, non-finite, non-increasing time), missing
            hand MJCF or object visual mesh, unknown outcome.
    """
    study_dir = Path(study_dir)
    where = Path(source) if source is not None else study_dir
    rollout = expand_rollout(rollout, study_dir, where, field_prefix)
    entry = rollout
    pre = field_prefix
    if variant == "ablation":
        abl = rollout.get("ablation")
        if not isinstance(abl, dict):
            raise DataError(where, pre + "ablation", "rollout has no contact-ablation run")
        entry = {**rollout, **abl}
        pre = pre + "ablation."
    elif variant != "main":
        raise ValueError(f"variant must be 'main' or 'ablation', got {variant!r}")

    if not entry.get("poses"):
        raise DataError(
            where, pre + "poses",
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
    th = support_thickness
    if th is None:
        th = rollout.get("support_thickness")
    if th is None and source is not None and Path(source).is_file():
        th = _study_thickness(str(Path(source).resolve()))
    support = parse_support(rollout, where, field_prefix, th)
    name = str(rollout.get("object") or "object")
    track.index("object")
    title = name if variant == "main" else f"{name} (contact ablation)"
    objects = [SceneObject("object", name, mesh)]
    track, ghost = add_recorded_ghost(track, poses_path, mesh, name)
    if ghost is not None:
        objects.append(ghost)
    return Clip(
        track=track, contact_count=contact, phase=phase, hand_mjcf=hand_mjcf,
        objects=objects, support_height=support.height,
        outcome=outcome, title=title, meta=rollout, support=support,
    )


# --------------------------------------------------------------------------- recorded-object ghost

#: colour of the recorded object drawn beside the simulated one (recorded protocol): the
#: grasped object's blue, translucent (alpha 0.3) so the simulated object stays readable.
GHOST_RGBA = (0.22, 0.45, 0.85, 0.3)
#: body name of the ghost in the pose track and the render model.
GHOST_BODY = "recorded_object"


def add_recorded_ghost(track: PoseTrack, poses_path: Path, mesh: Path,
                       name: str) -> tuple[PoseTrack, SceneObject | None]:
    """The recorded object pose as an extra body of ``track`` and its translucent object.

    Reads ``recorded_object_pos`` (F, 3) world m and ``recorded_object_quat`` (F, 4) xyzw
    from the rollout's npz (written by the recorded protocol, :mod:`replay.tracking`);
    a lift rollout has neither: ``(track, None)``. The track may have been cut short
    (unstable rollout): the first ``len(track.time)`` frames are used.

    Raises:
        DataError: the arrays exist but have the wrong shape or non-finite values.
    """
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
    ghost_track = PoseTrack(time=track.time, body_names=[*track.body_names, GHOST_BODY],
                            body_pos=np.concatenate([track.body_pos, rpos[:F, None]], axis=1),
                            body_quat=np.concatenate([track.body_quat, rquat[:, None]], axis=1),
                            source=track.source)
    return ghost_track, SceneObject(GHOST_BODY, f"{name} (recorded)", mesh, GHOST_RGBA)


def load_poses_npz(path: str | Path, truncate_nonfinite: bool = False) -> tuple[PoseTrack, np.ndarray, np.ndarray]:
    """Read and check one rollout's saved poses (study contract).

    Args:
        path: the ``.npz``.
        truncate_nonfinite: cut the clip before the first frame with a non-finite or
            non-unit pose instead of raising (for ``unstable`` rollouts, whose last
            frames may have blown up).

    Returns:
        (PoseTrack, contact_count (F,) int, phase (F,) int).

    Raises:
        DataError: naming the npz and the key for any missing or malformed array, or
            no usable frame.
    """
    path = Path(path)
    try:
        z = np.load(path, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is a data error
        raise DataError(path, None, f"cannot read saved poses: {exc}") from None
    with z:
        need = ("time", "body_names", "body_pos", "body_quat", "contact_count", "phase")
        for k in need:
            if k not in z.files:
                raise DataError(path, k, f"missing from saved poses (has {sorted(z.files)})")
        t = np.asarray(z["time"], dtype=np.float64)
        names = [str(n) for n in z["body_names"]]
        pos = np.asarray(z["body_pos"], dtype=np.float64)
        quat = np.asarray(z["body_quat"], dtype=np.float64)
        contact = np.asarray(z["contact_count"])
        phase = np.asarray(z["phase"])
    if t.ndim != 1:
        raise DataError(path, "time", f"expected shape (F,), got {t.shape}")
    F, B = t.shape[0], len(names)
    for key, arr, shape in (
        ("body_pos", pos, (F, B, 3)), ("body_quat", quat, (F, B, 4)),
        ("contact_count", contact, (F,)), ("phase", phase, (F,)),
    ):
        if arr.shape != shape:
            raise DataError(path, key, f"expected shape {shape}, got {arr.shape}")
    good = (np.all(np.isfinite(pos.reshape(F, -1)), axis=1) & np.all(np.isfinite(quat.reshape(F, -1)), axis=1)
            & np.isfinite(t))
    with np.errstate(invalid="ignore"):
        good &= np.all(np.abs(np.linalg.norm(quat, axis=-1) - 1.0) <= 1e-3, axis=1)
    if not good.all():
        bad = int(np.flatnonzero(~good)[0])
        if not truncate_nonfinite:
            raise DataError(path, "body_pos/body_quat", f"non-finite or non-unit pose at frame {bad}")
        F = bad
        t, pos, quat, contact, phase = t[:F], pos[:F], quat[:F], contact[:F], phase[:F]
    if F < 1:
        raise DataError(path, "time", "no frames saved (or none with a finite pose)")
    if F > 1 and not np.all(np.diff(t) > 0):
        raise DataError(path, "time", "timestamps are not strictly increasing")
    track = PoseTrack(time=t, body_names=names, body_pos=pos, body_quat=quat, source=path)
    return track, contact.astype(np.int64), phase.astype(np.int64)


# --------------------------------------------------------------------------- model


@dataclass
class _HandGeom:
    body: str
    type: int
    size: np.ndarray
    pos: np.ndarray
    quat: np.ndarray  # wxyz, in the body frame
    mesh: tuple[np.ndarray, np.ndarray] | None  # (V,3) verts, (T,3) faces in the geom frame


@lru_cache(maxsize=8)
def _hand_visual(mjcf: str) -> tuple[tuple[str, ...], tuple[_HandGeom, ...]]:
    """Visible geoms of a hand MJCF, in their body frames, from the compiled model.

    Reading the compiled model (rather than the XML) resolves default classes,
    ``fromto`` capsules and mesh re-centering exactly as MuJoCo (and Newton's
    importer, which follows the same MJCF semantics) did for the simulation.
    """
    try:
        m = mujoco.MjModel.from_xml_path(mjcf)
    except Exception as exc:  # noqa: BLE001
        raise DataError(mjcf, None, f"MuJoCo cannot load the hand MJCF: {exc}") from None
    bodies = tuple(m.body(i).name for i in range(1, m.nbody))
    geoms = []
    for g in range(m.ngeom):
        if int(m.geom_group[g]) not in VISIBLE_GROUPS or m.geom_rgba[g, 3] == 0:
            continue
        body = m.body(int(m.geom_bodyid[g])).name
        if not body:  # world geoms (none in manosim) are not part of the hand
            continue
        mesh = None
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            k = int(m.geom_dataid[g])
            va, vn = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
            fa, fn = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
            mesh = (m.mesh_vert[va:va + vn].astype(np.float64).copy(), m.mesh_face[fa:fa + fn].copy())
        geoms.append(_HandGeom(body, int(m.geom_type[g]), m.geom_size[g].copy(), m.geom_pos[g].copy(),
                               m.geom_quat[g].copy(), mesh))
    return bodies, tuple(geoms)


@lru_cache(maxsize=64)
def _load_mesh(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V, 3) m and triangles (T, 3) of a visual mesh file (trimesh)."""
    import trimesh

    p = Path(path)
    if not p.is_file():
        raise DataError(p, None, "object visual mesh not found")
    try:
        mesh = trimesh.load(p, force="mesh", process=False)
    except Exception as exc:  # noqa: BLE001
        raise DataError(p, None, f"cannot read the mesh: {exc}") from None
    v = np.asarray(mesh.vertices, dtype=np.float64)
    f = np.asarray(mesh.faces, dtype=np.int32)
    if v.shape[0] < 4 or f.shape[0] < 1 or not np.all(np.isfinite(v)):
        raise DataError(p, None, f"mesh is empty or non-finite ({v.shape[0]} vertices, {f.shape[0]} faces)")
    return v, f


def build_render_model(
    hand_mjcf: str | Path | None,
    objects: Sequence[SceneObject],
    support_height: float | Support | None,
    size: tuple[int, int],
) -> mujoco.MjModel:
    """A render-only MuJoCo model: one mocap body per drawn body, no joints, no contacts.

    Args:
        hand_mjcf: the simulated manosim MJCF (its visible geoms are copied, skin
            coloured), or None to draw no hand.
        objects: objects to draw; each becomes a mocap body named ``obj.body``.
        support_height: a :class:`Support` (table-top box ``support`` + floor
            ``floor``, or plane ``support``), a float (z of a support plane, m), or None
            for none.
        size: (width, height) px of the offscreen buffer.

    Returns:
        The compiled model. Mocap ids follow body order: hand bodies first (MJCF order),
        then ``objects``; use :func:`mocap_index` to map names.

    Raises:
        DataError: unreadable hand MJCF or object mesh.
    """
    spec = mujoco.MjSpec()
    spec.modelname = "replay_render"
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    w, h = int(size[0]), int(size[1])
    spec.visual.global_.offwidth = max(w, 64)
    spec.visual.global_.offheight = max(h, 64)
    spec.visual.global_.fovy = FOVY_DEG
    spec.visual.quality.offsamples = 0  # MSAA costs ~2x on llvmpipe
    spec.visual.quality.shadowsize = 0
    spec.visual.map.znear = 0.005
    spec.visual.map.zfar = 60.0
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.55, 0.55, 0.55]
    spec.visual.headlight.specular = [0.1, 0.1, 0.1]
    spec.stat.extent = 1.0
    spec.stat.center = [0.0, 0.0, 0.0]

    world = spec.worldbody
    world.add_light(name="key", type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, dir=[0.3, 0.4, -1.0], diffuse=[0.45, 0.45, 0.45],
                    specular=[0.15, 0.15, 0.15], castshadow=False)
    spec.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, rgb1=[0.78, 0.84, 0.92],
                     rgb2=[0.35, 0.38, 0.45], width=64, height=64)
    if support_height is not None:
        sup = support_height if isinstance(support_height, Support) else Support(float(support_height))
        spec.add_texture(name="grid", type=mujoco.mjtTexture.mjTEXTURE_2D,
                         builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.62, 0.60, 0.57],
                         rgb2=[0.52, 0.50, 0.47], width=64, height=64)
        mat = spec.add_material(name="grid", texrepeat=[20, 20], reflectance=0.0)
        mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
        if sup.table_top_xy is None:
            world.add_geom(name="support", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[2.0, 2.0, 0.05],
                           pos=[0, 0, float(sup.height)], material="grid", contype=0, conaffinity=0)
        else:  # the box replay.scene.build_model simulates, over a floor
            x0, y0, x1, y1 = sup.table_top_xy
            hz = 0.5 * float(sup.thickness)
            world.add_geom(name="support", type=mujoco.mjtGeom.mjGEOM_BOX,
                           size=[0.5 * (x1 - x0), 0.5 * (y1 - y0), hz],
                           pos=[0.5 * (x0 + x1), 0.5 * (y0 + y1), float(sup.height) - hz],
                           rgba=list(TABLE_RGBA), contype=0, conaffinity=0)
            world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[3.0, 3.0, 0.05],
                           pos=[0.5 * (x0 + x1), 0.5 * (y0 + y1), float(sup.floor_z)], material="grid",
                           contype=0, conaffinity=0)

    if hand_mjcf is not None:
        hand_path = Path(hand_mjcf)
        if not hand_path.is_file():
            raise DataError(hand_path, None, "hand MJCF not found")
        bodies, geoms = _hand_visual(str(hand_path.resolve()))
        body_specs = {}
        for b in bodies:
            body_specs[b] = world.add_body(name=b, mocap=True, mass=1e-3, inertia=[1e-6, 1e-6, 1e-6])
        for i, g in enumerate(geoms):
            kw = dict(type=mujoco.mjtGeom(g.type), size=g.size.tolist(), pos=g.pos.tolist(), quat=g.quat.tolist(),
                      rgba=list(SKIN_RGBA), contype=0, conaffinity=0, group=0)
            if g.mesh is not None:
                mname = f"hand_mesh_{i}"
                spec.add_mesh(name=mname, uservert=g.mesh[0].ravel().tolist(), userface=g.mesh[1].ravel().tolist(),
                              inertia=mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL)
                kw["meshname"] = mname
            body_specs[g.body].add_geom(**kw)

    for j, obj in enumerate(objects):
        v, f = _load_mesh(str(Path(obj.mesh).resolve()) if Path(obj.mesh).exists() else str(obj.mesh))
        mname = f"obj_mesh_{j}"
        spec.add_mesh(name=mname, uservert=v.ravel().tolist(), userface=f.ravel().tolist(),
                      inertia=mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL)
        b = world.add_body(name=obj.body, mocap=True, mass=1e-3, inertia=[1e-6, 1e-6, 1e-6])
        b.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=mname, rgba=list(obj.rgba), contype=0,
                   conaffinity=0, group=0)
    try:
        return spec.compile()
    except Exception as exc:  # noqa: BLE001
        raise DataError(hand_mjcf, None, f"could not build the render model: {exc}") from None


def mocap_index(model: mujoco.MjModel, track: PoseTrack) -> tuple[np.ndarray, np.ndarray]:
    """Map render-model mocap bodies to pose-track columns.

    Returns:
        (mocap ids (K,), track columns (K,)) for every mocap body of the model.

    Raises:
        DataError: a drawn body has no saved pose.
    """
    mids, cols = [], []
    for b in range(1, model.nbody):
        mid = int(model.body_mocapid[b])
        if mid < 0:
            continue
        mids.append(mid)
        cols.append(track.index(model.body(b).name))
    return np.asarray(mids, dtype=np.int64), np.asarray(cols, dtype=np.int64)


def apply_poses(model: mujoco.MjModel, data: mujoco.MjData, track: PoseTrack, frame: int,
                mids: np.ndarray, cols: np.ndarray) -> None:
    """Put the render model's mocap bodies at ``track``'s poses of ``frame`` and run
    MuJoCo kinematics (``data.geom_xpos``/``geom_xmat`` then hold world geom poses).
    Converts the track's xyzw quaternions to MuJoCo's wxyz."""
    data.mocap_pos[mids] = track.body_pos[frame, cols]
    data.mocap_quat[mids] = track.body_quat[frame, cols][:, [3, 0, 1, 2]]
    mujoco.mj_kinematics(model, data)


# --------------------------------------------------------------------------- camera


@dataclass
class CameraView:
    """A fixed free camera: ``lookat`` (3,) m, ``distance`` m, ``azimuth``/``elevation`` deg
    (MuJoCo ``mjvCamera`` conventions: azimuth about +Z from +X, elevation < 0 looks down)."""

    lookat: np.ndarray
    distance: float
    azimuth: float
    elevation: float

    def mjv(self) -> mujoco.MjvCamera:
        cam = mujoco.MjvCamera()
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = self.lookat
        cam.distance = self.distance
        cam.azimuth = self.azimuth
        cam.elevation = self.elevation
        return cam


def frame_camera(
    track: PoseTrack,
    hand_bodies: Sequence[str],
    objects: Sequence[SceneObject],
    aspect: float,
    elevation: float = -25.0,
    frames: slice | np.ndarray | None = None,
    reach: float | None = 0.25,
    fallen_below: float | None = None,
) -> CameraView:
    """A fixed camera that keeps hand and objects in view while they interact.

    Frames considered: ``frames`` (a slice, or an (F,) bool mask) if given, else all;
    with ``reach`` set, only those from the first one where some hand body origin
    comes within ``reach`` m of an object's bounding sphere (a long approach from
    afar would otherwise shrink the grasp to a few pixels; the hand then enters the
    view during the approach). With ``fallen_below`` (z, m) an object's positions from
    the first frame its origin is below that z are ignored (an object that fell off
    the table would otherwise shrink the view to fit the floor). The look-at point
    is the centre of the axis-aligned bounding box of those frames' hand body origins
    (padded 3 cm, roughly a finger length past the last bone origin) and every
    object's mesh bounding sphere. The azimuth is perpendicular to the horizontal
    line from the objects to the wrist, so hand and object sit side by side rather
    than one hiding the other, turned 30 degrees towards the wrist side. The distance
    fits the bounding sphere in the smaller of the vertical and horizontal fields of
    view (``aspect`` = width / height), with a 10 % margin.
    """
    F = track.num_frames
    hand_cols = [track.body_names.index(b) for b in hand_bodies if b in track.body_names]
    use = np.zeros(F, bool)
    if frames is None:
        use[:] = True
    elif isinstance(frames, slice):
        use[frames] = True
    else:
        use[np.asarray(frames, bool)] = True
    if not use.any():
        use[:] = True
    keep_obj = {}
    radii = {}
    for obj in objects:
        v, _ = _load_mesh(str(obj.mesh))
        radii[obj.body] = float(np.max(np.linalg.norm(v, axis=1)))
        ok = np.ones(F, bool)
        if fallen_below is not None:
            low = track.body_pos[:, track.index(obj.body), 2] < fallen_below
            if low.any():
                ok[int(np.argmax(low)):] = False
        keep_obj[obj.body] = ok
    if reach is not None and hand_cols and objects:
        near = np.zeros(F, bool)
        for obj in objects:
            p = track.body_pos[:, track.index(obj.body)]
            d = np.linalg.norm(track.body_pos[:, hand_cols] - p[:, None], axis=-1).min(axis=1)
            near |= (d < radii[obj.body] + reach) & keep_obj[obj.body]
        near &= use
        if near.any():
            use[:int(np.argmax(near))] = False
    pts = []
    if hand_cols:
        hp = track.body_pos[use][:, hand_cols].reshape(-1, 3)
        pts += [hp - 0.03, hp + 0.03]
    obj_centres = []
    for obj in objects:
        m = use & keep_obj[obj.body]
        if not m.any():  # fell before the framed frames: frame where it was last seen above
            m = keep_obj[obj.body] if keep_obj[obj.body].any() else np.ones(F, bool)
        p = track.body_pos[m][:, track.index(obj.body)]
        r = radii[obj.body]
        pts += [p - r, p + r]
        obj_centres.append(p.mean(axis=0))
    pts = np.concatenate(pts, axis=0)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    centre = 0.5 * (lo + hi)
    radius = max(0.5 * float(np.linalg.norm(hi - lo)), 0.05)
    azimuth = 90.0
    if hand_cols and obj_centres:
        wrist = track.body_pos[use][:, hand_cols[0]].mean(axis=0)
        d = wrist - np.mean(obj_centres, axis=0)
        if np.hypot(d[0], d[1]) > 1e-3:
            azimuth = math.degrees(math.atan2(d[1], d[0])) + 90.0 - 30.0
    fov_v = math.radians(FOVY_DEG)
    fov_h = 2.0 * math.atan(math.tan(fov_v / 2) * aspect)
    half = min(fov_v, fov_h) / 2.0
    distance = 1.1 * radius / math.sin(half)
    return CameraView(centre, distance, azimuth, elevation)


def clip_camera(clip: Clip, aspect: float) -> CameraView:
    """The camera of a study clip: :func:`frame_camera` over the approach and lift
    phases (phase 1-2; all frames if the clip has none) from where the hand is within
    :data:`CLIP_REACH_M` of the object, ignoring object positions
    once the object is :data:`FALLEN_BELOW_M` below the support (fell off the table)."""
    hand = [n for n in clip.track.body_names if n.startswith("mano_body_")]
    phases = np.isin(clip.phase, (1, 2))
    return frame_camera(clip.track, hand, clip.objects, aspect, frames=phases if phases.any() else None,
                        reach=CLIP_REACH_M, fallen_below=clip.support.height - FALLEN_BELOW_M)


# --------------------------------------------------------------------------- overlay


@lru_cache(maxsize=16)
def _font(px: int):
    from PIL import ImageFont
    import matplotlib

    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans-Bold.ttf"
    try:
        return ImageFont.truetype(str(ttf), px)
    except OSError:
        return ImageFont.load_default()


def draw_overlay(img: np.ndarray, lines: Sequence[tuple[str, tuple[int, int, int]]]) -> np.ndarray:
    """Draw text lines in a translucent box at the top-left of an RGB frame.

    Args:
        img: (H, W, 3) uint8 frame (modified copy returned).
        lines: (text, rgb 0-255) per line.

    Returns:
        (H, W, 3) uint8 frame with the overlay.
    """
    from PIL import Image, ImageDraw

    h, w = img.shape[:2]
    px = max(10, int(round(h / 24)))
    font = _font(px)
    pad, gap = max(3, px // 3), max(1, px // 5)
    widths = [font.getlength(t) for t, _ in lines]
    box_w = min(w, int(max(widths, default=0)) + 2 * pad + 1)
    box_h = min(h, len(lines) * (px + gap) + 2 * pad - gap + 1)
    out = np.array(img, dtype=np.uint8, copy=True)
    # darken only the box (alpha 140/255 black), then draw the text on that crop
    box = out[:box_h, :box_w].astype(np.uint16) * (255 - 140) // 255
    crop = Image.fromarray(box.astype(np.uint8))
    d = ImageDraw.Draw(crop)
    y = pad
    for text, rgb in lines:
        d.text((pad, y), text, font=font, fill=tuple(int(c) for c in rgb))
        y += px + gap
    out[:box_h, :box_w] = np.asarray(crop)
    return out


def clip_overlay(clip: Clip) -> Callable[[int], list[tuple[str, tuple[int, int, int]]]]:
    """Per-frame overlay lines for a study clip: title; the phase name (settle /
    approach) before the lift, then ``result: <outcome>`` in the outcome's colour from
    the lift phase on (phase >= 2; the outcome is only decided there); during the shake
    test, whether the object stayed in hand (``shake_held``); contact count and phase;
    time since the clip's first frame."""
    white, grey = (245, 245, 245), (200, 200, 200)
    oc = OUTCOME_RGB.get(clip.outcome, white)
    shake_held = (clip.meta or {}).get("shake_held")

    def lines(i: int):
        t = clip.track.time[i] - clip.track.time[0]
        code = int(clip.phase[i])
        ph = PHASE_NAMES.get(code, str(code))
        status = (f"result: {clip.outcome}", oc) if code >= 2 else (f"{ph}...", grey)
        out = [(clip.title, white), status]
        if code == 4 and shake_held is not None:  # the shake test after a successful hold
            out.append(("shake: held" if shake_held else "shake: dropped",
                        OUTCOME_RGB["lifted" if shake_held else "dropped"]))
        return out + [
            (f"contacts {int(clip.contact_count[i])}  {ph}", white),
            (f"t = {t:5.2f} s", white),
        ]

    return lines


# --------------------------------------------------------------------------- rendering


def frame_indices(time: np.ndarray, fps: float) -> np.ndarray:
    """Indices of the saved frames nearest to a uniform ``fps`` timeline over ``time``.

    For poses saved at exactly ``fps`` this is ``arange(F)``.
    """
    if time.shape[0] == 1:
        return np.zeros(1, dtype=np.int64)
    n = int(round((time[-1] - time[0]) * fps)) + 1
    ts = time[0] + np.arange(n) / fps
    idx = np.searchsorted(time, ts).clip(1, time.shape[0] - 1)
    left = time[idx - 1]
    pick_left = (ts - left) <= (time[idx] - ts)
    return np.where(pick_left, idx - 1, idx).astype(np.int64)


def _check_gl() -> None:
    """Make sure ``mujoco.Renderer`` will get a headless (EGL/OSMesa) GL context.

    MuJoCo picks its GL backend from ``MUJOCO_GL`` when it is first imported. This
    module sets ``MUJOCO_GL=egl`` on import, but if ``mujoco`` was imported earlier
    without it (e.g. by Newton or a test helper) the backend is GLFW, which needs a
    display. Without a display, switch MuJoCo's context class to EGL (the same class
    ``MUJOCO_GL=egl`` would have chosen); raise if that cannot be done.

    Raises:
        RuntimeError: no display and no usable headless backend.
    """
    from mujoco.rendering.classic import gl_context as glc

    cur = getattr(glc, "GLContext", None)
    if cur is not None and cur.__module__.startswith(("mujoco.egl", "mujoco.osmesa")):
        return
    if os.environ.get("DISPLAY") and cur is not None:
        return  # a desktop session: GLFW works
    try:
        from mujoco.egl import GLContext as EGLContext
    except Exception as exc:  # noqa: BLE001
        raise RuntimeError(
            "no display and MuJoCo was imported without MUJOCO_GL=egl; EGL could not be loaded "
            f"({exc}). Export MUJOCO_GL=egl (or osmesa) before starting Python."
        ) from None
    glc.GLContext = EGLContext


def render_frames(
    track: PoseTrack,
    hand_mjcf: str | Path | None,
    objects: Sequence[SceneObject],
    support_height: float | Support | None,
    size: tuple[int, int] = (640, 480),
    fps: float = 30.0,
    overlay: Callable[[int], list[tuple[str, tuple[int, int, int]]]] | None = None,
    camera: CameraView | None = None,
    timing: dict | None = None,
    decorate: Callable[[int, mujoco.MjvScene], None] | None = None,
) -> Iterator[np.ndarray]:
    """Yield RGB frames of saved poses, resampled to ``fps`` (nearest saved frame).

    Args:
        track: body poses; must contain every hand body of ``hand_mjcf`` and every
            ``objects[i].body``.
        hand_mjcf, objects, support_height, size: see :func:`build_render_model`.
        fps: output frame rate, Hz.
        overlay: maps a *saved* frame index to overlay lines, or None.
        camera: fixed view, default :func:`frame_camera` over the whole track.
        timing: if given, ``timing["render_s"]`` accumulates seconds spent rendering
            (scene update + GL + readback + overlay) and ``timing["frames"]`` the count.
        decorate: called as ``decorate(saved_frame_index, scene)`` after the scene is
            updated, to add ``mjvGeom`` s (e.g. a landmark skeleton).

    Yields:
        (H, W, 3) uint8 frames, ``len(frame_indices(track.time, fps))`` of them.

    Raises:
        DataError: see :func:`build_render_model` and :func:`mocap_index`.
        RuntimeError: no headless GL backend configured.
    """
    _check_gl()
    w, h = int(size[0]), int(size[1])
    model = build_render_model(hand_mjcf, objects, support_height, (w, h))
    mids, cols = mocap_index(model, track)
    hand_bodies = [model.body(b).name for b in range(1, model.nbody)
                   if model.body(b).name not in {o.body for o in objects}]
    cam = (camera or frame_camera(track, hand_bodies, objects, w / h)).mjv()
    data = mujoco.MjData(model)
    opt = mujoco.MjvOption()
    idx = frame_indices(track.time, fps)
    renderer = mujoco.Renderer(model, height=h, width=w)
    try:
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SKYBOX] = True
        for i in idx:
            t0 = _time.perf_counter()
            apply_poses(model, data, track, int(i), mids, cols)
            renderer.update_scene(data, camera=cam, scene_option=opt)
            if decorate is not None:
                decorate(int(i), renderer.scene)
            img = renderer.render()
            if overlay is not None:
                img = draw_overlay(img, overlay(int(i)))
            if timing is not None:
                timing["render_s"] = timing.get("render_s", 0.0) + _time.perf_counter() - t0
                timing["frames"] = timing.get("frames", 0) + 1
            yield img
    finally:
        renderer.close()


def prepare_output(out_path: str | Path) -> Path:
    """Check that ``out_path`` can be written (creating its folder) before any rendering.

    Raises:
        OutputError: the folder cannot be created or written (an ancestor is a file,
            or no permission), or the path is a folder.
    """
    out = Path(out_path)
    if out.suffix.lower() != ".mp4":
        raise OutputError(f"{out}: output must be an .mp4 file")
    if out.is_dir():
        raise OutputError(f"{out}: output path is a folder")
    for parent in out.absolute().parents:  # the first existing ancestor must be a folder
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(f"{out}: cannot write there: {parent} is a file, not a folder")
            break
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.stem}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise OutputError(f"{out}: cannot write to {out.parent}: {exc.strerror or exc}") from None
    return out


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_mp4(frames: Iterable[np.ndarray], out_path: str | Path, fps: float = 30.0) -> int:
    """Encode RGB frames as H.264 (libx264, yuv420p) mp4, atomically.

    Frames go to a temporary file in the destination folder, renamed over
    ``out_path`` only when encoding finished; on any error the temporary file is
    removed and ``out_path`` is untouched. The file gets the permissions a plain
    ``open()`` would give (``0o666 & ~umask``), not ``mkstemp``'s 0600.

    Args:
        frames: (H, W, 3) uint8 frames, all the same size; W and H even (yuv420p).
        out_path: destination ``.mp4``.
        fps: frame rate, Hz.

    Returns:
        Number of frames written.

    Raises:
        OutputError: unwritable destination, or no frames.
        ValueError: frames of odd or changing size.
    """
    import imageio_ffmpeg

    out = prepare_output(out_path)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.stem}.", suffix=".tmp.mp4")
    os.close(fd)
    n, writer, shape = 0, None, None
    try:
        for img in frames:
            if writer is None:
                shape = img.shape
                if img.ndim != 3 or img.shape[2] != 3 or img.shape[0] % 2 or img.shape[1] % 2:
                    raise ValueError(f"frames must be (H, W, 3) with even H and W for yuv420p, got {img.shape}")
                writer = imageio_ffmpeg.write_frames(
                    tmp, (img.shape[1], img.shape[0]), fps=fps, codec="libx264", pix_fmt_in="rgb24",
                    pix_fmt_out="yuv420p", quality=None, macro_block_size=1,
                    output_params=["-crf", "20", "-preset", "veryfast", "-movflags", "+faststart"],
                    ffmpeg_log_level="error",
                )
                writer.send(None)
            elif img.shape != shape:
                raise ValueError(f"frame {n} has shape {img.shape}, expected {shape}")
            writer.send(np.ascontiguousarray(img, dtype=np.uint8))
            n += 1
        if writer is None:
            raise OutputError(f"{out}: no frames to write")
        writer.close()
        writer = None
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it 0600; a plain open() would not
        os.replace(tmp, out)
        return n
    finally:
        if writer is not None:
            writer.close()
        if os.path.exists(tmp):
            os.unlink(tmp)


def render_clip(
    rollout: dict,
    study_dir: str | Path,
    out_path: str | Path,
    size: tuple[int, int] = (640, 480),
    fps: float = 30.0,
    label: str | None = None,
    variant: str = "main",
    source: str | Path | None = None,
) -> RenderStats:
    """Render one study rollout's saved poses to an H.264 mp4 with an overlay.

    Overlay per frame (:func:`clip_overlay`): object name (or ``label``); the phase
    name before the lift, then ``result: lifted`` / ``dropped`` / ``unstable``
    (coloured); hand-object contact count and phase; time since the clip's first
    frame. Camera: :func:`clip_camera`. Support: the simulated table-top box over a
    floor, or a plane (:class:`Support`; thickness from the study config at
    ``source``).

    Args:
        rollout: one entry of ``study.json["rollouts"]`` (or a per-rollout JSON).
        study_dir: folder of the study JSON (base of the relative ``poses`` path).
        out_path: destination ``.mp4`` (folder created if needed).
        size: (width, height) px, both even.
        fps: output frame rate, Hz (saved poses are at 30 fps in the study contract).
        label: replaces the first overlay line (default: object name).
        variant: ``"main"`` or ``"ablation"`` (the contact-ablation re-run).
        source: study JSON path, for error messages.

    Returns:
        :class:`RenderStats` (frames, size, seconds, ms per frame).

    Raises:
        DataError: no saved poses, malformed poses, missing hand MJCF or object mesh.
        OutputError: ``out_path`` cannot be written (checked before rendering).
    """
    out = prepare_output(out_path)
    clip = load_clip(rollout, study_dir, variant=variant, source=source)
    if label:
        clip.title = label
    timing: dict = {}
    t0 = _time.perf_counter()
    frames = render_frames(clip.track, clip.hand_mjcf, clip.objects, clip.support, size, fps,
                           overlay=clip_overlay(clip), camera=clip_camera(clip, size[0] / size[1]), timing=timing)
    n = write_mp4(frames, out, fps)
    secs = _time.perf_counter() - t0
    return RenderStats(out, n, (int(size[0]), int(size[1])), secs, 1000.0 * timing.get("render_s", 0.0) / max(n, 1))


# --------------------------------------------------------------------------- montage

#: largest montage canvas chosen automatically, (W, H) px (1080p).
MONTAGE_MAX_CANVAS = (1920, 1080)
#: default cap on clips in one montage (a GRAB study has 30; more tiles than this get
#: too small to read).
MONTAGE_MAX_CLIPS = 30


def montage_layout(n: int, cols: int | None = None, tile: tuple[int, int] | None = None) -> tuple[int, int, tuple[int, int]]:
    """Grid and tile size for ``n`` clips.

    Default columns: 3 up to 6 clips (the 3 x 2 of the seed montage), else
    ``round(sqrt(4 n / 3))`` (a roughly 16:9 grid of 4:3 tiles). Default tile: the
    largest even 4:3 tile, at most 640 x 480, that fits the grid in
    :data:`MONTAGE_MAX_CANVAS` (30 clips: 6 x 5 tiles of 288 x 216).

    Returns:
        (cols, rows, (tile_w, tile_h)).
    """
    if n < 1:
        raise ValueError("montage needs at least one clip")
    if cols is None:
        cols = min(n, 3) if n <= 6 else int(round(math.sqrt(4.0 / 3.0 * n)))
    cols = max(1, min(int(cols), n))
    rows = int(math.ceil(n / cols))
    if tile is None:
        tw = min(640, MONTAGE_MAX_CANVAS[0] // cols)
        th = min(480, MONTAGE_MAX_CANVAS[1] // rows)
        tw = min(tw, int(th * 4 / 3))
        th = int(tw * 3 / 4)
        tile = (tw - tw % 2, th - th % 2)
    if tile[0] < 16 or tile[1] < 16 or tile[0] % 2 or tile[1] % 2:
        raise ValueError(f"tile size must be even and >= 16 px, got {tile}")
    return cols, rows, (int(tile[0]), int(tile[1]))


def select_rollouts(study: dict, objects: Sequence[str] | None, source: Path,
                    key: str = "rollouts") -> list[tuple[int, dict]]:
    """Rollouts to show, in study order, optionally only those of ``objects``.

    ``key``: the study's list to take them from: ``rollouts`` (lift protocol) or
    ``recorded_rollouts`` (recorded protocol, drawn with the recorded-object ghost).

    Raises:
        UsageError: an object asked for is not in the study.
        DataError: the study is empty.
    """
    rolls = list(enumerate(study.get(key) or []))
    base = Path(source).parent
    rolls = [(i, expand_rollout(r, base, source, f"{key}[{i}].")) for i, r in rolls]
    if objects:
        have = {str(r.get("object")) for _, r in rolls}
        missing = [o for o in objects if o not in have]
        if missing:
            raise UsageError("--objects", f"no rollout for object(s) {missing} in {source}; it has {sorted(have)}")
        rolls = [(i, r) for i, r in rolls if str(r.get("object")) in set(objects)]
    if not rolls:
        raise DataError(source, key, "study has no rollouts to render")
    return rolls


def montage_record_path(out_path: str | Path) -> Path:
    """The JSON written beside a montage (``montage.mp4`` -> ``montage.mp4.json``): what it
    shows (study, rollouts, variant, layout) and the key of its inputs."""
    out = Path(out_path)
    return out.with_name(out.name + ".json")


def _montage_key(chosen: list[tuple[int, dict]], study_dir: Path, study_path: Path, variants: Sequence[str],
                 params: dict) -> str:
    """SHA-256 over everything a montage is drawn from: each shown rollout's per-rollout
    JSON and saved poses (by content), the render settings, and this module's source
    (a change to the renderer re-renders). A resumed study that rewrote only its summary
    (wall time) leaves the key unchanged."""
    import hashlib

    h = hashlib.sha256()
    h.update(json.dumps(params, sort_keys=True).encode())
    h.update(sha256_file(Path(__file__)).encode())
    for i, r in chosen:
        full = expand_rollout(r, study_dir, study_path, f"rollouts[{i}].")
        h.update(json.dumps(full, sort_keys=True, default=str).encode())
        for v in variants:
            entry = full.get("ablation") if v == "ablation" else full
            poses = entry.get("poses") if isinstance(entry, dict) else None
            p = Path(study_dir) / str(poses) if poses else None
            h.update((sha256_file(p) if p is not None and p.is_file() else f"missing:{poses}").encode())
    return h.hexdigest()


def render_montage(
    study_path: str | Path,
    out_path: str | Path,
    cols: int | None = None,
    objects: Sequence[str] | None = None,
    tile: tuple[int, int] | None = None,
    fps: float = 30.0,
    variant: str = "main",
    max_clips: int = MONTAGE_MAX_CLIPS,
    progress: bool = False,
    force: bool = False,
    protocol: str = "lift",
) -> RenderStats:
    """Tile the study's clips, each with its overlay, into one H.264 mp4.

    Every clip is rendered at tile size from its saved poses (see :func:`render_clip`
    for the overlay), one GL context at a time, into a temporary frame store; the grid
    is then composed frame by frame. Clips shorter than the longest hold their last
    frame. All rollouts are checked (saved poses, meshes) before any rendering.

    Args:
        study_path: the study JSON.
        out_path: destination ``.mp4``.
        cols: grid columns (default see :func:`montage_layout`).
        objects: only these objects' rollouts, in study order (default all).
        tile: (W, H) px per clip (default see :func:`montage_layout`).
        fps: frame rate, Hz.
        variant: ``"main"``, ``"ablation"`` (the contact-ablation re-runs) or ``"both"``
            (each rollout beside its ablation, pairs kept on one row).
        max_clips: at most this many tiles: the first rollouts in study order are shown,
            the rest left out with a warning (counted in ``RenderStats.left_out``).
        progress: print one line per clip.
        protocol: ``lift`` (the study's ``rollouts``) or ``recorded`` (its
            ``recorded_rollouts``, each with the recorded object as a translucent ghost).
        force: render even when the montage is up to date. Otherwise, when ``out_path``
            exists and its record (:func:`montage_record_path`) holds the same input key
            (:func:`_montage_key`: same rollouts, poses, settings and renderer), it is kept
            and nothing is rendered (``RenderStats.skipped``).

    Returns:
        :class:`RenderStats` of the montage (``ms_per_frame`` = mean per-tile render time).

    Raises:
        DataError: bad study JSON, a rollout without saved poses or assets, unknown object.
        OutputError: ``out_path`` cannot be written.
        ValueError: unknown ``variant``.
    """
    t_start = _time.perf_counter()
    out = prepare_output(out_path)
    study_path = Path(study_path)
    study, study_dir = load_study(study_path)
    if variant not in ("main", "ablation", "both"):
        raise ValueError(f"variant must be 'main', 'ablation' or 'both', got {variant!r}")
    chosen = select_rollouts(study, objects, study_path, "rollouts" if protocol == "lift" else f"{protocol}_rollouts")
    if variant in ("ablation", "both"):
        chosen = [(i, r) for i, r in chosen if isinstance(r.get("ablation"), dict)]
        if not chosen:
            raise DataError(study_path, "rollouts[].ablation", "no rollout has a contact-ablation run")
    variants = ("main", "ablation") if variant == "both" else (variant,)
    cfg = study.get("config") if isinstance(study.get("config"), dict) else {}
    thickness = cfg.get("support_thickness")
    left_out = 0
    keep = max(1, max_clips // len(variants))
    if len(chosen) > keep:  # show the first ones; say so loudly rather than fail a finished study
        left_out = len(chosen) - keep
        warnings.warn(
            f"montage shows the first {keep} of {len(chosen)} rollouts (max_clips={max_clips}); "
            "pass objects=... or raise max_clips for the rest", stacklevel=2,
        )
        chosen = chosen[:keep]
    params = {"cols": cols, "tile": list(tile) if tile else None, "fps": fps, "variant": variant,
              "max_clips": max_clips, "objects": list(objects) if objects else None}
    key = _montage_key(chosen, study_dir, study_path, variants, params)
    record_path = montage_record_path(out)
    if not force and out.is_file() and record_path.is_file():
        try:
            rec = json.loads(record_path.read_text())
        except (OSError, json.JSONDecodeError):
            rec = {}
        if rec.get("key") == key:
            return RenderStats(out, int(rec.get("frames", 0)), tuple(rec.get("size", (0, 0))),
                               _time.perf_counter() - t_start, 0.0, left_out=left_out, skipped=True)
    if variant == "both" and cols is None:  # keep each pair on one row
        cols = 2 * max(1, min(len(chosen), 1 if len(chosen) == 1 else round(math.sqrt(2.0 * len(chosen) / 3.0))))
    clips: list[Clip | str] = []
    for i, r in chosen:
        for v in variants:
            try:
                clips.append(load_clip(r, study_dir, variant=v, source=study_path, field_prefix=f"rollouts[{i}].",
                                       support_thickness=thickness))
            except DataError as exc:
                # an unstable rollout may have no finite frame to show: a labelled placeholder
                # tile, not a failed montage; any other bad input is an error
                oc = (r.get("ablation") or {}).get("outcome") if v == "ablation" else r.get("outcome")
                if oc == "unstable" and "no frames" in str(exc):
                    clips.append(f"{r.get('object', f'rollout {i}')}" + (" (contact ablation)" if v == "ablation" else ""))
                    continue
                raise
    for c in clips:  # fail on a bad mesh before spending minutes rendering
        for o in (c.objects if isinstance(c, Clip) else []):
            _load_mesh(str(o.mesh))
    cols, rows, (tw, th) = montage_layout(len(clips), cols, tile)
    timing: dict = {}
    with tempfile.TemporaryDirectory(prefix="montage_") as tmp:
        stores = []
        for k, clip in enumerate(clips):
            if isinstance(clip, str):
                blank = np.full((1, th, tw, 3), 40, dtype=np.uint8)
                blank[0] = draw_overlay(blank[0], [(clip, (245, 245, 245)), ("result: unstable", OUTCOME_RGB["unstable"]),
                                                   ("no frames saved", (245, 245, 245))])
                stores.append(blank)
                if progress:
                    print(f"[{k + 1}/{len(clips)}] {clip}: unstable, no frames saved (placeholder tile)", flush=True)
                continue
            n = len(frame_indices(clip.track.time, fps))
            store = np.lib.format.open_memmap(Path(tmp) / f"{k}.npy", mode="w+", dtype=np.uint8, shape=(n, th, tw, 3))
            for j, img in enumerate(render_frames(clip.track, clip.hand_mjcf, clip.objects, clip.support,
                                                  (tw, th), fps, overlay=clip_overlay(clip),
                                                  camera=clip_camera(clip, tw / th), timing=timing)):
                store[j] = img
            store.flush()
            stores.append(store)
            if progress:
                print(f"[{k + 1}/{len(clips)}] {clip.title}: {n} frames, {clip.outcome}", flush=True)
        n_out = max(s.shape[0] for s in stores)
        W, H = cols * tw, rows * th

        def compose():
            canvas = np.full((H, W, 3), 24, dtype=np.uint8)
            for f in range(n_out):
                for k, s in enumerate(stores):
                    r, c = divmod(k, cols)
                    canvas[r * th:(r + 1) * th, c * tw:(c + 1) * tw] = s[min(f, s.shape[0] - 1)]
                yield canvas

        n = write_mp4(compose(), out, fps)
        del stores
    secs = _time.perf_counter() - t_start
    atomic_write_text(record_path, json.dumps({
        "montage": out.name, "study": str(study_path.resolve()), "key": key, "frames": n, "size": [W, H],
        "tile": [tw, th], "grid": [cols, rows], "variant": variant,
        "rollouts": [str(r.get("sequence") or r.get("object") or i) for i, r in chosen], "left_out": left_out,
        "render_s": secs,
    }, indent=1) + "\n")
    return RenderStats(out, n, (W, H), secs, 1000.0 * timing.get("render_s", 0.0) / max(timing.get("frames", 1), 1),
                       left_out=left_out)
