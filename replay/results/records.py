"""The result records (:class:`RolloutRecord` one ``<seq>.json``, :class:`StudyRecord` one ``study.json``), format
version and phase codes; each field's ``unit``/``doc`` metadata makes docs/results.md (``tests/doc_tables.py``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

from replay.results import sampled_fields as sf
from replay.results.convert import PARTS, ResultsFormatError, nest, upgrade_rollout, upgrade_study
from replay.results.rollout_parts import (
    RESULT_TYPES,
    GraspMeasures,
    LiftMeasures,
    ProtocolResult,
    SceneReadback,
    Timing,
    split_keys,
)
from replay.results.rollout_parts import described as _f
from replay.results.sampled_fields import SampledVerdict

#: version of the result files' layout (each version's changes: docs/results.md; older: :mod:`replay.results.convert`)
FORMAT_VERSION = 7


class Phase(IntEnum):
    """Protocol phase of a control frame (the npz ``phase`` codes; :mod:`replay.protocol.rollout`)."""

    SETTLE = 0  #: object rests on the support, hand holds its first replayed pose
    APPROACH = 1  #: the recorded approach and closure, up to the grasp frame
    LIFT = 2  #: the wrist rises ``lift_height`` (min-jerk) over ``lift_s``
    HOLD = 3  #: held at the top for ``hold_s``; ``lifted`` is judged at its end
    SHAKE = 4  #: lateral shake test, only for rollouts that lifted
    #: recorded protocol: the recorded wrist and fingers after the settle (:mod:`replay.protocol.recorded_protocol`)
    RECORDED = 5
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


def _part(cls, doc: str):
    return field(
        default_factory=cls, metadata={"unit": "-", "doc": f"{doc} (``{cls.__name__}``, its table below)", "part": True}
    )


@dataclass
class RolloutRecord:
    """One replayed recording (``<seq>.json``) with its parts; ``ablation`` is its contact-ablation run as a record
    (identity fields None, ``"ablation": true``)."""

    format_version: int | None = _f("-", "result file layout version (:data:`FORMAT_VERSION`)", FORMAT_VERSION)
    # identity and inputs
    object: str | None = _f("-", "object asset name (TACO/HUG: from the recording's metadata)")
    sequence: str | None = _f("-", "sequence name within the dataset")
    dataset: str | None = _f("-", "grab, taco or hug-bench")
    intent: str | None = _f("-", "what the person did, where the dataset names it (GRAB: lift, pass, pour, ...)")
    protocol: str | None = _f(
        "-",
        "lift (synthetic lift, hold, shake), recorded (the recorded motion) or hug-oracle "
        "(the HUG grasp oracle, replay.protocol.oracle_plan)",
    )
    hand_mjcf: str | None = _f("path", "hand MJCF replayed (side of the recording)")
    object_visual_mesh: str | None = _f("path", "object visual mesh (renderer)")
    support_height: float | None = _f("m, world z", "top of the table/support the object rests on")
    support: Any = _f("m, world", "'plane', or {table_top_xy: [xmin, ymin, xmax, ymax]}")
    # scene read-back
    config_hash: str | None = _f("-", "16 hex of SHA-256 of the config JSON; --resume matches it")
    crop: list | None = _f("frames", "[start, stop) of the recording replayed")
    start_frame: int | None = _f("frame", "first recorded frame of the approach (in the crop)")
    grasp_frame: int | None = _f("frame", "recorded grasp frame (in the crop)")
    input_flags: dict = _f(
        "-",
        "repaired, corrected or suspect input (replay.checks.recording_checks: untracked_frames, "
        "hand_side_from_landmarks, intent, object_track, object_rest, penetration, "
        "hand_shape, frames_missing, stream_offset, ...; most specific cause first, "
        "replay.checks.causes), empty if none",
        dict,
    )
    inputs: dict = _f(
        "-",
        "{path: {sha256, from, pinned, manifest}} of every input file, hashed when the rollout read it "
        "(replay.data.inputs); `pinned` only on the project's pin list's SHA-256, never the data's manifest; "
        "`pin_mismatch: true` at a pinned path with another digest",
        dict,
    )
    object_time_offset_s: float | None = _f(
        "s",
        "the object stream's time offset against the hand's the replay applied "
        "(config.object_time_offset_s, --object-time-offset; 0: as recorded)",
    )
    # what ran
    physics: list | None = _f("-", "every physics choice in effect, [{name, value, source, why}] (replay.sim.physics)")
    variant: dict = _f(
        "-",
        "the world's variant (ablation, friction, effort, mass, wrist offset; finger closure, solver options if set)",
        dict,
    )
    variant_readback: dict = _f("-", "the variant's values read back from the model", dict)
    run_warnings: list = _f(
        "-",
        "warnings raised while this recording ran (e.g. a finger drive's damping "
        "raised to its flutter bound), said once per study",
        list,
    )
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
    diagnosis: dict | None = _f(
        "-",
        "{class, figure} of replay.protocol.diagnosis (its CLASSES) for a rollout not lifted "
        "or shaken loose; null if it lifted and held through the shake",
    )
    # the contact ablation
    poses: str | None = _f("path", "poses npz, relative to the study JSON's folder")
    ablation: RolloutRecord | None = _f("-", "the contact-ablation run (same fields), null with --no-ablation")
    ablation_clean: bool | None = _f("-", "ablation: no hand-object contact and object moved < ablation_clean_mm")
    ablation_no_rise: bool | None = _f("-", "ablation: no hand-object contact and object rose < ablation_clean_mm")
    # parts
    scene: SceneReadback = _part(SceneReadback, "what the built scene read back")
    grasp: GraspMeasures = _part(GraspMeasures, "contacts, wrist tracking, object motion, friction budget, agreement")
    lift: LiftMeasures = _part(LiftMeasures, "the lift, hold, shake and release")
    timing: Timing = _part(Timing, "frames simulated and wall times")
    sampled: SampledVerdict = _part(SampledVerdict, "the sampled verdict (--samples N)")
    result: ProtocolResult | None = field(
        default=None,
        metadata={
            "unit": "-",
            "doc": "the protocol's own result, under its key: tracking (recorded), oracle (hug-oracle), refine",
            "part": True,
        },
    )
    extra: dict = _f("-", "keys this version does not declare", dict)

    @classmethod
    def from_dict(cls, doc: dict, source: str | Path | None = None, nested: bool = False) -> RolloutRecord:
        """A record from a rollout JSON object (older formats through :mod:`replay.results.convert`; unknown keys to
        ``extra``; ``nested``: not from a file, no version read). Raises ResultsFormatError (not an object, a version
        this grasp-replay does not read)."""
        if not isinstance(doc, dict):
            raise ResultsFormatError(source, None, "rollout record is not a JSON object")
        if not nested:
            doc = upgrade_rollout(doc, source)
        kw = {k: v for k, v in doc.items() if k in _CORE and k != "ablation"}
        kw.update({k: part.from_dict(doc.get(k)) for k, part in _PARTS.items()})
        kw["result"] = next(
            (t.from_dict(doc[k]) for k, t in RESULT_TYPES.items() if isinstance(doc.get(k), dict)), None
        )
        rec = cls(**kw, extra=split_keys(doc, {*_CORE, *_PARTS, *RESULT_TYPES})[1])
        ab = doc.get("ablation")
        if isinstance(ab, dict):
            rec.ablation = cls.from_dict(ab, source, nested=True)
        if nested:
            rec.format_version = None
        return rec

    @classmethod
    def from_metrics(cls, flat: dict) -> RolloutRecord:
        """A record from a rollout's flat metrics and the job's identity fields."""
        return cls.from_dict(dict(nest(flat), format_version=FORMAT_VERSION))

    def to_dict(self, nested: bool = False) -> dict:
        """The JSON object; each part and the protocol's result under its key (null: empty), ``extra`` merged in."""
        out = {n: getattr(self, n) for n in _CORE}
        if nested:
            out.pop("format_version")
        out["ablation"] = True if nested else (None if self.ablation is None else self.ablation.to_dict(nested=True))
        out.update({k: None if getattr(self, k).empty() else getattr(self, k).to_dict() for k in _PARTS})
        if self.result is not None:
            out[self.result.key] = self.result.to_dict()
        out.update(self.extra)
        return out

    def flat(self) -> dict:
        """Every field of the record and its parts by name (names are unique)."""
        out = {n: getattr(self, n) for n in _CORE}
        for part in (*(getattr(self, k) for k in _PARTS), self.result):
            if part is not None:
                out.update({n: getattr(part, n) for n in part.names()})
        return out


#: a rollout record's own fields (not its parts), and its parts by key
_CORE = tuple(f.name for f in dataclasses.fields(RolloutRecord) if not f.metadata.get("part") and f.name != "extra")
_PARTS = {p.key: p for p in PARTS}


#: Columns of a study's ``rollouts`` rows and of ``study.csv``, in order.
ROW_FIELDS = tuple(
    "sequence object intent outcome diagnosis stable lifted rise height_end_hold final_height slip_in_hand slip_mm "
    "slip_deg separation_mm shake_held shake_slip_mm contacts_at_lift contacts_force_at_lift wrist_err_median_mm "
    "wrist_err_peak_mm wrist_err_max_mm max_object_step_mm friction_budget_peak_kg creep_mm_s object_mass "
    "ablation_clean ablation_no_rise ablation_max_disp_mm ablation_lifted wall_s_total rtf input_flags "
    "diagnosis_figure json contact_agreement_precision contact_agreement_recall stuck_after_release".split()
)


#: Columns of a study's ``refine_rollouts`` rows (``--refine``).
REFINE_FIELDS = tuple(
    "sequence refine_outcome refine_found refine_wrist_mm refine_wrist_deg refine_finger_deg "
    "refine_ablation_max_disp_mm refine_ablation_clean refine_shake_held refine_rollouts refine_wall_s "
    "refine_neighbourhood_success refine_seed_agreement".split()
)


def study_row(r: RolloutRecord, json_rel: str) -> dict:
    """The study JSON's summary row of one rollout (:data:`ROW_FIELDS`)."""
    flat = r.flat()
    row = {k: flat.get(k) for k in ROW_FIELDS}
    row["diagnosis"] = (r.diagnosis or {}).get("class")
    row["diagnosis_figure"] = (r.diagnosis or {}).get("figure")
    row["json"] = json_rel
    row["ablation_max_disp_mm"] = r.ablation.grasp.max_object_disp_mm if r.ablation else None
    row["ablation_lifted"] = r.ablation.lifted if r.ablation else None
    return row


@dataclass
class StudyRecord(sf.SampledStudyFields):
    """A study (``study.json``): what ran, with what, and one summary row per recording."""

    format_version: int = _f("-", "result file layout version", FORMAT_VERSION)
    dataset: str | None = _f("-", "grab, taco or hug-bench")
    hand: dict = _f("-", "{model, shape, manosim_dir, mjcf}", dict)
    config: dict = _f("-", "every setting (replay.config.ReplayConfig), SI units", dict)
    config_hash: str | None = _f("-", "16 hex of SHA-256 of the config JSON")
    ablation: bool | None = _f("-", "the contact ablation ran")
    versions: dict = _f("-", "python and package versions", dict)
    sequences: list = _f("-", "every recording of the study, in order", list)
    counts: dict = _f("-", "outcome counts, medians and wall time (replay.study.summary.summarize)", dict)
    failed: dict = _f("-", "{sequence: one-line reason} of recordings that could not be replayed", dict)
    rollouts: list = _f("-", "one row per recording (ROW_FIELDS; full record in its `json`)", list)
    inputs: dict = _f("-", "{path: {sha256, from}} of every input file", dict)
    protocols: list = _f("-", "protocols run: lift and/or recorded", list)
    recorded_rollouts: list = _f(
        "-",
        "recorded protocol: one row per recording (replay.protocol.recorded_protocol.TRACK_FIELDS; "
        "full record in its `json`)",
        list,
    )
    refine_rollouts: list = _f("-", "--refine: one row per recording (REFINE_FIELDS; full record in its `json`)", list)
    oracle_rollouts: list = _f(
        "-",
        "--protocol hug-oracle: one row per recording (ROW_FIELDS; full record in its "
        "`json`, `<sequence>.hug-oracle.json`); counts in counts['hug-oracle']",
        list,
    )
    judge: dict | None = _f(
        "-",
        "what each row's `verdict` was read under: {physics (the study's named physics), condition (the sampled "
        "condition, null for single rollouts), default ({physics, condition, source}: replay.results.judge."
        "DEFAULT_JUDGE)} (replay.protocol.verdict)",
    )
    extra: dict = _f("-", "keys this version does not declare", dict)

    @classmethod
    def from_dict(cls, doc: dict, source: str | Path | None = None) -> StudyRecord:
        """Raises: ResultsFormatError (not an object, other version, no ``rollouts`` list)."""
        if not isinstance(doc, dict):
            raise ResultsFormatError(source, None, "study JSON is not an object")
        upgrade_study(doc, source)
        if not isinstance(doc.get("rollouts"), list):
            raise ResultsFormatError(source, "rollouts", "study JSON has no 'rollouts' list")
        known, extra = split_keys(doc, _STUDY_FIELDS)
        return cls(**known, extra=extra)

    @classmethod
    def view(cls, doc: dict) -> StudyRecord:
        """A study object (or part) this grasp-replay made, read with no version check and no field required."""
        known, extra = split_keys(doc, _STUDY_FIELDS)
        return cls(**{k: v for k, v in known.items() if v is not None}, extra=extra)

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in sf.sampled_last(dataclasses.fields(self)) if f.name != "extra"}
        out.update(self.extra)
        return out

    def rows_of(self, name: str) -> list:
        """The rows list ``name`` (a protocol's ``rows_field``): a field, else kept in ``extra``; [] where none."""
        rows = getattr(self, name) if name in _STUDY_FIELDS else self.extra.get(name)
        return rows if isinstance(rows, list) else []

    def set_rows(self, name: str, rows: list) -> None:
        if name in _STUDY_FIELDS:
            setattr(self, name, rows)
        else:
            self.extra[name] = rows


_STUDY_FIELDS = frozenset(f.name for f in dataclasses.fields(StudyRecord)) - {"extra"}
