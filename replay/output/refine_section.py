"""The report section of ``run_study.py --refine`` (its ``refine_rollouts`` and counts; ``""`` without): per
recording the outcome and diagnosis as recorded, next to the smallest correction that lifts it."""

from __future__ import annotations

import html
from dataclasses import dataclass

from replay.output.oracle_section import number, table_html
from replay.protocol.protocols.refine import Refine
from replay.results.json_record import JsonRecord
from replay.results.outcomes import words
from replay.results.study_rows import RefineRow, StudyRow, study_rows

_HEAD = (
    "recording",
    "as recorded",
    "diagnosis",
    "refined",
    "wrist mm",
    "wrist deg",
    "fingers deg",
    "ablation mm",
    "shake held",
    "neighbourhood",
    "seeds agree",
    "rollouts",
    "s",
)


@dataclass(frozen=True)
class RefineCounts(JsonRecord):
    """A study's refine counts (:meth:`replay.protocol.protocols.refine.Refine.counts`): mm, deg, s."""

    refined: int | None = None
    lifted: int | None = None
    held: int | None = None
    neighbourhood_ok: int | None = None
    seed_agreement: int | None = None
    median_wrist_mm: float | None = None
    median_wrist_deg: float | None = None
    median_finger_deg: float | None = None
    ablation_clean: int | None = None
    ablation_max_disp_mm: float | None = None
    rollouts: int | None = None
    wall_s: float | None = None


def refine_section_html(study) -> str:
    """HTML of the refine section of a :class:`replay.results.records.StudyRecord` (module doc)."""
    rows = RefineRow.many(study.refine_rollouts)
    if not rows:
        return ""
    lift = {r.name: r for r in study_rows(study.rollouts)}
    body = []
    for r in rows:
        base = lift.get(str(r.sequence)) or StudyRow()
        fig = base.diagnosis_figure or {}
        diag = (
            (f"{base.diagnosis} (" + ", ".join(f"{k} {number(v)}" for k, v in fig.items()) + ")")
            if base.diagnosis and fig
            else (base.diagnosis or "-")
        )
        cells = [
            r.sequence,
            words(base.outcome),
            diag,
            words(r.refine_outcome),
            number(r.refine_wrist_mm),
            number(r.refine_wrist_deg),
            number(r.refine_finger_deg),
            number(r.refine_ablation_max_disp_mm, ".2f"),
            number(r.refine_shake_held),
            number(r.refine_neighbourhood_success, ".2f"),
            number(r.refine_seed_agreement),
            number(r.refine_rollouts),
            number(r.refine_wall_s, ".0f"),
        ]
        body.append(cells)
    c = RefineCounts.from_dict((study.counts or {}).get(Refine.name))
    summary = (
        f"lifted after refining {c.lifted} of {c.refined} ({c.held} held through the shake; neighbourhood "
        f">= 80 % {c.neighbourhood_ok}; seeds agree {c.seed_agreement}); median correction of those "
        f"{number(c.median_wrist_mm)} mm, {number(c.median_wrist_deg)} deg, fingers "
        f"{number(c.median_finger_deg)} deg; refined ablations clean {c.ablation_clean} "
        f"(largest {number(c.ablation_max_disp_mm, '.2f')} mm); {c.rollouts} rollouts, "
        f"{number(c.wall_s, '.0f')} s"
    )
    return (
        "<h2>Smallest correction that holds</h2><p>Wrist offset and rotation at the grasp and extra finger "
        "closure (bounds 10 mm, 10 deg, 15 deg per finger on each of its joints) that holds (lift, hold, shake, "
        "release) with its neighbourhood, found by a seeded CEM search (replay.protocol.refine), each "
        f"with its own contact ablation. {html.escape(summary)}</p>" + table_html(_HEAD, body)
    )
