"""Does the lift verdict discriminate? Per condition and corruption: the mean P(lift) of the real
recordings and of their corrupted copies, the AUC of P(lift) separating real from corrupted (the
Mann-Whitney U statistic over all real x corrupted pairs, ties counted half) and the ratio
success(corrupted) / success(real), beside HUG's figure where the paper gives one
(:mod:`replay.study.corruptions`). The study's ``discrimination`` list (docs/results.md).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from replay.study.corruptions import BY_NAME as CORRUPTION_BY_NAME


def auc(real, corrupted) -> float | None:
    """P(a real recording's P(lift) > a corrupted one's) + half P(equal), over all pairs (the
    Mann-Whitney U of ``real`` over ``n_real x n_corrupted``); None when either is empty."""
    a, b = np.asarray(real, float), np.asarray(corrupted, float)
    if a.size == 0 or b.size == 0:
        return None
    r = rankdata(np.concatenate([a, b]))  # average ranks: ties count half
    u = float(r[: a.size].sum()) - a.size * (a.size + 1) / 2.0
    return u / (a.size * b.size)


def discrimination(sampled: list, protocol: str = "lift") -> list[dict]:
    """``[{protocol, condition, corruption, p_real, p_corrupted, auc, ratio, n_recordings, reference}]``
    over the recordings' sampled verdicts (:class:`~replay.results.sampled_fields.SampledVerdict`) that have both
    ``p_lift`` and ``p_lift_corrupted`` for the pair (``ratio``: None where no real recording lifted;
    ``reference``: ``{ratio, source}`` or None)."""
    out = []
    rows = [(s.p_lift, s.p_lift_corrupted) for s in sampled if s.p_lift and s.p_lift_corrupted]
    corr = list(dict.fromkeys(c for _, pc in rows for c in pc))
    conds = list(dict.fromkeys(c for pl, _ in rows for c in pl))
    for cond in conds:
        for c in corr:
            pairs = [(pl[cond]["p"], pc[c][cond]["p"]) for pl, pc in rows if cond in pl and cond in pc.get(c, {})]
            if not pairs:
                continue
            real, bad = np.array(pairs, float).T
            p_real, p_bad = float(real.mean()), float(bad.mean())
            ref = CORRUPTION_BY_NAME.get(c)
            out.append(
                {
                    "protocol": protocol,
                    "condition": cond,
                    "corruption": c,
                    "p_real": p_real,
                    "p_corrupted": p_bad,
                    "auc": auc(real, bad),
                    "ratio": p_bad / p_real if p_real > 0 else None,
                    "n_recordings": len(pairs),
                    "reference": {"ratio": ref.reference, "source": ref.source}
                    if ref is not None and ref.reference is not None
                    else None,
                }
            )
    return out
