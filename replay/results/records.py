"""The result records: typed rollout and study records, the format version, phase codes.

:class:`RolloutRecord` is one ``<seq>.json``, :class:`StudyRecord` one ``study.json``; every
field carries ``unit``/``doc`` metadata (``docs/results.md`` is generated from it,
``tests/doc_tables.py``). The files themselves are written and read by :mod:`replay.results.files`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

import numpy as np

from replay.errors import DataError
from replay.results import sampled_fields as sf
from replay.results.outcomes import READABLE_VERSIONS, upgrade

#: Version of the result files' layout. 1: first versioned layout (``height_end_hold``, ``separation_mm``,
#: ``slip_in_hand``; slip of an object not lifted is null). 2: the outcome ``dropped`` is ``not_lifted``
#: (:mod:`replay.results.outcomes`). 3 (issue #39): a rollout's ``physics`` (:mod:`replay.sim.physics`) and a
#: recording's ``verdict_envelope``. 4 (issue #46): the sampled verdict (:mod:`replay.results.sampled_fields`)
#: replaces the envelope. Older formats are still read.
FORMAT_VERSION = 5

#: Quaternion order of every saved pose (Newton's body_q convention): x, y, z, w.
QUAT_ORDER = "xyzw"


class Phase(IntEnum):
    """Protocol phase of a control frame (the npz ``phase`` codes; :mod:`replay.protocol.rollout`)."""

    SETTLE = 0  #: object rests on the support, hand holds its first replayed pose
    APPROACH = 1  #: the recorded approach and closure, up to the grasp frame
    LIFT = 2  #: the wrist rises ``lift_height`` (min-jerk) over ``lift_s``
    HOLD = 3  #: held at the top for ``hold_s``; ``lifted`` is judged at its end
    SHAKE = 4  #: lateral shake test, only for rollouts that lifted
    RECORDED = 5  #: recorded protocol: the recorded wrist and fingers after the settle (:mod:`replay.protocol.recorded_protocol`)
    RELEASE = 6  #: fingers open after the hold and shake, the object must fall (:mod:`replay.protocol.release`)


#: Keys of a poses npz: (name, shape, unit/frame).
POSES_KEYS = (
    ("format_version", "()", "int, :data:`FORMAT_VERSION`"),
    ("time", "(F,)", "s since the rollout's first control frame (30 fps)"),
    ("body_names", "(B,)", "str: mano_body_0..15 then object"),
    ("body_pos", "(F, B, 3)", "m, world frame (Z up)"),
    ("body_quat", "(F, B, 4)", "world orientation, quaternion xyzw"),
    ("contact_count", "(F,)", "int, hand-object contacts"),
    ("phase", "(F,)", "int, :class:`Phase` code"),
    ("contact_force", "(F,)", "N, sum of hand-object normal forces"),
    ("friction_budget_kg", "(F,)", "kg, sum(mu_i N_i)/g of the hand-object contacts"),
    ("wrist_err", "(F,)", "m, wrist (root body) position minus its target; NaN during settle"),
    (
        "track_pos_err_mm",
        "(F,)",
        "recorded protocol only: mm, |simulated - recorded object origin|, world; NaN while settling",
    ),
    (
        "track_rot_err_deg",
        "(F,)",
        "recorded protocol only: deg, angle between simulated and recorded object orientation; NaN while settling",
    ),
    ("recorded_object_pos", "(F, 3)", "recorded protocol only: m, world, the recorded object origin (the ghost)"),
    ("recorded_object_quat", "(F, 4)", "recorded protocol only: world orientation, quaternion xyzw"),
)


class ResultsFormatError(DataError):
    """A result file of another (or no) format version, or without a required field."""


def _f(unit: str, doc: str, default: Any = None):
    return field(default=default, metadata={"unit": unit, "doc": doc})


def _fl(unit: str, doc: str, factory=dict):
    return field(default_factory=factory, metadata={"unit": unit, "doc": doc})


@dataclass
class RolloutRecord(sf.SampledRolloutFields):
    """One replayed recording (``<seq>.json``); ``ablation`` is the contact-ablation run of
    the same recording as a record of its own (its identity fields are None)."""

    format_version: int = _f("-", "result file layout version (:data:`FORMAT_VERSION`)", FORMAT_VERSION)
    # identity and inputs
    object: str | None = _f("-", "object asset name (TACO/HUG: from the recording's metadata)")
    sequence: str | None = _f("-", "sequence name within the dataset")
    dataset: str | None = _f("-", "grab, taco or hug-bench")
    hand_mjcf: str | None = _f("path", "hand MJCF replayed (side of the recording)")
    object_visual_mesh: str | None = _f("path", "object visual mesh (renderer)")
    support_height: float | None = _f("m, world z", "top of the table/support the object rests on")
    config_hash: str | None = _f("-", "16 hex of SHA-256 of the config JSON; --resume matches it")
    kinematics_s: float | None = _f("s", "wall time of loading and fitting the hand (IK)")
    crop: list | None = _f("frames", "[start, stop) of the recording replayed")
    input_flags: dict = _fl(
        "-",
        "repaired, corrected or suspect input (replay.checks.recording_checks: untracked_frames, "
        "hand_side_from_landmarks, intent, object_track, object_rest, penetration, "
        "hand_shape, frames_missing, stream_offset, ...; most specific cause first, "
        "replay.checks.causes), empty if none",
    )
    object_time_offset_s: float | None = _f(
        "s",
        "the object stream's time offset against the hand's the replay applied "
        "(config.object_time_offset_s, --object-time-offset; 0: as recorded)",
    )
    inputs: dict = _fl(
        "-",
        "{path: {sha256, from, pinned, manifest}} of every input file, hashed when the rollout read it (replay.study.inputs); `pinned` "
        "only on the project's pin list's SHA-256, never the data's manifest; `pin_mismatch: true` at a pinned path with another digest",
    )
    intent: str | None = _f("-", "what the person did, where the dataset names it (GRAB: lift, pass, pour, ...)")
    protocol: str | None = _f(
        "-",
        "lift (synthetic lift, hold, shake), recorded (the recorded motion) or hug-oracle "
        "(the HUG grasp oracle, replay.protocol.oracle_plan)",
    )
    recorded_max_s: float | None = _f(
        "s", "recorded protocol: at most this long after the lift onset (null: to the end of the manipulation)"
    )
    start_frame: int | None = _f("frame", "first recorded frame of the approach (in the crop)")
    grasp_frame: int | None = _f("frame", "recorded grasp frame (in the crop)")
    support: Any = _f("m, world", "'plane', or {table_top_xy: [xmin, xmax, ymin, ymax]}")
    # scene read-back
    object_mass: float | None = _f("kg", "object mass simulated")
    hand_mass: float | None = _f("kg", "hand mass simulated")
    contact_capacity: int | None = _f("contacts", "contact buffer size")
    resting_contacts: int | None = _f("contacts", "object-support contacts at rest")
    probe_contacts: list | None = _f("contacts", "contact counts of the capacity probe")
    readback: dict = _fl("-", "drive gains and limits read back from the built model")
    flutter_min_margin: float | None = _f("-", "smallest finger-drive damping margin d_total/d_crit")
    flutter: list = _fl("-", "per finger joint damping check (kp, damping, critical damping)", list)
    finger_damping: list = _fl("N·m·s/rad", "distinct finger joint damping values", list)
    import_warnings: list = _fl("-", "warnings of the hand import (said once per study)", list)
    run_warnings: list = _fl(
        "-",
        "warnings raised while this recording ran (e.g. a finger drive's damping "
        "raised to its flutter bound), said once per study",
        list,
    )
    engine: str | None = _f(
        "-",
        "direct (MuJoCo), warp (mujoco-warp), newton (reference) or steel (SolverSteel; its rollouts add solver_backend and steel_rows)",
    )
    ablation_flag: bool | None = _f("-", "JSON key 'ablation' inside an ablation record: true")
    variant: dict = _fl(
        "-",
        "the world's variant (ablation, friction, effort, mass, wrist offset; finger closure, solver options if set)",
    )
    variant_readback: dict = _fl("-", "the variant's values read back from the model")
    # outcome
    outcome: str | None = _f(
        "-", "lift protocol: lifted, not_lifted, stuck or unstable; recorded protocol: tracked, lost or unstable"
    )
    stable: bool | None = _f("-", "no non-finite state, runaway or contact overflow")
    lifted: bool | None = _f(
        "-", "stable, completed, rise >= lifted_min_rise and clearance >= lifted_min_clearance at the end of the hold"
    )
    completed: bool | None = _f("-", "the rollout reached the end of the hold")
    unstable_frame: int | None = _f("frame", "control frame of the instability, null if stable")
    unstable_reason: str | None = _f("-", "why it was stopped as unstable")
    height_end_hold: float | None = _f("m, world z", "object origin z at the end of the hold (success window)")
    final_height: float | None = _f(
        "m, world z",
        "object origin z at the last simulated frame (after the shake "
        "where one ran: an object shaken loose is back on the table)",
    )
    rise: float | None = _f("m", "object z at the end of the hold minus at lift start")
    clearance: float | None = _f("m", "lowest collision vertex above the support at the end of the hold")
    slip_in_hand: bool | None = _f("-", "the object was in the hand at the end of the hold (lifted): slip_mm applies")
    slip_mm: float | None = _f(
        "mm, wrist frame",
        "object translation in the wrist frame, lift start to end of "
        "hold; null when the object was not in the hand (slip_in_hand false)",
    )
    slip_deg: float | None = _f(
        "deg, wrist frame", "object rotation in the wrist frame over the same window; null when slip_in_hand is false"
    )
    separation_mm: float | None = _f(
        "mm, wrist frame",
        "how far the object ended from where the hand held it at lift start (end of hold), whether held or left behind",
    )
    shake_ran: bool | None = _f("-", "the shake test ran (only after a successful hold)")
    shake_held: bool | None = _f("-", "still held after the shake (clearance and shake slip < shake_max_slip)")
    shake_slip_mm: float | None = _f("mm, wrist frame", "object translation in the wrist frame over the shake")
    shake_slip_deg: float | None = _f("deg, wrist frame", "object rotation in the wrist frame over the shake")
    release_ran: bool | None = _f("-", "the release ran: fingers opened to the pre-grasp pose, object still held")
    release_fall_m: float | None = _f(
        "m, world", "object drop after the fingers opened (z at the release start minus its lowest z after)"
    )
    release_fall_needed_m: float | None = _f(
        "m", "fall the release needs: max(5 cm, the object's height), at most half its rise above where it rested"
    )
    stuck_after_release: bool | None = _f(
        "-",
        "held, then did not fall when the hand opened (outcome `stuck`, not lifted); null when the release did not run",
    )
    release_unstable: str | None = _f(
        "-",
        "the physics trouble that stopped the rollout after the hand opened, "
        "with its frame (the verdicts before it stand); null if none",
    )
    # contact agreement with the recording (replay.protocol.contact_agreement)
    contact_agreement_precision: float | None = _f(
        "0-1",
        "of the bones carrying hand-object force at the start of "
        "the hold (recorded protocol: the grasp frame), the share the "
        "recorded hand touched with; null: none carried force",
    )
    contact_agreement_recall: float | None = _f(
        "0-1",
        "of the bones the recorded hand touched with at the grasp "
        "frame (within contact_agreement_touch_mm of the collision "
        "parts), the share carrying force in the simulation",
    )
    contact_agreement_recorded_bones: list | None = _f(
        "-", "bones (palm, index_1..thumb_3) the recorded hand touches at the grasp frame"
    )
    contact_agreement_simulated_bones: list | None = _f(
        "-",
        "bones with a hand-object contact over contact_force_min "
        "N at the agreement frame; null on engines without "
        "per-contact forces (only MuJoCo C has them)",
    )
    contact_agreement_touch_mm: float | None = _f(
        "mm",
        "a recorded bone touches within this of the object's hulls: "
        "landmark-IK p90 4.18 mm + hull-to-surface 0.94 mm, ~5 mm",
    )
    # grasp measures
    friction_budget_at_lift_kg: float | None = _f("kg", "sum(mu N)/g of hand-object contacts at lift start")
    friction_budget_peak_kg: float | None = _f("kg", "largest sum(mu N)/g during lift and hold")
    friction_budget_hold_kg: float | None = _f("kg", "median sum(mu N)/g during the hold")
    creep_mm_s: float | None = _f("mm/s, wrist frame", "object drift rate in the hand during the hold (lifted only)")
    slip_onset_frame: int | None = _f("frame", "first frame the object moved diag_slip_onset_mm in the hand")
    pushed_mm: float | None = _f("mm, world", "largest collision-vertex displacement before the lift")
    fingertip_distance_mm: float | None = _f("mm", "fingertip-object signed distance at lift start (< 0: inside)")
    contacts_at_lift: int | None = _f("contacts", "hand-object contacts at lift start")
    contacts_force_at_lift: int | None = _f("contacts", "of them carrying >= contact_force_min N")
    wrist_err_median_mm: float | None = _f("mm, world", "median |wrist position - target| over approach, lift, hold")
    wrist_err_max_mm: float | None = _f(
        "mm, world", "largest |wrist position - target| after settling (approach to release)"
    )
    wrist_err_peak_mm: float | None = _f(
        "mm, world", "largest |wrist position - target| over the lift and hold (the frames the verdict is judged on)"
    )
    max_object_step_mm: float | None = _f("mm, world", "largest frame-to-frame object origin displacement")
    max_object_disp_mm: float | None = _f("mm, world", "largest collision-vertex displacement from the settled pose")
    max_object_rise_mm: float | None = _f("mm, world z", "highest object origin z above its settled z")
    peak_contacts: int | None = _f("contacts", "largest contact count of the world (all pairs)")
    max_hand_object_contacts: int | None = _f("contacts", "largest hand-object contact count")
    finger_actuator_force_max: float | None = _f("N·m", "largest finger actuator torque")
    frames: int | None = _f("frames", "control frames simulated")
    frames_planned: int | None = _f("frames", "control frames of the protocol")
    sim_s: float | None = _f("s", "simulated time")
    diagnosis: dict | None = _f(
        "-",
        "{class, figure} of replay.protocol.diagnosis (its CLASSES) for a rollout not lifted "
        "or shaken loose; null if it lifted and held through the shake",
    )
    wall_s: float | None = _f("s", "wall time of the batch (both worlds) stepping")
    build_s: float | None = _f("s", "wall time of building the scene")
    batch_worlds: int | None = _f("worlds", "worlds stepped in the batch")
    rtf: float | None = _f("-", "sim_s / wall_s")
    poses: str | None = _f("path", "poses npz, relative to the study JSON's folder")
    ablation: RolloutRecord | None = _f("-", "the contact-ablation run (same fields), null with --no-ablation")
    ablation_clean: bool | None = _f("-", "ablation: no hand-object contact and object moved < ablation_clean_mm")
    ablation_no_rise: bool | None = _f("-", "ablation: no hand-object contact and object rose < ablation_clean_mm")
    ablation_rerun_s: float | None = _f("s", "wall time of the last --ablation-only rerun")
    wall_s_total: float | None = _f("s", "wall time of this recording's job (kinematics, both runs, writing)")
    # recorded protocol (replay.protocol.recorded_protocol): the simulated object against the recorded track
    track_pos_err_median_mm: float | None = _f("mm, world", "median object position error over simulated frames")
    track_pos_err_p95_mm: float | None = _f("mm, world", "95th percentile of the position error")
    track_pos_err_max_mm: float | None = _f("mm, world", "largest position error")
    track_rot_err_median_deg: float | None = _f("deg", "median object orientation error over simulated frames")
    track_rot_err_p95_deg: float | None = _f("deg", "95th percentile of the orientation error")
    track_rot_err_max_deg: float | None = _f("deg", "largest orientation error")
    track_within: float | None = _f(
        "1", "fraction of planned frames (after settling) within 2 cm and 30 deg; frames not simulated count as outside"
    )
    track_lost_frame: int | None = _f(
        "frame", "first frame of the first run outside tolerance lasting >= TRACK_LOST_MIN_S, null if never lost"
    )
    track_lost_s: float | None = _f("s", "recorded time of the loss after the lift onset")
    track_frames: int | None = _f("frames", "frames simulated after settling")
    track_frames_planned: int | None = _f("frames", "frames planned after settling")
    track_recorded_s: float | None = _f("s", "recorded time replayed after settling")
    track_tolerance: dict = _fl("-", "{pos_mm, rot_deg}: the tolerance of track_within")
    # refine (replay.protocol.refine, ``<seq>.refine.json``): the smallest correction that lifts; the
    # record's other fields are the refined run (with the shake), ``ablation`` its contact ablation
    refine_outcome: str | None = _f(
        "-", "lifted, not_lifted, stuck or unstable: the refined run (the chosen correction)"
    )
    refine_found: bool | None = _f(
        "-",
        "a correction within the bounds held: lifted at the end of the hold, held "
        "through the shake, let go at the release (else the best-ranked one is "
        "reported); bounds as enforced: |wrist offset| <= wrist_mm, |wrist rotation| "
        "<= wrist_deg, per finger closure 0..finger_deg on each of its 3 joints",
    )
    refine_wrist_mm: float | None = _f("mm, world", "|wrist offset| of the chosen correction")
    refine_wrist_deg: float | None = _f(
        "deg, world", "wrist rotation angle of the chosen correction (about the wrist at the grasp frame)"
    )
    refine_finger_deg: float | None = _f("deg", "largest per-finger extra closure of the chosen correction")
    refine_ablation_max_disp_mm: float | None = _f(
        "mm, world", "the refined grasp's contact ablation: largest collision-vertex displacement of the object"
    )
    refine_ablation_clean: bool | None = _f(
        "-", "that ablation: no hand-object contact, object moved < ablation_clean_mm"
    )
    refine_shake_held: bool | None = _f("-", "the refined run held through the shake")
    refine_neighbourhood_success: float | None = _f(
        "1",
        "0-1: of the 16 perturbations around the chosen correction "
        "(each wrist axis +-1 mm, each rotation axis and closure "
        "+-1 deg, an orthogonal design), the fraction that held "
        "(None: no correction held)",
    )
    refine_seed_agreement: bool | None = _f(
        "-",
        "a second search (seed + 1) reached the same verdict: a correction "
        "whose neighbourhood holds (>= neighbourhood_min), or none (None: "
        "not run)",
    )
    refine_rollouts: int | None = _f(
        "worlds",
        "worlds the searches and neighbourhoods of both seeds simulated (the final run and its ablation not counted)",
    )
    refine_wall_s: float | None = _f("s", "wall time of the search and the final run")
    refine_correction: dict | None = _f(
        "mm, deg",
        "{wrist_offset_mm (3), wrist_rotvec_deg (3), finger_closure_deg "
        "(5: index, middle, pinky, ring, thumb), cost, settings, history, "
        "neighbourhood_tried, second_seed}",
    )
    # hug-oracle (replay.protocol.oracle_plan / oracle_success, ``<seq>.hug-oracle.json``): `lifted` is its test's
    oracle: dict | None = _f(
        "-, mm, N·m, s",
        "{success_test (off_table or lift), off_table (no object-support "
        "contact at any frame of the hold and the object above its lift-start height), "
        "hold_frames, support_contact_frames, end_rise_mm, lift_test_lifted (rise + clearance), "
        "effort_limit N·m, hand_object_contact, dt s: what the rollout ran with}",
    )
    physics: list | None = _f("-", "every physics choice in effect, [{name, value, source, why}] (replay.sim.physics)")
    extra: dict = field(default_factory=dict, metadata={"unit": "-", "doc": "keys this version does not declare"})

    @classmethod
    def from_dict(cls, doc: dict, source: str | Path | None = None, nested: bool = False) -> RolloutRecord:
        """A record from a rollout JSON object (unknown keys go to ``extra``).

        Raises:
            ResultsFormatError: not an object, or (top level) another ``format_version``.
        """
        if not isinstance(doc, dict):
            raise ResultsFormatError(source, None, "rollout record is not a JSON object")
        if not nested:
            check_version(doc.get("format_version"), source)
            upgrade(doc)
        names = {f.name for f in dataclasses.fields(cls)} - {"extra", "ablation", "ablation_flag"}
        kw = {k: v for k, v in doc.items() if k in names}
        extra = {k: v for k, v in doc.items() if k not in names and k != "ablation"}
        rec = cls(**kw, extra=extra)
        ab = doc.get("ablation")
        if isinstance(ab, dict):
            rec.ablation = cls.from_dict(ab, source, nested=True)
        elif isinstance(ab, bool):
            rec.ablation_flag = ab
        if nested:
            rec.format_version = None
        return rec

    def to_dict(self) -> dict:
        """The JSON object (``ablation`` nested; ``extra`` merged back in)."""
        out = {}
        for f in sf.sampled_last(dataclasses.fields(self)):
            if f.name in ("extra", "ablation", "ablation_flag"):
                continue
            v = getattr(self, f.name)
            if f.name == "format_version" and v is None:
                continue
            out[f.name] = v
        if self.ablation_flag is not None:
            out["ablation"] = self.ablation_flag
        elif self.ablation is not None:
            out["ablation"] = self.ablation.to_dict()
        else:
            out["ablation"] = None
        out.update(self.extra)
        return out


#: Columns of a study's ``rollouts`` rows and of ``study.csv``, in order.
ROW_FIELDS = (
    "sequence",
    "object",
    "intent",
    "outcome",
    "diagnosis",
    "stable",
    "lifted",
    "rise",
    "height_end_hold",
    "final_height",
    "slip_in_hand",
    "slip_mm",
    "slip_deg",
    "separation_mm",
    "shake_held",
    "shake_slip_mm",
    "contacts_at_lift",
    "contacts_force_at_lift",
    "wrist_err_median_mm",
    "wrist_err_peak_mm",
    "wrist_err_max_mm",
    "max_object_step_mm",
    "friction_budget_peak_kg",
    "creep_mm_s",
    "object_mass",
    "ablation_clean",
    "ablation_no_rise",
    "ablation_max_disp_mm",
    "ablation_lifted",
    "wall_s_total",
    "rtf",
    "input_flags",
    "diagnosis_figure",
    "json",
    "contact_agreement_precision",
    "contact_agreement_recall",
    "stuck_after_release",
)


#: Columns of a study's ``refine_rollouts`` rows (``--refine``).
REFINE_FIELDS = (
    "sequence",
    "refine_outcome",
    "refine_found",
    "refine_wrist_mm",
    "refine_wrist_deg",
    "refine_finger_deg",
    "refine_ablation_max_disp_mm",
    "refine_ablation_clean",
    "refine_shake_held",
    "refine_rollouts",
    "refine_wall_s",
    "refine_neighbourhood_success",
    "refine_seed_agreement",
)


def study_row(r: RolloutRecord, json_rel: str) -> dict:
    """The study JSON's summary row of one rollout (:data:`ROW_FIELDS`)."""
    d = r.to_dict()
    row = {k: d.get(k) for k in ROW_FIELDS}
    row["diagnosis"] = (r.diagnosis or {}).get("class")
    row["diagnosis_figure"] = (r.diagnosis or {}).get("figure")
    row["json"] = json_rel
    row["ablation_max_disp_mm"] = r.ablation.max_object_disp_mm if r.ablation else None
    row["ablation_lifted"] = r.ablation.lifted if r.ablation else None
    return row


@dataclass
class StudyRecord(sf.SampledStudyFields):
    """A study (``study.json``): what ran, with what, and one summary row per recording."""

    format_version: int = _f("-", "result file layout version", FORMAT_VERSION)
    dataset: str | None = _f("-", "grab, taco or hug-bench")
    hand: dict = _fl("-", "{model, shape, manosim_dir, mjcf}")
    config: dict = _fl("-", "every setting (replay.config.ReplayConfig), SI units")
    config_hash: str | None = _f("-", "16 hex of SHA-256 of the config JSON")
    ablation: bool | None = _f("-", "the contact ablation ran")
    versions: dict = _fl("-", "python and package versions")
    sequences: list = _fl("-", "every recording of the study, in order", list)
    counts: dict = _fl("-", "outcome counts, medians and wall time (replay.study.summary.summarize)")
    failed: dict = _fl("-", "{sequence: one-line reason} of recordings that could not be replayed")
    rollouts: list = _fl("-", "one row per recording (ROW_FIELDS; full record in its `json`)", list)
    inputs: dict = _fl("-", "{path: {sha256, from}} of every input file")
    protocols: list = _fl("-", "protocols run: lift and/or recorded", list)
    recorded_rollouts: list = _fl(
        "-",
        "recorded protocol: one row per recording (replay.protocol.recorded_protocol.TRACK_FIELDS; "
        "full record in its `json`)",
        list,
    )
    refine_rollouts: list = _fl("-", "--refine: one row per recording (REFINE_FIELDS; full record in its `json`)", list)
    oracle_rollouts: list = _fl(
        "-",
        "--protocol hug-oracle: one row per recording (ROW_FIELDS; full record in its "
        "`json`, `<sequence>.hug-oracle.json`); counts in counts['hug-oracle']",
        list,
    )
    extra: dict = field(default_factory=dict, metadata={"unit": "-", "doc": "keys this version does not declare"})

    @classmethod
    def from_dict(cls, doc: dict, source: str | Path | None = None) -> StudyRecord:
        """Raises: ResultsFormatError (not an object, other version, no ``rollouts`` list)."""
        if not isinstance(doc, dict):
            raise ResultsFormatError(source, None, "study JSON is not an object")
        check_version(doc.get("format_version"), source)
        upgrade(doc)
        if not isinstance(doc.get("rollouts"), list):
            raise ResultsFormatError(source, "rollouts", "study JSON has no 'rollouts' list")
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        return cls(
            **{k: v for k, v in doc.items() if k in names}, extra={k: v for k, v in doc.items() if k not in names}
        )

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in sf.sampled_last(dataclasses.fields(self)) if f.name != "extra"}
        out.update(self.extra)
        return out


def check_version(version, source: str | Path | None, fld: str = "format_version") -> None:
    """Raises ResultsFormatError unless ``version`` is one this grasp-replay reads
    (:data:`replay.results.outcomes.READABLE_VERSIONS`: :data:`FORMAT_VERSION` and format 1, whose
    words :func:`replay.results.outcomes.upgrade` maps)."""
    if version is None:
        raise ResultsFormatError(
            source,
            fld,
            "missing: written by an older grasp-replay; re-run the study "
            "(scripts/run_study.py, without --resume) to rewrite it",
        )
    try:
        v = int(np.asarray(version).item())
    except (TypeError, ValueError):
        v = None
    if v not in READABLE_VERSIONS:
        raise ResultsFormatError(
            source,
            fld,
            f"{version!r} is not a version this grasp-replay reads "
            f"({', '.join(map(str, READABLE_VERSIONS))}); re-run the study or use "
            "the matching release",
        )
