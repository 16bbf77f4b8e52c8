"""Finger identity swaps: landmark chains (manopth order) that exchange labels for some frames; refused inside
the replayed approach, flagged ``finger_swap`` after the lift onset."""

from __future__ import annotations

import itertools

import numpy as np

from replay.checks.frames import approach_window, index_runs
from replay.checks.hand_points import CHAINS
from replay.data.types import Recording
from replay.errors import DataError

#: least gap, in index -> pinky MCP line lengths, between the middle and ring MCPs and to either end
ORDER_MARGIN = 0.05
#: mm: a pair's summed bone misfit to its own medians below this is never called a swap
SWAP_MIN_MM = 3.0
MCP = {"index": 5, "middle": 9, "ring": 13, "pinky": 17}


def palm_order(L: np.ndarray) -> np.ndarray:
    """(T, 2) the middle and ring MCPs along the index -> pinky MCP line (0 index, 1 pinky), landmarks (T, 21, 3)."""
    a, b = L[:, MCP["index"]], L[:, MCP["pinky"]]
    d = b - a
    n2 = np.maximum(np.einsum("ij,ij->i", d, d), 1e-18)
    return np.stack([np.einsum("ij,ij->i", L[:, MCP[f]] - a, d) / n2 for f in ("middle", "ring")], axis=1)


def chain_bones(L: np.ndarray) -> dict[str, np.ndarray]:
    """Per finger, (T, 3) bone lengths (m) of its chain (:data:`CHAINS`)."""
    return {f: np.linalg.norm(np.diff(L[:, list(c)], axis=1), axis=2) for f, c in CHAINS.items()}


def swapped_frames(L: np.ndarray) -> tuple[np.ndarray, dict]:
    """(T,) bool frames whose chains look exchanged, and figures: middle and ring MCPs out of order across the palm
    (:data:`ORDER_MARGIN`), or two chains fitting each other's median bone lengths better than their own (below half
    the identity's misfit, itself >= :data:`SWAP_MIN_MM`)."""
    L = np.asarray(L, float)
    fin = np.all(np.isfinite(L.reshape(len(L), -1)), axis=1)
    Lf = np.where(fin[:, None, None], L, 0.0)
    t = palm_order(Lf)
    bad_order = fin & ((t[:, 0] < -ORDER_MARGIN) | (t[:, 1] > 1 + ORDER_MARGIN) | (t[:, 1] - t[:, 0] < ORDER_MARGIN))
    bones = chain_bones(Lf)
    ref = {f: np.median(b[fin], axis=0) if fin.any() else np.zeros(3) for f, b in bones.items()}
    bad_len = np.zeros(len(L), bool)
    pair_counts: dict[str, int] = {}
    for fa, fb in itertools.combinations(CHAINS, 2):
        ident = (np.abs(bones[fa] - ref[fa]).sum(1) + np.abs(bones[fb] - ref[fb]).sum(1)) * 1000
        swap = (np.abs(bones[fa] - ref[fb]).sum(1) + np.abs(bones[fb] - ref[fa]).sum(1)) * 1000
        hit = fin & (ident >= SWAP_MIN_MM) & (swap < 0.5 * ident)
        if hit.any():
            pair_counts[f"{fa}-{fb}"] = int(hit.sum())
        bad_len |= hit
    gap = t[fin, 1] - t[fin, 0]
    figs = {
        "min_order_gap": round(float(gap.min()), 3) if gap.size else None,
        "order_frames": int(bad_order.sum()),
        "length_frames": int(bad_len.sum()),
    }
    if pair_counts:
        figs["pairs"] = pair_counts
    return bad_order | bad_len, figs


def _runs(idx: np.ndarray) -> str:
    """``"400-460, 900"``: frame runs of sorted indices."""
    out = [f"{a}-{b}" if b != a else f"{a}" for a, b in index_runs(idx)]
    return ", ".join(out[:6]) + (f" (+{len(out) - 6} more)" if len(out) > 6 else "")


def check_finger_swap(rec: Recording) -> tuple[dict, dict]:
    """(flag ``finger_swap`` after the lift onset, figures); empty without landmarks. Raises DataError (field
    ``landmarks``): swapped frames inside the replayed approach, named."""
    if rec.landmarks is None:
        return {}, {}
    bad, figs = swapped_frames(rec.landmarks)
    bad &= np.asarray(rec.valid, bool)
    figs["frames"] = int(bad.sum())
    if not bad.any():
        return {}, figs
    idx = np.flatnonzero(bad)
    which = "the MCPs out of order across the palm" if figs["order_frames"] else "bone lengths of another finger"
    pair = f" ({', '.join(figs['pairs'])})" if figs.get("pairs") else ""
    what = (
        f"finger landmark chains exchanged{pair} in {idx.size} frame(s): {_runs(idx)} ({which}: a tracker "
        "identity swap)"
    )
    s, g = approach_window(rec)
    inside = idx[(idx >= s) & (idx <= g)]
    if inside.size:
        raise DataError(
            rec.source,
            "landmarks",
            f"{what}; {inside.size} of them in the replayed approach "
            f"(frames {s}-{g}): refused: relabel the chains or drop the frames",
            cause="finger_swap",
        )
    return {"finger_swap": f"{what}, after the lift onset (frame {g}): only the recorded protocol replays them"}, figs
