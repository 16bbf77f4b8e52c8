"""A recording made ready to replay: named, loaded, cropped to the replayed window, its hand filled in as joint
coordinates (landmark IK where the dataset has only landmarks). Imports no physics engine."""

from __future__ import annotations

import copy
import dataclasses
import difflib
from pathlib import Path

import numpy as np

from replay.checks import load_recording
from replay.checks.intent import name_parts
from replay.config import ReplayConfig
from replay.data.types import ObjectTrack
from replay.errors import DataError, UsageError
from replay.kinematics.coords import complete_hand, hand_coords
from replay.protocol.protocols.base import Protocol, protocol_named
from replay.sim.hand_assets import hand_mjcf_path

#: Recording frames kept around the approach window before kinematics (IK) is run.
CROP_MARGIN_FRAMES = 2


def sequence_object(dataset: str, sequence: str) -> str | None:
    """The object a lift recording's name says it holds (GRAB ``mug_lift`` -> ``mug``); None for another intent
    (``mug_pass_1``, so ``--objects mug`` stays the lift) and for names that carry none (TACO, HUG-Bench)."""
    m = name_parts(dataset, sequence)
    return None if m is None or m["take"] is not None else m["object"]


def select_sequences(dataset: str, sequences: list[str], names: str, *, first_only: bool = False) -> list[str]:
    """The sequences a comma-separated ``--objects`` value names (by sequence or object), in the order named;
    ``first_only``: one per name. Raises UsageError: a name matches no sequence."""
    picked = []
    for n in [x.strip() for x in names.split(",") if x.strip()]:
        hit = [s for s in sequences if s == n or sequence_object(dataset, s) == n]
        if not hit:
            raise UsageError("--objects", unknown_names(dataset, [n], sequences))
        picked += hit[:1] if first_only else hit
    return picked


#: a list of names this long or shorter is given in full in an error; longer, a few examples
LIST_NAMES_UP_TO = 12


def unknown_names(dataset: str, missing: list[str], sequences: list[str]) -> str:
    """The message for ``--objects`` names that match no recording: the closest names and what the option takes."""
    objects = sorted({o for s in sequences if (o := sequence_object(dataset, s)) is not None})
    named, example = [], objects[0] if objects else None
    for name in missing:
        close = difflib.get_close_matches(name, objects + list(sequences), n=3, cutoff=0.6)
        named.append(f"{name!r} (did you mean {' or '.join(close)}?)" if close else repr(name))
        example = next((c for c in close if c in objects), example)
    head = f"no {dataset} sequence for {', '.join(named)}"

    def few(names: list[str]) -> str:
        if len(names) <= LIST_NAMES_UP_TO:
            return ", ".join(names)
        return f"{len(names)}, e.g. {', '.join(names[:3])}"

    if not objects:
        return f"{head}; give a sequence ({few(list(sequences))})"
    lift = f"{example} selects {example}_lift only" if f"{example}_lift" in sequences else ""
    return (
        f"{head}; give an object ({few(objects)}{'; ' + lift if lift else ''}) or a sequence ({few(list(sequences))})"
    )


def resolve_sequences(dataset: str, all_seqs: list[str], sequences, *, objects) -> list[str]:
    """The sequences a study runs: ``sequences`` (default all), only those ``objects`` name (object or sequence).

    Raises:
        UsageError: a name matches nothing (the closest names offered).
        DataError: no sequences.
    """
    seqs = list(sequences) if sequences else list(all_seqs)
    if objects:
        want = set(objects)
        seqs = [s for s in seqs if sequence_object(dataset, s) in want or s in want]
        missing = want - {sequence_object(dataset, s) for s in seqs} - set(seqs)
        if missing:
            raise UsageError("--objects", unknown_names(dataset, sorted(missing), all_seqs))
    if not seqs:
        raise DataError(None, "sequences", f"no {dataset} sequences to run")
    return seqs


def crop_recording(rec, start: int, stop: int):
    """A copy of ``rec`` holding frames ``[start, stop)`` (grasp frame re-indexed)."""
    sl = slice(start, stop)
    out = copy.copy(rec)
    out.time = rec.time[sl] - rec.time[start] + rec.time[0]
    out.valid = rec.valid[sl]
    for name in ("wrist_pos", "wrist_quat", "finger_quat", "landmarks"):
        v = getattr(rec, name)
        setattr(out, name, None if v is None else v[sl])
    out.objects = [ObjectTrack(o.asset, o.pos[sl], o.quat[sl], o.tracked) for o in rec.objects]
    if rec.mano is not None:  # per-frame MANO arrays (TACO, HUG-Bench); betas may be per sequence
        T = rec.num_frames
        out.mano = dataclasses.replace(
            rec.mano,
            **{
                f.name: getattr(rec.mano, f.name)[sl]
                for f in dataclasses.fields(rec.mano)
                if isinstance(getattr(rec.mano, f.name), np.ndarray) and getattr(rec.mano, f.name).shape[:1] == (T,)
            },
        )
    out.grasp_frame = int(rec.grasp_frame - start)
    out.meta = dict(rec.meta, cropped_from=[int(start), int(stop)])
    for k in ("grab_wrist_loc", "grab_wrist_quat_xyzw"):
        if isinstance(rec.meta.get(k), np.ndarray) and len(rec.meta[k]) == rec.num_frames:
            out.meta[k] = rec.meta[k][sl]
    return out


def hand_trajectory(rec, mjcf: Path):
    """(recording, coords (T, 67)) with the hand filled in, landmark IK on the capsule MJCF beside ``mjcf`` (the
    fingertips are defined on the capsules; the mesh hand has the same joints)."""
    if rec.wrist_pos is None or rec.finger_quat is None:
        ik_mjcf = Path(mjcf).with_name("capsule_hand.xml")
        rec = complete_hand(rec, ik_mjcf if ik_mjcf.is_file() else mjcf)
    return rec, np.asarray(hand_coords(rec), dtype=np.float64)


def prepare_recording(
    dataset: str,
    sequence: str,
    data_dir,
    *,
    manosim_dir,
    cfg: ReplayConfig,
    protocol: str | Protocol = "lift",
    settings: dict | None = None,
):
    """Load a recording, crop it to the replayed window (``approach_window_s`` s before the lift onset to the
    protocol's ``window_end``) and fill in the hand.

    Returns:
        ``(recording, coords (T, 67) Newton joint_q order xyzw, hand MJCF path, crop start frame)``.

    Raises:
        DataError: bad or missing input.
    """
    rec = load_recording(
        dataset, sequence, data_dir, fps=cfg.recording_fps, object_time_offset_s=cfg.object_time_offset_s
    )
    # only the replayed window needs the hand: crop before IK (minutes -> seconds)
    g = rec.grasp_frame
    start = 0 if cfg.approach_window_s is None else int(np.searchsorted(rec.time, rec.time[g] - cfg.approach_window_s))
    start = max(0, start - CROP_MARGIN_FRAMES)
    stop = protocol_named(protocol).window_end(rec, settings) + 1
    # the hand before the crop: a fitted hand is measured over every frame of the recording
    mjcf = hand_mjcf_path(manosim_dir, cfg, rec.hand_side, recording=rec)
    rec = crop_recording(rec, start, min(rec.num_frames, stop + CROP_MARGIN_FRAMES))
    rec, coords = hand_trajectory(rec, Path(mjcf))
    return rec, coords, mjcf, start
