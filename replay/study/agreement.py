"""Agreement between studies: does a recording's outcome survive a change of model?

A grasp that lifts under one hand model, solver or setting and drops under another is
a fact about the models, not about the grasp: how many outcomes flip measures how
marginal the grasps are. :func:`agreement` reads two or more study JSONs (any datasets,
any configs) and, per recording present in all of them, gives each study's outcome and
rise; for every pair of studies the counts lifted in both / only in A / only in B /
neither.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

from replay.errors import UsageError
from replay.results.files import read_study

#: format of the agreement JSON (``scripts/agreement.py``)
AGREEMENT_FORMAT = 1


def _label(path: Path, study) -> str:
    cfg = study.config or {}
    hand = study.hand or {}
    bits = [study.dataset or "?", str(hand.get("model") or cfg.get("hand") or "?"),
            str(hand.get("shape") or cfg.get("hand_variant") or "?"), str(cfg.get("solver_backend", "mujoco")),
            f"effort {cfg.get('effort_limit')}"]
    return f"{path.parent.name}/{path.name} ({', '.join(bits)})"


def agreement(paths: list[str | Path], labels: list[str] | None = None) -> dict:
    """The agreement table of the studies at ``paths``.

    Args:
        paths: two or more study JSONs (``scripts/run_study.py --out``).
        labels: one name per study for the tables (default: folder/file and the hand,
            shape, solver and effort limit of its config).

    Returns:
        ``{"format", "studies": [{label, path, config_hash}], "recordings": [{sequence,
        outcomes: [..], rises_mm: [..]}], "pairs": [{a, b, both, only_a, only_b, neither,
        flipped: [sequence, ...]}], "common": n, "missing": {label: [sequence, ...]}}``;
        only recordings present in every study are compared (the others are listed in
        ``missing``). An outcome is ``lifted`` or what the study said (``not_lifted``,
        ``stuck``, ``unstable``).

    Raises:
        UsageError: fewer than two studies, or labels of another count.
        ResultsFormatError: a study that cannot be read.
    """
    if len(paths) < 2:
        raise UsageError("--studies", "agreement needs at least two studies (--studies A.json B.json)")
    studies = [read_study(p) for p in paths]
    labels = labels or [_label(Path(p), s) for p, s in zip(paths, studies)]
    if len(labels) != len(studies):
        raise UsageError("--labels", f"{len(labels)} labels for {len(studies)} studies")
    rows = [{r["sequence"]: r for r in s.rollouts} for s in studies]
    common = sorted(set.intersection(*(set(r) for r in rows)))
    recs = [{"sequence": q, "outcomes": [r[q].get("outcome") for r in rows],
             "rises_mm": [None if r[q].get("rise") is None else round(1000.0 * float(r[q]["rise"]), 2) for r in rows]}
            for q in common]
    pairs = []
    for i, j in combinations(range(len(studies)), 2):
        lift = lambda k, q: rows[k][q].get("outcome") == "lifted"  # noqa: E731
        both = [q for q in common if lift(i, q) and lift(j, q)]
        only_a = [q for q in common if lift(i, q) and not lift(j, q)]
        only_b = [q for q in common if lift(j, q) and not lift(i, q)]
        pairs.append({"a": labels[i], "b": labels[j], "both": len(both), "only_a": len(only_a),
                      "only_b": len(only_b), "neither": len(common) - len(both) - len(only_a) - len(only_b),
                      "flipped": only_a + only_b, "only_a_list": only_a, "only_b_list": only_b})
    missing = {lab: sorted(set(r) - set(common)) for lab, r in zip(labels, rows) if set(r) - set(common)}
    return {"format": AGREEMENT_FORMAT, "common": len(common), "missing": missing,
            "studies": [{"label": lab, "path": str(p), "config_hash": s.config_hash}
                        for lab, p, s in zip(labels, paths, studies)],
            "recordings": recs, "pairs": pairs}


def markdown(table: dict) -> str:
    """The pair counts as a Markdown table (what the README shows)."""
    lines = ["| A | B | lifted in both | only in A | only in B | neither | flipped |", "|---|---|---|---|---|---|---|"]
    for p in table["pairs"]:
        lines.append(f"| {p['a']} | {p['b']} | {p['both']} | {p['only_a']} | {p['only_b']} | {p['neither']} | "
                     f"{', '.join(q.removesuffix('_lift') for q in p['flipped']) or '-'} |")
    return "\n".join(lines)
