"""The figures behind docs/results/pad-opening.md (the physics choice ``pad_deep_fingers``): on
GRAB's lifts, how many fingers the pad compression opens and closes at the grasp frame and over the approach, on
the real grasps and on the corrupted ones (``fingers_open_20deg``: solved on the opened pose as the sampled verdict
does; ``wrist_offset_2cm`` moves the solved hand, so its fingers are the real grasp's), at the centre of the
declared depth and at its ends; whether a proximal capsule is ever the deepest; and what the opening costs per
recording (the depth table of each finger pose, then one read per world).

    python benchmarks/pad_opening.py --data $REPLAY_MIRROR --hand-shape fitted --out docs/results/pad-opening.json
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import mujoco
import numpy as np

from replay.config import ReplayConfig
from replay.data.locate import dataset_dir
from replay.protocol import release
from replay.protocol.finger_closure import closed_targets, flexion_axes, ramp
from replay.protocol.lift_plan import plan_rollout
from replay.protocol.pad_compression import PadPlan
from replay.sim import physics
from replay.sim.hand_assets import resolve_hand_variant
from replay.study.corruptions import FINGERS_OPEN_DEG
from replay.study.prepare import prepare_recording

#: worlds read per finger pose in the cost figure (the sampled verdict's 64+ per recording)
WORLDS = 64


def _axes(mjcf) -> np.ndarray:
    m = mujoco.MjModel.from_xml_path(str(mjcf))
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"mano_body_{b}") for b in range(16)]
    return flexion_axes(np.asarray(m.body_pos)[ids])


def _counts(res: dict) -> dict:
    f = res["fingers"]
    return {
        "near": sorted(n for n, x in f.items() if x["status"] != "far"),
        "closed": res["fingers_closed"],
        "opened": res["fingers_opened"],
        "opened_approach": res["fingers_opened_approach"],
        "unreached": sorted(n for n, x in f.items() if x["status"] == "unreached"),
        "max_opening_deg": res["max_opening_deg"],
    }


def _recording(rec, coords, mjcf, cfg, depths) -> dict:
    plan = plan_rollout(rec, coords, cfg)
    plan = release.extend_plan(
        plan, plan.coords[0], cfg.frame_dt, release_s=cfg.lift.release_s, fall_s=cfg.lift.release_fall_s
    )
    centre = float(physics.choice_value(cfg, "pad_compression"))
    pad = PadPlan.build(rec, coords, mjcf, cfg=cfg, plan=plan, depth_mm=centre, open_deep=True)
    opened = closed_targets(
        pad.raw,
        (-math.radians(FINGERS_OPEN_DEG),) * 5,
        _axes(mjcf),
        weight=ramp(plan, cfg.replay_speed, cfg.frame_dt, release_s=cfg.lift.release_s),
    )
    out, cost = {}, {}
    for name, fingers in (("real", pad.raw), ("fingers_open", opened)):
        t0 = time.perf_counter()
        tab = pad.table(fingers)[0]
        t1 = time.perf_counter()
        for d in np.random.default_rng(0).uniform(depths[0], depths[-1], WORLDS):
            pad.compressed(float(d), fingers, figures=False)
        cost[name] = {"table_s": t1 - t0, "reads_s": time.perf_counter() - t1}
        out[name] = {f"{d:g}": _counts(pad.compressed(d, fingers)[1]) for d in depths}
        # the proximal capsule nearer than the pad and inside the object: frames x fingers
        out[name]["proximal_deepest_inside"] = int(np.sum((tab.near < tab.pad0) & (tab.near < 0)))
    return {"pad": out, "cost": cost}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, type=Path, help="the mirror (REPLAY_MIRROR)")
    ap.add_argument("--hand-shape", default=None, help="the physics choice hand_shape (default: the dataset's)")
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args(argv)
    cfg = ReplayConfig()
    if a.hand_shape:
        cfg.physics_overrides = {"hand_shape": a.hand_shape}
    cfg = resolve_hand_variant(cfg, "grab")
    row = physics.table(cfg.physics)["pad_compression"]
    depths = (row.spread[0], float(row.value), row.spread[1])
    per = {}
    for pkl in sorted((a.data / "grab" / "recordings").glob("*_lift.pkl")):
        rec, coords, mjcf, _ = prepare_recording(
            "grab", pkl.stem, a.data, manosim_dir=dataset_dir("manosim", a.data), cfg=cfg
        )
        per[pkl.stem] = _recording(rec, coords, mjcf, cfg, depths)
        print(pkl.stem, json.dumps(per[pkl.stem]["pad"]["real"][f"{depths[1]:g}"]), per[pkl.stem]["cost"])
    totals = {
        k: {
            f"{d:g}": {
                n: sum(len(p["pad"][k][f"{d:g}"][n]) for p in per.values())
                for n in ("near", "closed", "opened", "opened_approach", "unreached")
            }
            for d in depths
        }
        for k in ("real", "fingers_open")
    }
    tables = [c["table_s"] for p in per.values() for c in p["cost"].values()]
    reads = [c["reads_s"] / WORLDS for p in per.values() for c in p["cost"].values()]
    doc = {
        "command": "python benchmarks/pad_opening.py --data $REPLAY_MIRROR"
        + (f" --hand-shape {a.hand_shape}" if a.hand_shape else "")
        + " --out docs/results/pad-opening.json",
        "hand_shape": cfg.physics_overrides["hand_shape"],
        "depths_mm": list(depths),
        "wrist_offset_2cm": "the real grasp's fingers (the pad is solved on the recorded relation)",
        "totals": totals,
        "proximal_deepest_inside": {
            k: sum(p["pad"][k]["proximal_deepest_inside"] for p in per.values()) for k in ("real", "fingers_open")
        },
        "cost": {
            "table_s_median": float(np.median(tables)),
            "table_s_max": float(np.max(tables)),
            "read_per_world_s_median": float(np.median(reads)),
        },
        "recordings": per,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1))
    print("totals:", json.dumps(totals), "cost:", doc["cost"], "proximal:", doc["proximal_deepest_inside"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
