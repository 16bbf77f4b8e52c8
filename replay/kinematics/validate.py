"""Pose-mapping validation, mm: FK against the recording's 21 landmarks or MANO's five tip vertices (TACO)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from replay.data.types import LANDMARK_FINGER, LANDMARK_NAMES, TIP_LANDMARKS, Recording
from replay.errors import DataError
from replay.kinematics.coords import complete_hand, load_kinematics
from replay.kinematics.ik import IKOptions
from replay.kinematics.mano import MANO_TIP_VERTICES

FINGERS = ("wrist", "thumb", "index", "middle", "ring", "pinky")


@dataclass
class SequenceErrors:
    """Landmark errors of one recording: ``errors`` (F, 21) mm at ``frames`` (F,), NaN where a landmark has no
    reference; ``reference`` ``"landmarks"`` or ``"mano_tip_vertices"``; ``info`` its ``meta["kinematics"]``."""

    dataset: str
    name: str
    reference: str
    frames: np.ndarray
    errors: np.ndarray
    info: dict


def sequence_errors(
    rec: Recording,
    mjcf_path: str | Path | None = None,
    ik_options: IKOptions | None = None,
    *,
    window: tuple[int, int] | None = None,
    cache: bool | str | Path = True,
    check_reading: bool = True,
) -> SequenceErrors:
    """``rec``'s hand completed and measured against its points over ``window``; ``check_reading``: MANO's other
    reading too. DataError as :func:`complete_hand`, or no reference."""
    done = complete_hand(rec, mjcf_path, ik_options=ik_options, window=window, cache=cache)
    kin = load_kinematics(done.meta["kinematics"]["mjcf"], side=done.hand_side)
    T = done.num_frames
    start, stop = (0, T) if window is None else (max(0, window[0]), min(T, window[1]))
    frames = np.arange(start, stop)[done.valid[start:stop]]
    L = kin.fk_landmarks(done.wrist_pos[frames], done.wrist_quat[frames], done.finger_quat[frames])
    err = np.full((len(frames), 21), np.nan)
    if rec.landmarks is not None:
        ref = "landmarks"
        err[:] = np.linalg.norm(L - rec.landmarks[frames], axis=-1) * 1000.0
    elif rec.mano is not None and rec.mano.vertices is not None:
        ref = "mano_tip_vertices"
        tips = np.asarray(rec.mano.vertices, dtype=np.float64)[frames][:, list(MANO_TIP_VERTICES)]
        err[:, list(TIP_LANDMARKS)] = np.linalg.norm(L[:, list(TIP_LANDMARKS)] - tips, axis=-1) * 1000.0
    else:
        raise DataError(rec.source, "landmarks", "no reference to validate against (no landmarks, no MANO vertices)")
    info = dict(done.meta["kinematics"])
    if rec.mano is not None and check_reading:
        flat = info["flat_hand_mean"]
        alt_rec = dataclasses.replace(rec, mano=dataclasses.replace(rec.mano, flat_hand_mean=not flat))
        alt = complete_hand(alt_rec, mjcf_path, window=window, cache=cache, check_fit=False)
        La = kin.fk_landmarks(alt.wrist_pos[frames], alt.wrist_quat[frames], alt.finger_quat[frames])
        if ref == "landmarks":
            ea = np.linalg.norm(La - rec.landmarks[frames], axis=-1)
        else:
            ea = np.linalg.norm(La[:, list(TIP_LANDMARKS)] - tips, axis=-1)
        info["reading_check"] = {
            "used": "flat" if flat else "mean",
            "used_median_mm": float(np.nanmedian(err)),
            "other": "mean" if flat else "flat",
            "other_median_mm": float(np.median(ea) * 1000.0),
        }
    return SequenceErrors(rec.dataset, rec.name, ref, frames, err, info)


def _stats(x: np.ndarray) -> dict | None:
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None
    return {
        "n": int(x.size),
        "median_mm": round(float(np.median(x)), 3),
        "p90_mm": round(float(np.percentile(x, 90)), 3),
        "max_mm": round(float(np.max(x)), 3),
    }


def summarize(seqs: list[SequenceErrors], worst: int = 10) -> dict:
    """Per-dataset, per-sequence and overall statistics, mm, JSON-ready; ``worst_frames`` by mean landmark error."""
    out: dict = {"datasets": {}, "sequences": []}
    groups: dict[str, list[SequenceErrors]] = {}
    for s in seqs:
        groups.setdefault(s.dataset, []).append(s)
        out["sequences"].append(
            {
                "dataset": s.dataset,
                "name": s.name,
                "reference": s.reference,
                "frames": int(len(s.frames)),
                "all": _stats(s.errors),
                "mapping": s.info,
            }
        )

    def block(group: list[SequenceErrors]) -> dict:
        E = np.concatenate([s.errors for s in group]) if group else np.zeros((0, 21))
        b = {"frames": int(E.shape[0]), "references": sorted({s.reference for s in group}), "all": _stats(E)}
        b["per_landmark"] = {LANDMARK_NAMES[k]: _stats(E[:, k]) for k in range(21)}
        b["per_finger"] = {f: _stats(E[:, [k for k in range(21) if LANDMARK_FINGER[k] == f]]) for f in FINGERS}
        rows = []
        for s in group:
            with np.errstate(all="ignore"):
                m = np.nanmean(s.errors, axis=1)
            for i in np.argsort(-np.nan_to_num(m, nan=-1))[:worst]:
                k = int(np.nanargmax(s.errors[i]))
                rows.append(
                    {
                        "sequence": s.name,
                        "frame": int(s.frames[i]),
                        "mean_mm": round(float(m[i]), 3),
                        "max_mm": round(float(s.errors[i, k]), 3),
                        "worst_landmark": LANDMARK_NAMES[k],
                    }
                )
        b["worst_frames"] = sorted(rows, key=lambda r: -r["mean_mm"])[:worst]
        return b

    for name, group in groups.items():
        out["datasets"][name] = block(group)
    out["overall"] = block(seqs)
    return out


def plot_finger_errors(seqs: list[SequenceErrors], path: str | Path, title: str = "") -> Path:
    """Box plot (whiskers 5-95 %) of landmark error per finger, one panel per dataset; PNG at ``path``."""
    matplotlib.use("Agg")

    groups: dict[str, list[SequenceErrors]] = {}
    for s in seqs:
        groups.setdefault(s.dataset, []).append(s)
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 4.2), squeeze=False)
    for ax, (name, group) in zip(axes[0], groups.items()):
        E = np.concatenate([s.errors for s in group])
        data, labels = [], []
        for f in FINGERS:
            x = E[:, [k for k in range(21) if LANDMARK_FINGER[k] == f]].ravel()
            x = x[np.isfinite(x)]
            if x.size:
                data.append(x)
                labels.append(f"{f}\n(med {np.median(x):.1f})")
        ax.boxplot(data, whis=(5, 95), showfliers=False)
        ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=8)
        ref = "/".join(sorted({s.reference for s in group}))
        ax.set_title(f"{name}: {len(group)} seq, {E.shape[0]} frames\nvs {ref}", fontsize=9)
        ax.set_ylabel("landmark error [mm]")
        ax.grid(axis="y", alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
