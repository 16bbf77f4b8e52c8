"""Does the lift verdict discriminate? Per condition and corruption: mean P(lift) real and corrupted, the AUC of
P(lift) separating them with its 95 % interval, and the ratio corrupted / real beside HUG's."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from replay.study.corruptions import corruption_named, corruption_names

#: an AUC over fewer recordings than this is said to mean little
MIN_RECORDINGS = 10
#: the AUC's interval: a seeded percentile bootstrap over recordings (Efron and Tibshirani, An Introduction to the
#: Bootstrap, 1993, ch. 13), each recording's real and corrupted p_lift resampled together
INTERVAL_METHOD = "bootstrap over recordings, percentile 95 %, 2000 resamples, seed 0"
BOOT_RESAMPLES, BOOT_SEED, BOOT_LEVEL = 2000, 0, 0.95


def auc(real, corrupted) -> float | None:
    """P(a real recording's P(lift) > a corrupted one's) + half P(equal) (Mann-Whitney U / (n_real n_corrupted));
    None when either is empty."""
    a, b = np.asarray(real, float), np.asarray(corrupted, float)
    if a.size == 0 or b.size == 0:
        return None
    r = rankdata(np.concatenate([a, b]))  # average ranks: ties count half
    u = float(r[: a.size].sum()) - a.size * (a.size + 1) / 2.0
    return u / (a.size * b.size)


def auc_interval(
    real, corrupted, resamples: int = BOOT_RESAMPLES, *, seed: int = BOOT_SEED
) -> tuple[float, float] | None:
    """The 95 % interval of :func:`auc` (:data:`INTERVAL_METHOD`); ``real[i]``, ``corrupted[i]``: recording ``i``'s;
    None for no recording."""
    a, b = np.asarray(real, float), np.asarray(corrupted, float)
    if a.size == 0 or a.size != b.size:
        return None
    n = a.size
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    r = rankdata(np.concatenate([a[idx], b[idx]], axis=1), axis=1)  # each resample's average ranks: ties half
    boot = (r[:, :n].sum(axis=1) - n * (n + 1) / 2.0) / (n * n)
    tail = (1.0 - BOOT_LEVEL) / 2.0 * 100.0
    lo, hi = np.percentile(boot, [tail, 100.0 - tail])
    return float(lo), float(hi)


def discrimination(sampled: list, protocol: str = "lift") -> list[dict]:
    """``[{protocol, condition, corruption, p_real, p_corrupted, auc, auc_lo, auc_hi, auc_interval, ratio,
    n_recordings, reference}]`` over the sampled verdicts with both ``p_lift`` and ``p_lift_corrupted`` (``ratio``:
    None where no real recording lifted; ``reference``: ``{ratio, source}`` or None)."""
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
            ref = corruption_named(c) if c in corruption_names() else None
            ci = auc_interval(real, bad)
            out.append(
                {
                    "protocol": protocol,
                    "condition": cond,
                    "corruption": c,
                    "p_real": p_real,
                    "p_corrupted": p_bad,
                    "auc": auc(real, bad),
                    "auc_lo": None if ci is None else ci[0],
                    "auc_hi": None if ci is None else ci[1],
                    "auc_interval": INTERVAL_METHOD,
                    "ratio": p_bad / p_real if p_real > 0 else None,
                    "n_recordings": len(pairs),
                    "reference": {"ratio": ref.reference, "source": ref.source}
                    if ref is not None and ref.reference is not None
                    else None,
                }
            )
    return out


def auc_text(d) -> str:
    """``AUC 0.64 [0.50, 0.78] over 30 recordings`` (a caveat below :data:`MIN_RECORDINGS`); ``AUC n/a`` without."""
    if d.auc is None:
        return "AUC n/a"
    ci = "" if d.auc_lo is None or d.auc_hi is None else f" [{d.auc_lo:.2f}, {d.auc_hi:.2f}]"
    n = d.n_recordings
    over = "" if n is None else f" over {n} recording" + ("" if n == 1 else "s")
    little = (
        f" (fewer than {MIN_RECORDINGS} recordings: it means little)" if n is not None and n < MIN_RECORDINGS else ""
    )
    return f"AUC {d.auc:.2f}{ci}{over}{little}"
