"""Each built-in protocol's own results (:class:`~replay.results.rollout_parts.ProtocolResult` sub-records)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from replay.results.rollout_parts import ProtocolResult, register_result
from replay.results.rollout_parts import described as _f


@register_result
@dataclass
class TrackResult(ProtocolResult):
    """The recorded protocol (:mod:`replay.protocol.recorded_protocol`): the simulated object against the recorded
    track."""

    key: ClassVar[str] = "tracking"

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
    track_tolerance: dict = _f("-", "{pos_mm, rot_deg}: the tolerance of track_within", dict)
    recorded_max_s: float | None = _f(
        "s", "at most this long after the lift onset was replayed (null: to the end of the manipulation)"
    )


@register_result
@dataclass
class OracleResult(ProtocolResult):
    """The hug-oracle protocol's success test (:mod:`replay.protocol.oracle_success`) and what the rollout ran with."""

    key: ClassVar[str] = "oracle"

    success_test: str | None = _f("-", "off_table or lift (oracle_success): the test that decided `lifted`")
    off_table: bool | None = _f(
        "-", "no object-support contact at any frame of the hold and the object above its lift-start height"
    )
    hold_frames: int | None = _f("frames", "control frames of the hold")
    support_contact_frames: int | None = _f("frames", "frames of the hold the object touched the support")
    end_rise_mm: float | None = _f("mm, world z", "object rise from the lift start to the end of the hold")
    lift_test_lifted: bool | None = _f("-", "the lift protocol's test (rise and clearance) on the same run")
    effort_limit: float | None = _f("N·m", "finger drive force range the rollout ran with")
    hand_object_contact: str | None = _f("-", "manosim (contact as authored) or compiled (our mixed pairs)")
    dt: float | None = _f("s", "physics step the rollout ran with")


@register_result
@dataclass
class RefineResult(ProtocolResult):
    """The refine search (:mod:`replay.protocol.refine`, ``<seq>.refine.json``): the smallest correction that
    lifts; the record's other fields are the refined run (with the shake), ``ablation`` its contact ablation."""

    key: ClassVar[str] = "refine"

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
