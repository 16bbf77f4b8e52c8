"""The single contact runs behind docs/results/pad-opening.md: GRAB's lifts under the physics choice
``pad_deep_fingers`` off and on (and any other study beside them), per study the lifted count, how far the
object was pushed before the lift, and the wrist error; per recording the same with the fingers the pad
compression opened and closed.

Pushed: the rollout's ``grasp.pushed_mm`` (largest collision-vertex displacement, settled pose to lift start),
and from the rollout's poses the object origin's displacement at the last approach frame (the grasp frame)
from its pose at the end of the settle, mm.

    python benchmarks/pad_opening_study.py --study off=out/pad-opening/as_recorded/study.json \\
        --study on=out/pad-opening/opened/study.json --out docs/results/pad-opening-study.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from replay.protocol.plan import PHASE_APPROACH, PHASE_SETTLE


def _origin_at_grasp_mm(npz: Path) -> float:
    """Object origin displacement, mm, last approach frame minus last settle frame (the rollout's poses)."""
    d = np.load(npz)
    obj = list(d["body_names"]).index("object")
    ph = d["phase"]
    settle, app = np.flatnonzero(ph == PHASE_SETTLE), np.flatnonzero(ph == PHASE_APPROACH)
    if not settle.size or not app.size:
        return float("nan")
    p = d["body_pos"][:, obj]
    return float(np.linalg.norm(p[app[-1]] - p[settle[-1]]) * 1000.0)


def _study(path: Path) -> dict:
    doc = json.loads(path.read_text())
    rows = {}
    for r in doc["rollouts"]:
        rec = json.loads((path.parent / r["json"]).read_text())
        pad = rec["lift"].get("pad_compression") or {}
        rows[r["sequence"]] = {
            "lifted": bool(rec["lifted"]),
            "diagnosis": (rec.get("diagnosis") or {}).get("class"),
            "pushed_mm": rec["grasp"]["pushed_mm"],
            "origin_at_grasp_mm": _origin_at_grasp_mm(path.parent / rec["poses"]),
            "wrist_err_median_mm": rec["grasp"]["wrist_err_median_mm"],
            "fingers_opened": pad.get("fingers_opened", []),
            "fingers_closed": pad.get("fingers_closed", []),
        }
    pushed = [x["pushed_mm"] for x in rows.values()]
    origin = [x["origin_at_grasp_mm"] for x in rows.values()]
    physics = {
        r["name"]: r["value"] for r in json.loads((path.parent / doc["rollouts"][0]["json"]).read_text())["physics"]
    }
    return {
        "study": str(path),
        "physics": doc["config"].get("physics"),
        "pad_deep_fingers": physics["pad_deep_fingers"],
        "pad_compression": physics["pad_compression"],
        "hand_shape": physics["hand_shape"],
        "recordings": len(rows),
        "lifted": sum(x["lifted"] for x in rows.values()),
        "pushed_mm_median": float(np.median(pushed)),
        "pushed_over_10mm": int(sum(p > 10.0 for p in pushed)),
        "origin_at_grasp_mm_median": float(np.nanmedian(origin)),
        "origin_at_grasp_over_10mm": int(sum(p > 10.0 for p in origin)),
        "wrist_err_median_mm": float(np.median([x["wrist_err_median_mm"] for x in rows.values()])),
        "per_recording": rows,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", action="append", required=True, help="LABEL=path/to/study.json (repeatable)")
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args(argv)
    out = {}
    for s in a.study:
        label, _, path = s.partition("=")
        out[label] = _study(Path(path))
        o = out[label]
        print(
            f"{label}: lifted {o['lifted']}/{o['recordings']}, pushed median {o['pushed_mm_median']:.1f} mm "
            f"(> 10 mm: {o['pushed_over_10mm']}), origin at grasp median {o['origin_at_grasp_mm_median']:.1f} mm "
            f"(> 10 mm: {o['origin_at_grasp_over_10mm']}), wrist error median {o['wrist_err_median_mm']:.2f} mm"
        )
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
