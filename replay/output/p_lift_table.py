"""The README's first table: what a user may trust of a study's verdicts (issue #46), from a study JSON
run with ``--samples N`` (and ``--corruptions``) or its small summary
(:func:`replay.output.results_summary.study_summary`, which keeps ``counts``, ``sampling`` and
``discrimination``).

One row per protocol and condition (``sampling.conditions``, in order; the hug-oracle's where the study
ran it, ``counts["hug-oracle"]["p_lift"]``): how many recordings are a robust lift (the
95 % interval of p_lift at or above 0.5), uncertain, a robust failure (at or below), of how many; then,
where the study has them, its discrimination figures, one column per corruption: p_lift real ->
corrupted (means over the recordings), the AUC of p_lift separating them and the ratio
success(corrupted) / success(real) with the published ratio in brackets.
"""

from __future__ import annotations

#: the classes in column order, as a reader is told them (replay.output.p_lift_section.CLASS_WORDS)
CLASSES = (("robust_lift", "robust lift"), ("uncertain", "uncertain"), ("robust_failure", "robust failure"))


def _f(x, spec: str = ".2f") -> str:
    return "-" if x is None else format(float(x), spec)


def _conditions(study: dict, counts: dict) -> list[str]:
    names = [str(c.get("name")) for c in ((study.get("sampling") or {}).get("conditions") or []) if isinstance(c, dict)]
    return names + [c for c in counts if c not in names]


def p_lift_markdown(study: dict) -> str:
    """The table (module doc) as Markdown: one row per protocol (lift, then hug-oracle where the study ran
    it) and condition.

    Raises:
        ValueError: the study has no ``counts["p_lift"]`` for either protocol (run without ``--samples``).
    """
    c = study.get("counts") or {}
    by_proto = {
        p: n for p, n in (("lift", c.get("p_lift")), ("hug-oracle", (c.get("hug-oracle") or {}).get("p_lift"))) if n
    }
    if not by_proto:
        raise ValueError("the study has no p_lift counts (run_study.py --samples N)")
    s = study.get("sampling") or {}
    disc = study.get("discrimination") or []
    corruptions = list(dict.fromkeys(str(d.get("corruption")) for d in disc))
    head = ["protocol", "condition", *(w for _, w in CLASSES), "of"]
    head += [f"`{x}`: p_lift real -> corrupted, AUC, ratio (published)" for x in corruptions]
    rows = []
    for proto, counts in by_proto.items():
        for cond in _conditions(study, counts):
            if cond not in counts:
                continue
            n = counts[cond] or {}
            row = [
                proto,
                f"`{cond}`",
                *(str(n.get(k, 0)) for k, _ in CLASSES),
                str(sum(int(n.get(k, 0)) for k, _ in CLASSES)),
            ]
            for x in corruptions:
                d = next(
                    (
                        e
                        for e in disc
                        if e.get("protocol", "lift") == proto
                        and e.get("condition") == cond
                        and str(e.get("corruption")) == x
                    ),
                    None,
                )
                ref = (d or {}).get("reference") or {}
                row.append(
                    "-"
                    if d is None
                    else f"{_f(d.get('p_real'))} -> {_f(d.get('p_corrupted'))}, AUC "
                    f"{_f(d.get('auc'))}, ratio {_f(d.get('ratio'))}" + (f" ({_f(ref.get('ratio'))})" if ref else "")
                )
            rows.append(row)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]
    size = f"{s.get('samples')} samples per recording and condition, seed {s.get('seed')}" if s.get("samples") else ""
    refs = sorted({str((d.get("reference") or {}).get("source")) for d in disc if d.get("reference")})
    notes = [
        f"classes from the 95 % interval of p_lift ({(s.get('classes') or {}).get('interval', 'wilson95')}) "
        f"against {(s.get('classes') or {}).get('threshold', 0.5)}"
        + (f"; {size}" if size else "")
        + "; lift recordings only (other intents are counted apart)"
    ]
    if refs:
        notes.append("published ratio: " + "; ".join(refs))
    return "\n".join(lines) + "\n\n" + "".join(f"- {n}\n" for n in notes)
