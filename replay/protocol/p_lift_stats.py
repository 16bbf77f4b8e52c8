"""P(lift) of a recording per condition: fraction lifted, 95 % Wilson interval, class and driver (docs/results.md)."""

from __future__ import annotations

import numpy as np
from scipy.stats import binomtest

#: the class threshold on P(lift): robust lift when the interval lies above it, robust failure when below
CLASS_THRESHOLD = 0.5
#: confidence of the interval (Wilson score, scipy.stats.binomtest(...).proportion_ci(method="wilson"))
CONFIDENCE = 0.95
#: verdict classes (headline order)
CLASSES = ("robust_lift", "uncertain", "robust_failure")
#: a driver needs at least this many samples in each half
DRIVER_MIN_HALF = 2


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of ``k`` successes in ``n`` trials (n >= 1)."""
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return float(ci.low), float(ci.high)


def verdict_class(lo: float, hi: float) -> str:
    """``robust_lift`` (lo >= :data:`CLASS_THRESHOLD`), ``robust_failure`` (hi <= it) or ``uncertain``."""
    return CLASSES[0] if lo >= CLASS_THRESHOLD else CLASSES[2] if hi <= CLASS_THRESHOLD else CLASSES[1]


def driver(lifted, keys: dict) -> dict | None:
    """``{variable, effect = high - low, low, high}`` of the variable whose halves (about the median; ties join the
    lower if a half would have under :data:`DRIVER_MIN_HALF`) differ most in lift rate; None: no effect."""
    y = np.asarray(lifted, float)
    best = None
    for name, x in keys.items():
        x = np.asarray(x, float)
        med = float(np.median(x))
        lo_m, hi_m = x < med, x > med
        if lo_m.sum() < DRIVER_MIN_HALF or hi_m.sum() < DRIVER_MIN_HALF:  # ties at the median (a choice of two)
            lo_m, hi_m = x <= med, x > med
            if lo_m.sum() < DRIVER_MIN_HALF or hi_m.sum() < DRIVER_MIN_HALF:
                continue
        low, high = float(y[lo_m].mean()), float(y[hi_m].mean())
        if best is None or abs(high - low) > abs(best["effect"]):
            best = {"variable": name, "effect": high - low, "low": low, "high": high}
    return best if best is not None and best["effect"] != 0 else None


def p_lift_record(lifted, keys: dict) -> dict:
    """``{p, lo, hi, n, k, class, driver}`` of samples' ``lifted`` (n,) and their driver keys."""
    lifted = [bool(x) for x in lifted]
    n, k = len(lifted), sum(lifted)
    lo, hi = wilson(k, n)
    return {
        "p": k / n,
        "lo": lo,
        "hi": hi,
        "n": n,
        "k": k,
        "class": verdict_class(lo, hi),
        "driver": driver(lifted, keys),
    }


def p_lift_counts(p_lifts: list[dict | None]) -> dict | None:
    """``{condition: {robust_lift, uncertain, robust_failure}}`` over the recordings' ``p_lift``; None: none has one."""
    recs = [p for p in p_lifts if p]
    if not recs:
        return None
    out: dict = {}
    for rec in recs:
        for cond, d in rec.items():
            out.setdefault(cond, {c: 0 for c in CLASSES})[d["class"]] += 1
    return out
