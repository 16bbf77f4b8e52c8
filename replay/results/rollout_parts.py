"""The parts of a rollout record, each the JSON object under its ``key``; undeclared keys kept in ``extra``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar


def described(unit: str, doc: str, default: Any = None, *, key: str = "doc"):
    """A field with ``unit`` and ``doc`` (under ``key``) metadata; a class as ``default`` makes a fresh one each."""
    if isinstance(default, type):
        return field(default_factory=default, metadata={"unit": unit, key: doc})
    return field(default=default, metadata={"unit": unit, key: doc})


_f = described


@dataclass
class Part:
    """A sub-record under JSON key ``key``; undeclared keys in ``extra``."""

    key: ClassVar[str]

    extra: dict = field(default_factory=dict, repr=False, metadata={"internal": True})

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if not f.metadata.get("internal"))

    @classmethod
    def from_dict(cls, doc: dict | None):
        """The part of a JSON object (its keys; unknown ones to ``extra``); an empty part for None."""
        known, extra = split_keys(doc or {}, cls.names())
        return cls(**known, extra=extra)

    def to_dict(self) -> dict:
        return {**{n: getattr(self, n) for n in self.names()}, **self.extra}

    def empty(self) -> bool:
        """No field holds a value (None, empty dict or list): written as null."""
        return not self.extra and all(_empty(getattr(self, n)) for n in self.names())


def split_keys(doc: dict, names) -> tuple[dict, dict]:
    """``(known, extra)``: ``doc``'s items whose key is in ``names``, and the rest."""
    names = set(names)
    return {k: v for k, v in doc.items() if k in names}, {k: v for k, v in doc.items() if k not in names}


def _empty(v) -> bool:
    return v is None or (isinstance(v, (dict, list)) and not v)


#: every protocol's own result type by its JSON key (:func:`register_result`)
RESULT_TYPES: dict[str, type] = {}


@dataclass
class ProtocolResult(Part):
    """A protocol's own results (a rollout holds at most one, under its ``key``; :func:`register_result`)."""


def register_result(cls: type[ProtocolResult]) -> type[ProtocolResult]:
    """Make rollout records read ``cls`` under its ``key``; ValueError if another type holds it."""
    have = RESULT_TYPES.get(cls.key)
    if have is not None and have is not cls:
        raise ValueError(f"result key {cls.key!r} is another type's already ({have.__name__})")
    RESULT_TYPES[cls.key] = cls
    return cls


@dataclass
class SceneReadback(Part):
    """What the built scene read back (shared by the batch's worlds; ``object_mass`` a variant's where it sets one)."""

    key: ClassVar[str] = "scene"

    object_mass: float | None = _f("kg", "object mass simulated")
    hand_mass: float | None = _f("kg", "hand mass simulated")
    contact_capacity: int | None = _f("contacts", "contact buffer size")
    resting_contacts: int | None = _f("contacts", "object-support contacts at rest")
    probe_contacts: list | None = _f("contacts", "contact counts of the capacity probe")
    readback: dict = _f(
        "-",
        "drive gains and limits read back from the built model (finger_forcerange_per_joint N·m, mano_joint_1..15), "
        "and object_mass_model: the rule the object was weighed by (replay.sim.made_mass)",
        dict,
    )
    flutter_min_margin: float | None = _f("-", "smallest finger-drive damping margin d_total/d_crit")
    flutter: list = _f("-", "per finger joint damping check (kp, damping, critical damping)", list)
    finger_damping: list = _f("N·m·s/rad", "distinct finger joint damping values", list)
    import_warnings: list = _f("-", "warnings of the hand import (said once per study)", list)
    engine: str | None = _f(
        "-",
        "direct (MuJoCo), warp (mujoco-warp), newton (reference) or steel (SolverSteel; its rollouts add "
        "solver_backend and steel_rows)",
    )


@dataclass
class GraspMeasures(Part):
    """What one world's trace says of the grasp (:mod:`replay.protocol.measures`,
    :mod:`replay.protocol.contact_agreement`)."""

    key: ClassVar[str] = "grasp"

    contacts_at_lift: int | None = _f("contacts", "hand-object contacts at lift start")
    contacts_force_at_lift: int | None = _f("contacts", "of them carrying >= contact_force_min N")
    peak_contacts: int | None = _f("contacts", "largest contact count of the world (all pairs)")
    max_hand_object_contacts: int | None = _f("contacts", "largest hand-object contact count")
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
    friction_budget_at_lift_kg: float | None = _f("kg", "sum(mu N)/g of hand-object contacts at lift start")
    friction_budget_peak_kg: float | None = _f("kg", "largest sum(mu N)/g during lift and hold")
    friction_budget_hold_kg: float | None = _f("kg", "median sum(mu N)/g during the hold")
    creep_mm_s: float | None = _f("mm/s, wrist frame", "object drift rate in the hand during the hold (lifted only)")
    slip_onset_frame: int | None = _f("frame", "first frame the object moved diag_slip_onset_mm in the hand")
    pushed_mm: float | None = _f("mm, world", "largest collision-vertex displacement before the lift")
    fingertip_distance_mm: float | None = _f("mm", "fingertip-object signed distance at lift start (< 0: inside)")
    finger_actuator_force_max: float | None = _f("N·m", "largest finger actuator torque")
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


@dataclass
class LiftMeasures(Part):
    """The lift, hold, shake and release of one world (:mod:`replay.protocol.measures`,
    :mod:`replay.protocol.release`)."""

    key: ClassVar[str] = "lift"

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
        "how far the object ended from where the hand held it at lift start (end of hold), held or lost; null where "
        "it never left the table (peak rise under diag_never_rose_mm)",
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
    pad_compression: dict | None = _f(
        "mm, deg",
        "where the physics choice pad_compression > 0: the fingers closed to a preload depth at the grasp frame, "
        "per finger (replay.protocol.pad_compression)",
    )


@dataclass
class Timing(Part):
    """Frames simulated and wall times."""

    key: ClassVar[str] = "timing"

    frames: int | None = _f("frames", "control frames simulated")
    frames_planned: int | None = _f("frames", "control frames of the protocol")
    sim_s: float | None = _f("s", "simulated time")
    wall_s: float | None = _f("s", "wall time of the batch (both worlds) stepping")
    build_s: float | None = _f("s", "wall time of building the scene")
    batch_worlds: int | None = _f("worlds", "worlds stepped in the batch")
    rtf: float | None = _f("-", "sim_s / wall_s")
    kinematics_s: float | None = _f("s", "wall time of loading and fitting the hand (IK)")
    wall_s_total: float | None = _f("s", "wall time of this recording's job (kinematics, both runs, writing)")
    ablation_rerun_s: float | None = _f("s", "wall time of the last --ablation-only rerun")
