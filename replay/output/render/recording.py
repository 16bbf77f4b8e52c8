"""A recording drawn as the data has it, no simulation: the manosim hand posed by forward kinematics (or the
recorded landmarks / MANO vertices) and every object, around ``grasp_frame`` (docs/architecture.md, rendering)."""

from __future__ import annotations

import logging
from pathlib import Path

import mujoco
import numpy as np

from replay.data.locate import dataset_dir
from replay.data.support import support_extent
from replay.data.types import Recording
from replay.errors import DataError
from replay.kinematics.coords import complete_hand
from replay.output.render.camera import FALLEN_BELOW_M, frame_camera
from replay.output.render.clip import PoseTrack, SceneObject, Support
from replay.output.render.hand_points import VERTEX_STRIDE, points_decorator, skeleton_decorator
from replay.output.render.style import OBJECT_RGBA
from replay.output.render.video import RenderStats, prepare_output, render_mp4
from replay.protocol.protocols.base import protocol_named
from replay.results.records import StudyRecord
from replay.results.study_rows import StudyRow

log = logging.getLogger(__name__)

#: window around ``grasp_frame``, s (before, after): tracked objects; untracked ones (HUG-Bench, never move)
WINDOW_TRACKED_S = (2.0, 3.0)
WINDOW_UNTRACKED_S = (4.0, 0.5)
#: the camera frames hand and objects from this long before the grasp to the window's end, s
CAMERA_LEAD_S = 0.5


def scene_window(rec: Recording, before_s: float | None = None, after_s: float | None = None) -> slice:
    """Frames ``[grasp - before_s, grasp + after_s]`` (s; default :data:`WINDOW_TRACKED_S` or
    :data:`WINDOW_UNTRACKED_S`) clipped to the recording."""
    tracked = rec.target_object.tracked
    b, a = WINDOW_TRACKED_S if tracked else WINDOW_UNTRACKED_S
    b = b if before_s is None else before_s
    a = a if after_s is None else after_s
    t = rec.time
    tg = t[rec.grasp_frame]
    eps = 1e-6  # s; tolerate float rounding of frame times (arange / fps)
    start = int(np.searchsorted(t, tg - b - eps, side="left"))
    stop = int(np.searchsorted(t, tg + a + eps, side="right"))
    return slice(max(start, 0), max(min(stop, rec.num_frames), start + 1))


def hand_body_poses(
    mjcf: str | Path, wrist_pos: np.ndarray, wrist_quat: np.ndarray, *, finger_quat: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """World poses of every body of a manosim hand by ``mj_kinematics``: (body names, (T, B, 3) m, (T, B, 4) xyzw).

    ``wrist_pos`` (T, 3) m and ``wrist_quat`` (T, 4) xyzw of ``mano_body_0``; ``finger_quat`` (T, 15, 4) xyzw
    ``mano_joint_1..15`` relative to the MJCF reference pose. Raises DataError: not a manosim MJCF.
    """
    m = mujoco.MjModel.from_xml_path(str(mjcf))
    d = mujoco.MjData(m)

    def adr(name):
        j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
        if j < 0:
            raise DataError(mjcf, None, f"no joint {name!r}: not a manosim hand MJCF")
        return int(m.jnt_qposadr[j])

    slide = [adr(f"wrist_t{a}") for a in "xyz"]
    root = adr("wrist_rot")
    fingers = [adr(f"mano_joint_{i}") for i in range(1, 16)]
    names = [m.body(b).name for b in range(1, m.nbody)]
    T = wrist_pos.shape[0]
    pos = np.zeros((T, len(names), 3))
    quat = np.zeros((T, len(names), 4))
    wq = np.asarray(wrist_quat, float)[:, [3, 0, 1, 2]]
    fq = np.asarray(finger_quat, float)[..., [3, 0, 1, 2]]
    for f in range(T):
        d.qpos[:] = m.qpos0
        d.qpos[slide] = wrist_pos[f]
        d.qpos[root : root + 4] = wq[f]
        for k, a in enumerate(fingers):
            d.qpos[a : a + 4] = fq[f, k]
        mujoco.mj_kinematics(m, d)
        pos[f] = d.xpos[1:]
        quat[f] = d.xquat[1:][:, [1, 2, 3, 0]]
    return names, pos, quat


def _fill_invalid(arr: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Each invalid frame replaced by the nearest earlier valid one (the first valid one before it)."""
    if valid.all():
        return arr
    if not valid.any():
        raise ValueError("no valid frame")
    idx = np.where(valid, np.arange(len(valid)), -1)
    idx = np.maximum.accumulate(idx)
    idx[idx < 0] = int(np.flatnonzero(valid)[0])
    return arr[idx]


def recording_scene(
    rec: Recording,
    window: slice,
    hand: str = "auto",
    *,
    hand_mjcf: str | Path | None = None,
) -> tuple[PoseTrack, list[SceneObject], str | None, np.ndarray | None, str]:
    """(track, objects, hand MJCF or None, hand points or None, hand source text) of a recording's ``window``.

    ``hand``: ``"auto"`` (the manosim hand, fitted by :func:`replay.kinematics.coords.complete_hand` if needed,
    else with a warning the recorded points), ``"mano"`` (the manosim hand or an error), ``"landmarks"`` (the
    recorded points). Hand points: (W, 21, 3) landmarks or (W, K, 3) MANO vertices (every :data:`VERTEX_STRIDE`-th),
    m. ``hand_mjcf`` default: the ``myhand`` capsule hand of the recording's side. Raises DataError: no hand to draw.
    """
    sl = window
    valid = np.asarray(rec.valid[sl], bool)
    if not valid.any():
        raise DataError(rec.source, "valid", f"hand not tracked in any frame of {sl.start}..{sl.stop}")
    names: list[str] = []
    pos_parts, quat_parts = [], []
    points = None
    mjcf, source, fallback = None, "", ""
    if hand in ("auto", "mano"):
        mjcf, source, fallback, posed = _manosim_hand(rec, sl, valid, hand, hand_mjcf)
        if posed is not None:
            names, hp, hq = posed
            pos_parts.append(hp)
            quat_parts.append(hq)
    if mjcf is None:
        points, source = _hand_points(rec, sl, valid, fallback)
    W = sl.stop - sl.start
    objects = _scene_objects(rec)
    for j, ob in enumerate(rec.objects):
        names.append(objects[j].body)
        pos_parts.append(np.asarray(ob.pos[sl], float)[:, None])
        quat_parts.append(np.asarray(ob.quat[sl], float)[:, None])
    if points is not None:  # hand points frame the camera as pseudo-bodies (not drawn as bodies)
        K = points.shape[1]
        names += [f"handpoint_{k}" for k in range(K)]
        pos_parts.append(points)
        quat_parts.append(np.tile([0.0, 0.0, 0.0, 1.0], (W, K, 1)))
    track = PoseTrack(
        time=np.asarray(rec.time[sl], float),
        body_names=names,
        body_pos=np.concatenate(pos_parts, axis=1),
        body_quat=np.concatenate(quat_parts, axis=1),
        source=rec.source,
    )
    return track, objects, (str(mjcf) if mjcf is not None else None), points, source


def _manosim_hand(rec: Recording, sl: slice, valid: np.ndarray, hand: str, hand_mjcf):
    """(MJCF or None, hand source text, why it was not fitted or "", :func:`hand_body_poses` or None) over the
    window, invalid frames held. Raises DataError: ``hand="mano"`` and no fit (``"auto"`` logs a warning)."""
    r = rec
    fallback = ""
    if r.finger_quat is None or r.wrist_pos is None or r.wrist_quat is None:
        try:
            r = complete_hand(rec, mjcf_path=hand_mjcf, window=(sl.start, sl.stop))
        except DataError as exc:
            if hand == "mano":
                raise
            fallback = f"manosim hand not fitted: {exc}"
            log.warning("%s; drawing the recorded hand points instead", fallback)
    if r.finger_quat is None or r.wrist_pos is None or r.wrist_quat is None:
        return None, "", fallback, None
    mjcf = Path(hand_mjcf) if hand_mjcf is not None else _default_hand(rec.hand_side)
    wp = _fill_invalid(np.asarray(r.wrist_pos[sl], float), valid)
    wq = _fill_invalid(np.asarray(r.wrist_quat[sl], float), valid)
    fq = _fill_invalid(np.asarray(r.finger_quat[sl], float), valid)
    kin = r.meta.get("kinematics", {}) if isinstance(r.meta, dict) else {}
    return (
        mjcf,
        f"manosim hand ({kin.get('source', 'recorded joints')})",
        fallback,
        hand_body_poses(mjcf, wp, wq, finger_quat=fq),
    )


def _hand_points(rec: Recording, sl: slice, valid: np.ndarray, fallback: str) -> tuple[np.ndarray, str]:
    """(hand points (W, 21, 3) landmarks or (W, K, 3) MANO vertices, world m; their source). Raises DataError."""
    verts = rec.mano.vertices if rec.mano is not None else None
    if rec.landmarks is not None:
        return _fill_invalid(np.asarray(rec.landmarks[sl], float), valid), "recorded landmarks"
    if verts is not None:
        return _fill_invalid(np.asarray(verts[sl], float)[:, ::VERTEX_STRIDE], valid), "recorded MANO vertices"
    why = f" ({fallback})" if fallback else ""
    raise DataError(rec.source, "landmarks", f"no hand to draw: no joint rotations, landmarks or MANO vertices{why}")


def _scene_objects(rec: Recording) -> list[SceneObject]:
    """Every object of the recording as ``object_<j>``: the target in the first colour, the rest in palette order."""
    objects = []
    others = 0
    for j, ob in enumerate(rec.objects):
        if j == rec.target:
            rgba = OBJECT_RGBA[0]
        else:
            rgba = OBJECT_RGBA[1 + others % (len(OBJECT_RGBA) - 1)]
            others += 1
        objects.append(SceneObject(f"object_{j}", ob.name, Path(ob.asset.visual_mesh), rgba))
    return objects


def recording_support(rec: Recording, thickness: float | None = None) -> Support:
    """The support a study would simulate for ``rec``: a table's :func:`replay.data.support.support_extent` box
    (``thickness`` m, default the study's) at ``rec.support_height``, else a plane. Raises DataError: bad mesh."""
    table = rec.meta.get("table") if isinstance(rec.meta, dict) else None
    extent = None
    if table is not None and getattr(table.get("asset"), "visual_mesh", None) is not None:
        extent = support_extent(rec)
    if thickness is None:
        return Support(float(rec.support_height), extent)
    return Support(float(rec.support_height), extent, float(thickness))


def _default_hand(side: str) -> Path:
    side_dir = "mano_rhand" if side == "right" else "mano_lhand"
    p = dataset_dir("manosim") / "assets" / "myhand" / side_dir / "capsule_hand.xml"
    if not p.is_file():
        raise DataError(p, None, "default manosim hand MJCF not found; pass hand_mjcf")
    return p


def render_recording(
    rec: Recording,
    out_path: str | Path,
    size: tuple[int, int] = (640, 480),
    *,
    fps: float = 30.0,
    window: slice | None = None,
    hand: str = "auto",
    hand_mjcf: str | Path | None = None,
) -> RenderStats:
    """A recording's own motion around its grasp as an H.264 mp4 (``size`` px, ``fps``; each output frame the
    nearest recorded one), objects at their recorded poses, the support as :func:`recording_support`.

    ``window`` default :func:`scene_window`; ``hand``, ``hand_mjcf``: :func:`recording_scene`. Raises DataError:
    bad fields, missing meshes; OutputError: unwritable output.
    """
    out = prepare_output(out_path)
    sl = window if window is not None else scene_window(rec)
    track, objects, mjcf, points, source = recording_scene(rec, sl, hand, hand_mjcf=hand_mjcf)
    support = recording_support(rec)
    target = rec.target_object.name
    white, grey = (245, 245, 245), (200, 200, 200)

    def overlay(i: int):
        t = track.time[i] - rec.time[rec.grasp_frame]
        return [
            (f"{rec.dataset}: {rec.name}", white),
            ("recorded motion (not simulated)", grey),
            (f"target {target}  |  {source}", white),
            (f"t = {t:+5.2f} s from grasp", white),
        ]

    camera = _recording_camera(rec, track, objects, support, size[0] / size[1])
    decorate = None
    if points is not None:
        decorate = skeleton_decorator(points) if points.shape[1] == 21 else points_decorator(points)
    return render_mp4(
        out,
        track,
        mjcf,
        objects=objects,
        support=support,
        size=size,
        fps=fps,
        overlay=overlay,
        camera=camera,
        decorate=decorate,
    )


def _recording_camera(rec: Recording, track: PoseTrack, objects: list[SceneObject], support: Support, aspect: float):
    """The fixed camera of a recording's video, framed from :data:`CAMERA_LEAD_S` before the grasp to the end."""
    hand_bodies = [n for n in track.body_names if n.startswith(("mano_body_", "handpoint_"))]
    cam_objects = list(objects)
    if rec.target_object.tracked:  # GRAB/TACO: the grasped object; HUG scene: every object
        cam_objects = [cam_objects[rec.target]]
    k0 = int(np.searchsorted(track.time, rec.time[rec.grasp_frame] - CAMERA_LEAD_S))
    return frame_camera(
        track,
        hand_bodies,
        cam_objects,
        aspect=aspect,
        frames=slice(min(k0, track.num_frames - 1), None),
        fallen_below=support.height - FALLEN_BELOW_M,
    )


def find_rollout(study: StudyRecord, dataset: str, sequence: str, *, protocol: str = "lift") -> tuple[int, dict] | None:
    """(index, row) of (dataset, sequence) in the study's rows of ``protocol`` (a row's own ``dataset`` over the
    study's), or None."""
    for i, r in enumerate(study.rows_of(protocol_named(protocol).rows_field)):
        row = StudyRow.from_dict(r)
        if str(row.extra.get("dataset", study.dataset)) == dataset and str(row.sequence) == sequence:
            return i, r
    return None
