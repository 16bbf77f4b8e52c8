"""The report section of ``run_study.py --protocol hug-oracle`` (its ``oracle_rollouts`` and counts; ``""`` without):
per recording the oracle's outcome, diagnosis, rise and contact ablation, beside the lift protocol's outcome."""

from __future__ import annotations

import html

from replay.protocol.intent_counts import group_words, intent_groups
from replay.protocol.protocols.hug_oracle import HugOracle
from replay.results.outcomes import words
from replay.results.study_counts import Counts, GroupCount
from replay.results.study_rows import study_rows

_HEAD = ("recording", "hug-oracle", "diagnosis", "rise mm", "contacts at lift", "ablation mm", "lift protocol")


def number(v, spec: str = ".1f", *, scale: float = 1.0) -> str:
    """A report cell: ``-`` for None, a float times ``scale`` as ``spec``, anything else as ``str``."""
    if v is None:
        return "-"
    return format(v * scale, spec) if isinstance(v, float) else str(v)


def table_html(head, rows) -> str:
    """A ``<table>``: ``head`` HTML, then ``rows`` of cells (escaped)."""
    cells = ("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(cells) + "</table>"


def oracle_section_html(study) -> str:
    """HTML of the hug-oracle section of a :class:`replay.results.records.StudyRecord` (module doc)."""
    rows = study_rows(study.oracle_rollouts)
    if not rows:
        return ""
    lift = {r.name: r for r in study_rows(study.rollouts)}
    body = [
        [
            r.sequence,
            words(r.outcome),
            r.diagnosis or "-",
            number(r.rise, scale=1000.0),
            number(r.contacts_force_at_lift),
            number(r.ablation_max_disp_mm, ".2f"),
            words(lift[r.name].outcome if r.name in lift else "-"),
        ]
        for r in rows
    ]
    c = Counts.from_dict(study.counts).of(HugOracle.name) or Counts.from_dict(None)
    groups = {k: GroupCount.of(g) for k, g in intent_groups(c.by_intent or {}).items()}  # lifts first (issue 49)
    lifted = (
        "; ".join(
            f"{group_words(k, g.rollouts)}: lifted off the table {g.lifted} of {g.rollouts}, unstable {g.unstable}"
            for k, g in groups.items()
        )
        or f"lifted off the table {c.lifted} of {c.rollouts}, unstable {c.unstable}"
    )
    summary = (
        f"{lifted}; "
        f"contact ablation: {c.ablation_no_rise} of {c.ablation_run} with nothing rising "
        f"(< 1 mm), largest displacement {number(c.ablation_max_disp_mm, '.2f')} mm"
    )
    return (
        "<h2>The HUG authors' grasp oracle (hug-oracle)</h2><p>Start at the recording's grasp with the wrist "
        "3 cm back along its own +x and +y, fingers flat, thumb base pre-bent 1.0 rad; close onto the grasp "
        "(plus the extra flexion), raise the wrist 0.5 m; success: the object no longer touches the table "
        "(HUG, arXiv:2606.17054, app. E; every element a config field, oracle_*). "
        f"{html.escape(summary)}</p>" + table_html(_HEAD, body)
    )
