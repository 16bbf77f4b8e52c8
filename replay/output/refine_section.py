"""The report section of ``run_study.py --refine`` (:mod:`replay.protocol.refine`): per recording
the replay's outcome and diagnosis as recorded, next to the smallest correction that lifts it.

:func:`refine_section_html` reads the study's ``refine_rollouts`` rows and ``counts["refine"]``;
an empty string for a study without them.
"""

from __future__ import annotations

import html

from replay.results.outcomes import words

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


def _fmt(v, spec: str = ".1f") -> str:
    if v is None:
        return "-"
    return format(v, spec) if isinstance(v, float) else str(v)


def refine_section_html(study) -> str:
    """HTML of the refine section of a :class:`replay.results.records.StudyRecord` (module doc)."""
    rows = list(study.refine_rollouts or [])
    if not rows:
        return ""
    lift = {str(r.get("sequence")): r for r in study.rollouts or []}
    body = []
    for r in rows:
        base = lift.get(str(r.get("sequence")), {})
        fig = base.get("diagnosis_figure") or {}
        diag = (
            (f"{base.get('diagnosis')} (" + ", ".join(f"{k} {_fmt(v)}" for k, v in fig.items()) + ")")
            if base.get("diagnosis") and fig
            else (base.get("diagnosis") or "-")
        )
        cells = [
            r.get("sequence"),
            words(base.get("outcome")),
            diag,
            words(r.get("refine_outcome")),
            _fmt(r.get("refine_wrist_mm")),
            _fmt(r.get("refine_wrist_deg")),
            _fmt(r.get("refine_finger_deg")),
            _fmt(r.get("refine_ablation_max_disp_mm"), ".2f"),
            _fmt(r.get("refine_shake_held")),
            _fmt(r.get("refine_neighbourhood_success"), ".2f"),
            _fmt(r.get("refine_seed_agreement")),
            _fmt(r.get("refine_rollouts")),
            _fmt(r.get("refine_wall_s"), ".0f"),
        ]
        body.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    c = (study.counts or {}).get("refine") or {}
    summary = (
        f"lifted after refining {c.get('lifted')} of {c.get('refined')} ({c.get('held')} held through the "
        f"shake; neighbourhood >= 80 % {c.get('neighbourhood_ok')}; seeds agree {c.get('seed_agreement')}); median correction of those "
        f"{_fmt(c.get('median_wrist_mm'))} mm, {_fmt(c.get('median_wrist_deg'))} deg, fingers "
        f"{_fmt(c.get('median_finger_deg'))} deg; refined ablations clean {c.get('ablation_clean')} "
        f"(largest {_fmt(c.get('ablation_max_disp_mm'), '.2f')} mm); {c.get('rollouts')} rollouts, "
        f"{_fmt(c.get('wall_s'), '.0f')} s"
    )
    return (
        "<h2>Smallest correction that holds</h2><p>Wrist offset and rotation at the grasp and extra finger "
        "closure (bounds 10 mm, 10 deg, 15 deg per finger on each of its joints) that holds (lift, hold, shake, "
        "release) with its neighbourhood, found by a seeded CEM search (replay.protocol.refine), each "
        f"with its own contact ablation. {html.escape(summary)}</p><table><tr>"
        + "".join(f"<th>{h}</th>" for h in _HEAD)
        + "</tr>"
        + "".join(body)
        + "</table>"
    )
