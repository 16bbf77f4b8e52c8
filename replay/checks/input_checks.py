"""Input checks: a recording that cannot be replayed honestly is an input error, never a physics outcome.

:func:`check_recording` runs after a dataset adapter (``replay.data.load_recording``
calls it) and before any kinematics or simulation. Each check either raises a one-line
:class:`~replay.errors.DataError` (file, field, what is wrong, what to do) or repairs
the recording and records a named flag in ``recording.meta["input_flags"]`` (the study
writes it into the rollout JSON as ``input_flags``; the validators report it). The
figures each check measured are in ``recording.meta["input_checks"]``.

Classes of fault, thresholds and their sources (all measured on the data mirror: the
30 GRAB s1 lifts, 83,160 frames at 120 Hz, and the 2 TACO sequences at 30 fps):

1. **Untracked frames** (:func:`untracked_frames`): a frame whose hand points (21
   landmarks, else the MANO vertices) sit at the world origin (wrist within
   :data:`ORIGIN_TOL_M` = 1 mm of it), have collapsed to one point (all within
   :data:`COLLAPSED_EXTENT_M` = 1 cm; on the mirror the 21 landmarks span at least 83 mm
   in every frame, the MANO vertices at least 132 mm), repeat the
   previous frame exactly (a frozen tracker: no real capture repeats 63 coordinates to the
   last bit; 0 repeats in the mirror's 83,160 GRAB and 281 TACO frames), or, for MANO data,
   whose pose and translation parameters are all exactly 0 (a dropout stored as zeros,
   posed by the kinematics as a flat hand at the origin). Such frames are
   marked False in ``Recording.valid`` (the IK and the replay interpolate over them) and
   counted in the flag ``untracked_frames``.
2. **Too few frames, too sparse, too fast before the grasp** (:func:`check_timing`), over
   the frames the study replays (:data:`CHECK_WINDOW_S` = 2 s before the lift onset, the
   default ``ReplayConfig.approach_window_s``): at least :data:`MIN_TRACKED_BEFORE_GRASP_S`
   = 0.5 s of tracked hand before the lift onset (measured: 1.44-2.71 s on GRAB,
   0.87-1.07 s on TACO) and :data:`MIN_TRACKED_FRAMES_BEFORE_GRASP` = 8 tracked frames;
   no gap between tracked frames longer than :data:`MAX_TRACKING_GAP_S` = 0.5 s (the
   replay bridges a gap with a straight line, which is fair for the transport of a reach,
   whose paths are near-straight (Morasso, Exp. Brain Res. 1981), but a reach-to-grasp lasts
   ~0.6-1 s and its hand closure the last ~third of it (Jeannerod, J. Motor Behavior 1984):
   a longer gap can hide the whole closure. Measured: no gap on GRAB (every frame at
   120 Hz tracked) or TACO (30 Hz); the synthetic HUG-Bench test scene has a 0.4 s
   dropout, replayed); wrist speed between consecutive tracked frames at most
   :data:`MAX_HAND_SPEED_M_S` = 5 m/s (measured peak: 2.05 m/s in the 2 s before a GRAB
   lift onset, 2.31 m/s anywhere; 0.98 m/s TACO; reach-to-grasp peaks are ~1-1.5 m/s,
   Jeannerod, J. Motor Behavior 1984).
3. **Handedness** (:func:`palm_chirality`): the sign of the triple product
   ``((index_mcp - wrist) x (pinky_mcp - wrist)) . (thumb_cmc - wrist)`` (unit vectors):
   these four MANO joints move rigidly with the palm, so the sign is the hand's side in
   every frame (+0.303 in all 83,160 GRAB right-hand frames; a mirrored hand gives -0.303).
   Checked where the adapter *assumes* the side (:data:`ASSUMED_SIDE_DATASETS`: GRAB stores
   no side); TACO's side is checked by the MANO fingertip fit
   (:func:`replay.kinematics.complete_hand`), HUG-Bench names it per hand in the file. A
   confident mismatch (median ``|chirality|`` >= :data:`CHIRALITY_MIN` = 0.1 and the same
   sign in >= 95 % of the tracked frames) replays the recording with the matching manosim
   hand and says so in the flag ``hand_side_from_landmarks``; an undecided sign is an error.
4. **Object scale and mass** (:func:`check_object`): the visual mesh's largest bounding-box
   extent within :data:`OBJECT_EXTENT_RANGE_M` = 5 mm-1.5 m (measured 40-222 mm on GRAB,
   179-184 mm on TACO; a mesh in millimetres is 1000x too large, one in metres read as
   millimetres 1000x too small) and the simulated mass within :data:`OBJECT_MASS_RANGE_KG` =
   1 g-23 kg (measured 29 g-2.16 kg; 23 kg is the load constant of the revised NIOSH lifting
   equation, Waters et al., Ergonomics 1993, the most a person should lift with both hands).
   Outside: a unit error, with the unit that would fit ("millimetres?").
5. **Object vs support and recording** (:func:`check_object`): at the first frame the
   object's lowest collision point within :data:`REST_GAP_MAX_M` = 5 cm of the support (measured
   -4.5..+2.7 mm on GRAB; TACO's support is defined by the object, ~0), and at the lift
   onset the recorded hand within :data:`HAND_GAP_MAX_M` = 5 cm of the object's surface
   (measured 0.0-5.0 mm): farther, the mesh is in another frame or unit than the poses.
6. **Which hand moves the object** (:func:`check_object`, :func:`carry_drift`): when the
   recorded hand is farther than :data:`HAND_GAP_MAX_M` from the object at the lift onset
   and the object does not move with it (over :data:`CARRY_WINDOW_S` its origin drifts in
   the recorded palm frame by more than :data:`CARRY_DRIFT_MAX` times its travel), the
   object was moved by a hand the recording does not store (GRAB files hold the right
   hand only; ``cubesmall_offhand_1``: 748 mm at the onset, drift 195 mm for 352 mm of
   travel, the left hand takes it). Replaying the recorded hand would not be this grasp:
   refused with that reason (``DataError`` on field ``hand``), never turned into a
   ``dropped``. A far hand that does carry the object (it moves with the hand) means a
   mesh in another frame or unit than the poses: class 5's error.
7. **Intent** (:func:`recording_intent`): what the person did after the grasp, from the
   sequence name where the dataset encodes it (GRAB ``<object>_<intent>_<n>`` /
   ``<object>_lift``; :data:`INTENT_UNKNOWN` elsewhere), in ``meta["intent"]``; a GRAB
   intent other than ``lift`` is flagged (``input_flags["intent"]``): the lift protocol
   replaces the recorded motion after the grasp by a synthetic lift, the ``recorded``
   protocol replays it (:mod:`replay.protocol.tracking`).

Degenerate collision parts (flat, too few vertices) are checked where the parts are loaded
(:mod:`replay.data.mesh_checks`); native crashes of the convex decomposition are isolated in
:mod:`replay.data.isolate`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from replay.data.mesh_io import load_mesh, unit_hint
from replay.data.objects import asset_mass, asset_meshes
from replay.data.types import Recording
from replay.datasets import DATASETS
from replay.errors import DataError

ORIGIN_TOL_M = 1e-3
COLLAPSED_EXTENT_M = 0.01
CHECK_WINDOW_S = 2.0
MIN_TRACKED_BEFORE_GRASP_S = 0.5
MIN_TRACKED_FRAMES_BEFORE_GRASP = 8
MAX_TRACKING_GAP_S = 0.5
MAX_HAND_SPEED_M_S = 5.0
CHIRALITY_MIN = 0.1
CHIRALITY_AGREE = 0.95
ASSUMED_SIDE_DATASETS = ("grab",)
OBJECT_EXTENT_RANGE_M = (0.005, 1.5)
OBJECT_MASS_RANGE_KG = (0.001, 23.0)
REST_GAP_MAX_M = 0.05
HAND_GAP_MAX_M = 0.05
#: intent of a recording whose dataset does not encode one in its names
INTENT_UNKNOWN = "unknown"
#: Which hand carries the object (class 6): over CARRY_WINDOW_S (s) after the lift onset,
#: the object's origin drifts in the recorded hand's palm frame by at most CARRY_DRIFT_MAX
#: times its travel in the world when that hand carries it. Measured on the mirror's 39
#: GRAB recordings with a lift onset: <= 0.20 on the 38 carried by the recorded right hand
#: (phone_call_1 0.20, stapler_staple_1 0.20, the 30 lifts <= 0.11), 0.55 on
#: cubesmall_offhand_1 (the left hand takes it); 0.35 lies between.
CARRY_WINDOW_S = 0.5
CARRY_DRIFT_MAX = 0.35

#: manopth landmark ids used for the palm's chirality.
_WRIST, _THUMB_CMC, _INDEX_MCP, _PINKY_MCP = 0, 1, 5, 17


# --------------------------------------------------------------------------- hand points


def hand_points(rec: Recording) -> tuple[np.ndarray | None, str]:
    """Per-frame hand points the checks look at, and their field name.

    Returns:
        ((T, K, 3) world m, field): the 21 landmarks (``landmarks``), else the 778 MANO
        vertices (``mano.vertices``), else the wrist alone (``mano.T_world_wrist``,
        ``mano.trans`` or ``wrist_pos``, K = 1); (None, "") when the recording has none.
    """
    if rec.landmarks is not None:
        return np.asarray(rec.landmarks, float), "landmarks"
    m = rec.mano
    if m is not None and m.vertices is not None:
        return np.asarray(m.vertices, float), "mano.vertices"
    if m is not None and m.T_world_wrist is not None:
        return np.asarray(m.T_world_wrist, float)[:, None, :3, 3], "mano.T_world_wrist"
    if m is not None and m.trans is not None:
        return np.asarray(m.trans, float)[:, None, :], "mano.trans"
    if rec.wrist_pos is not None:
        return np.asarray(rec.wrist_pos, float)[:, None, :], "wrist_pos"
    return None, ""


def _wrist_track(rec: Recording) -> np.ndarray | None:
    """(T, 3) world m: landmark 0 (wrist), else the MANO vertex centroid, else the wrist translation."""
    pts, name = hand_points(rec)
    if pts is None:
        return None
    if name == "landmarks":
        return pts[:, _WRIST]
    return pts.mean(axis=1)


# --------------------------------------------------------------------------- 1. untracked frames


def untracked_frames(rec: Recording) -> dict[str, np.ndarray]:
    """Frames whose hand was not tracked, by reason (module doc, class 1).

    Returns:
        ``{"at_origin", "collapsed", "zero_params", "repeated"}``, each (T,) bool; ``zero_params``:
        MANO data whose finger pose, global orientation and translation are all exactly 0;
        a frame repeating the previous one exactly is ``repeated`` (the first of a run is not).
        Non-finite frames are left to ``valid`` (the adapters mark or reject them).
    """
    pts, name = hand_points(rec)
    T = rec.num_frames
    none = np.zeros(T, bool)
    if pts is None:
        return {"at_origin": none, "collapsed": none.copy(), "repeated": none.copy()}
    finite = np.all(np.isfinite(pts.reshape(T, -1)), axis=1)
    wrist = pts[:, _WRIST] if name == "landmarks" else pts.mean(axis=1)
    at_origin = finite & (np.linalg.norm(np.nan_to_num(wrist), axis=1) < ORIGIN_TOL_M)
    if pts.shape[1] > 1:
        extent = np.ptp(np.nan_to_num(pts), axis=1).max(axis=1)
        collapsed = finite & (extent < COLLAPSED_EXTENT_M)
    else:
        collapsed = none.copy()
    flat = pts.reshape(T, -1)
    if rec.mano is not None and name != "landmarks":  # MANO data: the parameters themselves
        parts = [np.asarray(rec.mano.finger_pose, float).reshape(T, -1)]
        for a in (rec.mano.global_orient, rec.mano.trans):
            if a is not None:
                parts.append(np.asarray(a, float).reshape(T, -1))
        flat = np.concatenate([flat, *parts], axis=1)
    repeated = np.zeros(T, bool)
    repeated[1:] = finite[1:] & np.all(flat[1:] == flat[:-1], axis=1)
    zero_params = none.copy()
    if rec.mano is not None:  # MANO parameters stored as zeros (the hand is then posed from them)
        arrs = [a for a in (rec.mano.global_orient, rec.mano.trans) if a is not None]
        if arrs:
            P = np.concatenate([np.asarray(rec.mano.finger_pose, float).reshape(T, -1),
                                *[np.asarray(a, float).reshape(T, -1) for a in arrs]], axis=1)
            zero_params = np.all(P == 0.0, axis=1)
    return {"at_origin": at_origin, "collapsed": collapsed, "zero_params": zero_params,
            "repeated": repeated & ~at_origin & ~collapsed & ~zero_params}


def mark_untracked(rec: Recording) -> tuple[Recording, int]:
    """A copy of ``rec`` with untracked frames (:func:`untracked_frames`) set False in ``valid``.

    Returns:
        (recording, number of frames newly marked untracked).
    """
    bad = np.zeros(rec.num_frames, bool)
    for v in untracked_frames(rec).values():
        bad |= v
    new = bad & np.asarray(rec.valid, bool)
    if not new.any():
        return rec, 0
    return dataclasses.replace(rec, valid=np.asarray(rec.valid, bool) & ~bad), int(new.sum())


# --------------------------------------------------------------------------- 2. timing


def _window(rec: Recording) -> tuple[int, int]:
    g = int(rec.grasp_frame)
    s = int(np.searchsorted(rec.time, rec.time[g] - CHECK_WINDOW_S))
    return s, g


def check_timing(rec: Recording) -> dict:
    """Enough tracked frames, no long gap and a plausible wrist speed before the grasp.

    Looks at frames ``[s, grasp_frame]``, ``s`` = :data:`CHECK_WINDOW_S` before the grasp
    (module doc, class 2). Times in s, speed in m/s from the wrist (landmark 0, else the
    MANO vertex centroid or wrist translation) between consecutive tracked frames.

    Returns:
        figures: ``tracked_frames``, ``tracked_s``, ``max_gap_s``, ``max_speed_m_s``.

    Raises:
        DataError: fewer than :data:`MIN_TRACKED_FRAMES_BEFORE_GRASP` tracked frames or
            less than :data:`MIN_TRACKED_BEFORE_GRASP_S` before the grasp; a gap longer than
            :data:`MAX_TRACKING_GAP_S`; a speed above :data:`MAX_HAND_SPEED_M_S`.
    """
    s, g = _window(rec)
    v = np.asarray(rec.valid, bool)
    idx = np.flatnonzero(v[s : g + 1]) + s
    t = np.asarray(rec.time, float)
    span = float(t[idx[-1]] - t[idx[0]]) if idx.size else 0.0
    fig = {"window": [s, g], "tracked_frames": int(idx.size), "tracked_s": round(span, 4)}
    if idx.size < MIN_TRACKED_FRAMES_BEFORE_GRASP or span < MIN_TRACKED_BEFORE_GRASP_S:
        raise DataError(rec.source, "time", f"too few frames before the grasp: {idx.size} tracked frame(s) over "
                                            f"{span:.3f} s before the lift onset (frame {g}, {t[g]:.3f} s); need >= {MIN_TRACKED_FRAMES_BEFORE_GRASP} frames over >= "
                                            f"{MIN_TRACKED_BEFORE_GRASP_S} s to replay an approach (a clip or a "
                                            f"subsampled export? give the full-rate recording)")
    gaps = np.diff(t[idx])
    k = int(np.argmax(gaps))
    fig["max_gap_s"] = round(float(gaps[k]), 4)
    if gaps[k] > MAX_TRACKING_GAP_S:
        raise DataError(rec.source, "valid", f"too sparse: no tracked hand for {gaps[k]:.3f} s between frames "
                                             f"{idx[k]} and {idx[k + 1]} before the lift onset (frame {g}); at most "
                                             f"{MAX_TRACKING_GAP_S} s can be bridged: use a recording without the dropout")
    wrist = _wrist_track(rec)
    if wrist is not None:
        sp = np.linalg.norm(np.diff(wrist[idx], axis=0), axis=1) / gaps
        j = int(np.argmax(sp))
        fig["max_speed_m_s"] = round(float(sp[j]), 3)
        if sp[j] > MAX_HAND_SPEED_M_S:
            field = hand_points(rec)[1]
            raise DataError(rec.source, field, f"implausible hand speed: the wrist moves {sp[j]:.1f} m/s between "
                                               f"frames {idx[j]} and {idx[j + 1]} before the lift onset (a hand reaches "
                                               f"at <= {MAX_HAND_SPEED_M_S:g} m/s): frames dropped, a wrong frame rate, "
                                               "or unmarked tracking errors")
    return fig


# --------------------------------------------------------------------------- 3. handedness


def palm_chirality(landmarks: np.ndarray) -> np.ndarray:
    """Per-frame handedness sign of the palm, (T,) in [-1, 1]; > 0 for a right hand.

    ``((index_mcp - wrist) x (pinky_mcp - wrist)) . (thumb_cmc - wrist)`` with the three
    vectors normalised (manopth landmark order, world frame, any unit). MANO's palm joints
    move rigidly with the wrist, so the value is constant per hand: +0.303 on every frame of
    the mirror's GRAB right hands (subject s1); mirroring a hand flips its sign.

    Args:
        landmarks: (T, 21, 3).
    """
    L = np.asarray(landmarks, float)
    a = L[:, _INDEX_MCP] - L[:, _WRIST]
    b = L[:, _PINKY_MCP] - L[:, _WRIST]
    c = L[:, _THUMB_CMC] - L[:, _WRIST]
    n = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) * np.linalg.norm(c, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("ti,ti->t", np.cross(a, b), c) / n


def landmark_side(rec: Recording) -> tuple[str | None, dict]:
    """The hand side the landmarks' palms show (:func:`palm_chirality`), or None if undecided.

    Returns:
        (``"right"``, ``"left"`` or None, figures ``chirality_median``, ``agree``).
    """
    if rec.landmarks is None:
        return None, {}
    v = np.asarray(rec.valid, bool)
    chi = palm_chirality(np.asarray(rec.landmarks)[v])
    chi = chi[np.isfinite(chi)]
    if chi.size == 0:
        return None, {}
    med = float(np.median(chi))
    agree = float(np.mean(np.sign(chi) == np.sign(med)))
    fig = {"chirality_median": round(med, 4), "agree": round(agree, 4)}
    if abs(med) < CHIRALITY_MIN or agree < CHIRALITY_AGREE:
        return None, fig
    return ("right" if med > 0 else "left"), fig


def check_handedness(rec: Recording) -> tuple[Recording, dict, dict]:
    """Compare the side the adapter assumed with the landmarks' palms (module doc, class 3).

    Returns:
        (recording, flags, figures): on a confident mismatch the recording has the side
        the landmarks show, and ``flags["hand_side_from_landmarks"]`` says which.

    Raises:
        DataError: the palms do not show a consistent side (dataset in
            :data:`ASSUMED_SIDE_DATASETS` only).
    """
    if rec.dataset not in ASSUMED_SIDE_DATASETS or rec.landmarks is None:
        return rec, {}, {}
    side, fig = landmark_side(rec)
    fig["assumed"] = rec.hand_side
    if side is None:
        raise DataError(rec.source, "landmarks", f"cannot tell the hand's side from the palm landmarks (chirality "
                                                 f"median {fig.get('chirality_median')}, sign agreement "
                                                 f"{fig.get('agree')}; need |median| >= {CHIRALITY_MIN} and "
                                                 f">= {CHIRALITY_AGREE:.0%}): landmarks out of manopth order?")
    if side == rec.hand_side:
        return rec, {}, fig
    flags = {"hand_side_from_landmarks": f"{side} (the {rec.dataset} adapter assumed {rec.hand_side}; "
                                         f"replayed with the {side}-hand model)"}
    meta = dict(rec.meta, hand_side_assumed=rec.hand_side)
    return dataclasses.replace(rec, hand_side=side, meta=meta), flags, fig


# --------------------------------------------------------------------------- 4-5. object


def check_object(rec: Recording) -> dict:
    """Scale, mass and placement of the grasped object (module doc, classes 4 and 5).

    Uses the target's visual mesh (object frame, m) posed at ``objects[target].pos/quat``
    (world, quaternion xyzw), its mass (:func:`replay.data.objects.asset_mass`: declared,
    or density x collision-part hull volumes), ``support_height`` (world z, m) and the hand
    points (:func:`hand_points`) at the last tracked frame up to the lift onset.

    Returns:
        figures: ``extent_m``, ``mass_kg``, ``rest_gap_mm``, ``hand_gap_mm``.

    Raises:
        DataError: size or mass outside what a hand holds (with the unit that would fit);
            object not on its support at the first frame; recorded hand far from the
            object at the lift onset.
    """


    track = rec.target_object
    asset = track.asset
    visual = load_mesh(asset.visual_mesh, "visual_mesh", asset.source)
    extent = float(np.ptp(visual.bounds, axis=0).max())
    fig = {"extent_m": round(extent, 5)}
    lo, hi = OBJECT_EXTENT_RANGE_M
    if not lo <= extent <= hi:
        raise DataError(asset.visual_mesh, "scale", f"object is {extent:.4g} m across (largest bounding-box side); a "
                                                   f"hand holds {lo * 1000:g} mm-{hi:g} m{unit_hint(extent)}: convert "
                                                   "the meshes to metres")
    mass = asset_mass(asset)
    fig["mass_kg"] = round(mass, 5)
    lo, hi = OBJECT_MASS_RANGE_KG
    if not lo <= mass <= hi:
        raise DataError(asset.source or asset.visual_mesh, "mass",
                        f"object weighs {mass:.4g} kg (density {asset.density:g} kg/m^3 x collision volume); a hand "
                        f"lifts {lo * 1000:g} g-{hi:g} kg: mesh units or density wrong")

    def posed(mesh, t):
        T = np.eye(4)
        T[:3, :3] = Rotation.from_quat(track.quat[t]).as_matrix()
        T[:3, 3] = track.pos[t]
        return mesh.copy().apply_transform(T)


    _, parts = asset_meshes(asset)
    low = min(float(posed(p, 0).bounds[0, 2]) for p in parts)
    gap = low - float(rec.support_height)
    fig["rest_gap_mm"] = round(gap * 1000, 2)
    if abs(gap) > REST_GAP_MAX_M:
        where = "above" if gap > 0 else "below"
        raise DataError(rec.source, f"objects[{track.name}].pos", f"at the first frame the object's lowest point is "
                                                                  f"{abs(gap) * 1000:.0f} mm {where} the support (at most "
                                                                  f"{REST_GAP_MAX_M * 1000:g} mm): object mesh and poses in "
                                                                  "different frames or units")
    pts, field = hand_points(rec)
    v = np.flatnonzero(np.asarray(rec.valid, bool)[: rec.grasp_frame + 1])
    if pts is not None and v.size:
        t = int(v[-1])
        _, d, _ = trimesh.proximity.closest_point(posed(visual, t), pts[t])
        hg = float(np.min(d))
        fig["hand_gap_mm"] = round(hg * 1000, 2)
        if hg > HAND_GAP_MAX_M:
            carry = carry_drift(rec, pts, t)
            if carry is not None and carry[1] > 0 and carry[0] > CARRY_DRIFT_MAX * carry[1]:
                fig["carry_drift_mm"], fig["carry_travel_mm"] = round(carry[0] * 1000, 1), round(carry[1] * 1000, 1)
                side = rec.hand_side
                raise DataError(rec.source, "hand", f"the object is moved by a hand the recording does not store: at "
                                                    f"the lift onset (frame {t}) the recorded {side} hand is "
                                                    f"{hg * 1000:.0f} mm from it and does not carry it (in "
                                                    f"{CARRY_WINDOW_S:g} s the object drifts {carry[0] * 1000:.0f} mm "
                                                    f"in the hand's frame while travelling {carry[1] * 1000:.0f} mm); "
                                                    f"refused: replaying the {side} hand would not be this grasp")
            raise DataError(rec.source, field, f"at the lift onset (frame {t}) the recorded hand is {hg * 1000:.0f} mm "
                                               f"from the object's surface (at most {HAND_GAP_MAX_M * 1000:g} mm): object "
                                               "mesh and poses in different frames or units")
    return fig


def palm_frames(pts: np.ndarray) -> Rotation | None:
    """Per-frame palm frame from the landmarks (wrist, index MCP, pinky MCP: rigid on the
    palm): x wrist->index MCP, z normal to the palm plane; None for other hand points."""
    if pts.ndim != 3 or pts.shape[1] != 21:
        return None
    x = pts[:, _INDEX_MCP] - pts[:, _WRIST]
    z = np.cross(x, pts[:, _PINKY_MCP] - pts[:, _WRIST])
    y = np.cross(z, x)
    m = np.stack([v / np.linalg.norm(v, axis=1, keepdims=True) for v in (x, y, z)], axis=2)
    return Rotation.from_matrix(m)


def carry_drift(rec: Recording, pts: np.ndarray, onset: int) -> tuple[float, float] | None:
    """How far the object drifts in the recorded hand's palm frame while it travels, over
    :data:`CARRY_WINDOW_S` from the lift onset: (drift m, travel m), both the largest
    displacement from the onset frame (object origin; drift in the palm frame of
    :func:`palm_frames`, travel in the world). None without landmarks or frames."""
    frames = palm_frames(pts)
    if frames is None:
        return None
    end = int(min(rec.num_frames - 1, np.searchsorted(rec.time, rec.time[onset] + CARRY_WINDOW_S)))
    sl = slice(onset, end + 1)
    pos = np.asarray(rec.target_object.pos, float)[sl]
    local = frames[sl].inv().apply(pos - pts[sl, _WRIST])
    drift = float(np.linalg.norm(local - local[0], axis=1).max())
    travel = float(np.linalg.norm(pos - pos[0], axis=1).max())
    return drift, travel


# --------------------------------------------------------------------------- 7. intent


def recording_intent(rec: Recording) -> str:
    """What the person does after the grasp, from the sequence name where the dataset encodes it.

    GRAB names are ``<object>_lift`` or ``<object>_<intent>_<n>`` (mirror README:
    pass, drink, pour, offhand, use, inspect, takepicture, call, staple). Other datasets:
    TACO names are a date and take, HUG-Bench scenes carry none: :data:`INTENT_UNKNOWN`.
    """
    if rec.dataset not in DATASETS or not DATASETS[rec.dataset].names_object:
        return INTENT_UNKNOWN
    parts = str(rec.name).split("_")
    if len(parts) >= 3 and parts[-1].isdigit():
        return parts[-2]
    if len(parts) >= 2 and not parts[-1].isdigit():
        return parts[-1]
    return INTENT_UNKNOWN


# --------------------------------------------------------------------------- all


def check_recording(rec: Recording) -> Recording:
    """Run every input check on a canonical recording (module doc); return the checked copy.

    The returned recording has untracked frames marked False in ``valid``, the hand side
    the landmarks show, ``meta["input_flags"]`` (named flags, e.g. ``{"untracked_frames": 11}``;
    empty when the recording is clean) and ``meta["input_checks"]`` (what was measured).

    Raises:
        DataError: an input error of classes 2-6 (module doc), naming the file and field.
    """
    flags: dict = {}
    figs: dict = {}
    rec, n = mark_untracked(rec)
    if n:
        flags["untracked_frames"] = n
    figs["timing"] = check_timing(rec)  # first: a recording with no tracked frames says so
    rec, f, figs["handedness"] = check_handedness(rec)
    flags.update(f)
    figs["object"] = check_object(rec)
    intent = recording_intent(rec)
    if intent not in ("lift", INTENT_UNKNOWN):
        flags["intent"] = (f"{intent}: the recorded motion after the grasp is not a lift (the lift protocol "
                           "replaces it; --protocol recorded replays it)")
    meta = dict(rec.meta, input_flags=flags, input_checks=figs, intent=intent)
    return dataclasses.replace(rec, meta=meta)
